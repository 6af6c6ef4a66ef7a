"""House-banked round and seat event types (catalogue: docs/events.md, "House-banked round")."""

from __future__ import annotations

from games.house.round.events import (
    CARDS_DEALT,
    CARDS_DEALT_SCHEMA,
    PLAYER_EVENT_TYPES,
    PLAYER_SETTLED,
    PLAYER_SETTLED_SCHEMA,
    ROUND_EVENT_TYPES,
    SHUFFLED,
)
from games.tables.fairness import SEALED_FIELD
from ledger.confidential import register_confidential
from ledger.upcasting import Data, register_event_type, upcaster

POOL_SEEDED = "house_pool.seeded"
# A player's seat at a table: ``taken`` (``seat_number``: per-seat tables, else
# None; ``at``: when), ``left``. One stream per (table, player), so joins of
# different players at one table never contend on a stream version.
SEAT_TAKEN = "house_seat.taken"
SEAT_LEFT = "house_seat.left"
SEAT_EVENT_TYPES = (SEAT_TAKEN, SEAT_LEFT)
SEAT_STREAM_PREFIX = "house-seat-"


def seat_stream(table_id: int, player_id: int) -> str:
    """The stream of one player's seat at one table (``house-seat-{table}-{player}``)."""
    return f"{SEAT_STREAM_PREFIX}{table_id}-{player_id}"


for _type in (*ROUND_EVENT_TYPES, *PLAYER_EVENT_TYPES, POOL_SEEDED, *SEAT_EVENT_TYPES):
    register_event_type(_type, 1)
register_event_type(PLAYER_SETTLED, PLAYER_SETTLED_SCHEMA)
register_event_type(CARDS_DEALT, CARDS_DEALT_SCHEMA)
register_confidential(SHUFFLED, SEALED_FIELD)


@upcaster(PLAYER_SETTLED, 1)
def _player_settled_v1_to_v2(data: Data) -> Data:
    """v1 had no ``wagers``: each wager's settlement was its own
    ``house_wager.settled`` event just before it in the player's stream. v2
    carries them inside; an upcast v1 says ``"wagers": None`` (look in the
    stream), since an upcaster sees one event, not its neighbours."""
    return {**data, "wagers": None}


@upcaster(CARDS_DEALT, 1)
def _cards_dealt_v1_to_v2(data: Data) -> Data:
    """v1 listed every card in the clear, in the order it left the deck (its
    i-th card is deck position i). v2 names each card's ``deck_position`` and
    leaves the face-down cards out; an upcast v1 keeps the cards it stored (the
    stored event is never rewritten), so its face-down ones still carry ``card``."""
    return {**data, "cards": [{**card, "deck_position": i} for i, card in enumerate(data["cards"])]}
