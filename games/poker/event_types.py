"""Event types of poker tables and hands (catalogue: docs/events.md, "Poker table" and "Poker hand").

Hand streams ``poker-hand-{hand_id}`` carry the engine's ``poker.*`` events
(``games.poker.engine.events``) plus the dealer's own: the shuffled deck
(its commitment, and the salt and deck sealed: ``games.tables.fairness``), each
turn with its deadline, and timeouts; and the operator's malfunction controls
(paused, resumed, voided), which are not engine events either. Table streams ``poker-table-{id}`` carry
the seat events; tournament streams ``poker-tournament-{id}`` the registrations,
the play and the cancellations. Every poker read table is a projection of these
streams (``games.poker.projectors``, ``games.poker.tournament.projectors``).
"""

from __future__ import annotations

from games.poker.engine.events import EVENT_TYPES as ENGINE_EVENT_TYPES
from games.tables.fairness import SEALED_FIELD, sealed_in_clear
from ledger.confidential import register_confidential
from ledger.upcasting import Data, register_event_type, upcaster

SAT_DOWN = "poker_table.sat_down"
TOPPED_UP = "poker_table.topped_up"
STOOD_UP = "poker_table.stood_up"
SAT_OUT = "poker_table.sat_out"
SAT_IN = "poker_table.sat_in"

SHUFFLED = "poker_hand.shuffled"
TURN = "poker_hand.turn"
TIMED_OUT = "poker_hand.timed_out"
BUTTON_DRAWN = "poker_hand.button_drawn"
# The leaves of every card the table saw, recorded when the hand ends, just before its deal key is shredded.
CARDS_REVEALED = "poker_hand.cards_revealed"

PAUSED = "poker_hand.paused"
RESUMED = "poker_hand.resumed"
VOIDED = "poker_hand.voided"

TOURNAMENT_REGISTERED = "poker_tournament.registered"
TOURNAMENT_UNREGISTERED = "poker_tournament.unregistered"
TOURNAMENT_CANCELLED = "poker_tournament.cancelled"
TOURNAMENT_STARTED = "poker_tournament.started"
TOURNAMENT_LATE_SEATED = "poker_tournament.late_seated"
TOURNAMENT_LEVEL = "poker_tournament.level_started"
TOURNAMENT_ELIMINATED = "poker_tournament.eliminated"
# The players a step finds with no chips left: out, their seats freed (the
# group's ``eliminated`` may come later: in hand-for-hand play, at the round's end).
TOURNAMENT_BUSTED = "poker_tournament.busted"
TOURNAMENT_MOVED = "poker_tournament.player_moved"
TOURNAMENT_TABLE_BROKEN = "poker_tournament.table_broken"
TOURNAMENT_FINAL_TABLE = "poker_tournament.final_table"
TOURNAMENT_HAND_FOR_HAND = "poker_tournament.hand_for_hand"
TOURNAMENT_FINISHED = "poker_tournament.finished"
TOURNAMENT_PAUSED = "poker_tournament.paused"
TOURNAMENT_RESUMED = "poker_tournament.resumed"
TOURNAMENT_PAID = "poker_tournament.paid"
TOURNAMENT_TABLES_CLOSED = "poker_tournament.tables_closed"

TABLE_EVENT_TYPES = (SAT_DOWN, TOPPED_UP, STOOD_UP, SAT_OUT, SAT_IN)
DEALER_EVENT_TYPES = (SHUFFLED, BUTTON_DRAWN, TURN, TIMED_OUT, CARDS_REVEALED)
OPERATOR_EVENT_TYPES = (PAUSED, RESUMED, VOIDED)
TOURNAMENT_EVENT_TYPES = (
    TOURNAMENT_REGISTERED,
    TOURNAMENT_UNREGISTERED,
    TOURNAMENT_CANCELLED,
    TOURNAMENT_STARTED,
    TOURNAMENT_LATE_SEATED,
    TOURNAMENT_LEVEL,
    TOURNAMENT_ELIMINATED,
    TOURNAMENT_BUSTED,
    TOURNAMENT_MOVED,
    TOURNAMENT_TABLE_BROKEN,
    TOURNAMENT_FINAL_TABLE,
    TOURNAMENT_HAND_FOR_HAND,
    TOURNAMENT_FINISHED,
    TOURNAMENT_PAUSED,
    TOURNAMENT_RESUMED,
    TOURNAMENT_PAID,
    TOURNAMENT_TABLES_CLOSED,
)

for _type in (
    *TABLE_EVENT_TYPES,
    *TOURNAMENT_EVENT_TYPES,
    *DEALER_EVENT_TYPES,
    *OPERATOR_EVENT_TYPES,
    *ENGINE_EVENT_TYPES,
):
    register_event_type(_type, 1)
# Schema 2: the deck committed and sealed (games.tables.fairness) instead of in the clear.
SHUFFLED_SCHEMA = 2
register_event_type(SHUFFLED, SHUFFLED_SCHEMA)
register_confidential(SHUFFLED, SEALED_FIELD)
# Schema 2: the hole cards sealed for the seat's player (``sealed``), ``cards`` unknown
# (games.poker.services.cards). Schema 1 (legacy hands) had the cards in the clear: read as recorded.
HOLE_CARDS = "poker.hole_cards_dealt"
HOLE_CARDS_SCHEMA = 2
register_event_type(HOLE_CARDS, HOLE_CARDS_SCHEMA)
register_confidential(HOLE_CARDS, "sealed")


@upcaster(HOLE_CARDS, 1)
def _hole_cards_v1_to_v2(data: Data) -> Data:
    """v1 recorded the cards in the clear (hands dealt before issue #33): kept as they are."""
    return dict(data)


@upcaster(SHUFFLED, 1)
def _shuffled_v1_to_v2(data: Data) -> Data:
    """v1 kept the ``deck`` in the clear, with no salt or commitment: upcast,
    it is a deck sealed in the clear with ``"commitment": None`` (nothing to
    verify; ``deal_not_committed``)."""
    rest = {key: value for key, value in data.items() if key != "deck"}
    return {"commitment": None, SEALED_FIELD: sealed_in_clear(data["deck"]), **rest}


TABLE_STREAM_PREFIX = "poker-table-"
TOURNAMENT_STREAM_PREFIX = "poker-tournament-"


def table_stream(table_id: int) -> str:
    return f"{TABLE_STREAM_PREFIX}{table_id}"


def hand_stream(hand_id: str) -> str:
    return f"poker-hand-{hand_id}"


def tournament_stream(tournament_id: int) -> str:
    return f"{TOURNAMENT_STREAM_PREFIX}{tournament_id}"
