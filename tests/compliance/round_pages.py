"""Rounds for the tests of the rounds' admin pages (issue 36, part 2): a UTH
round dealt from known cards with one player, ``demo``, who bets Ante (and its
automatic Ante Plus) and Best Five, raises 4x before the flop and wins with a
pair of aces against a dealer who does not qualify.

Each test gives its tables codes of their own: a round's id is its table's code
and the (fixed) opening time, and this process caches rounds' states by id
(``games.house.store.cache``) across tests."""

from __future__ import annotations

from typing import Any

from games.house.models import HouseRound
from games.house.round.events import SHUFFLED
from games.house.services import make_decision, place_chip
from games.house.store import round_stream
from tests.compliance.hidden_cards import opened_deck
from tests.house.services.conftest import key, later, make_player, make_table, open_round, play_out, shoe, step

PLAYER_HAND, DEALER, BOARD = ("As", "Kd"), ("2c", "3c"), ("Ah", "7d", "9s", "Jc", "4h")
ANTE, BEST_FIVE = 1_000, 500  # 10.00 EUR, 5.00 EUR
SUIT_SYMBOLS = {"h": "♥", "d": "♦", "c": "♣", "s": "♠"}


def face(card: str) -> str:
    """A card as the page draws it: rank and suit symbol (``Th`` -> ``10♥``)."""
    return ("10" if card[0] == "T" else card[0]) + SUIT_SYMBOLS[card[1]]


def round_in_play(code: str) -> tuple[Any, int, Any, HouseRound, set[str]]:
    """The round dealt, its pre-flop decision open: table, player, tick, round row
    and the cards the table has not seen (all but the shared hand)."""
    table = make_table("uth", code=code)
    demo = make_player(table, name="demo")
    tick = open_round(table, shoe_cards=shoe(" ".join(PLAYER_HAND), dealer=" ".join(DEALER), board=" ".join(BOARD)))
    for spot, amount in (("ante", ANTE), ("best_five", BEST_FIVE)):
        place_chip(table_id=table.pk, player_id=demo, spot=spot, amount=amount, idempotency_key=key(), now=later(tick))
    tick = step(table, tick)
    assert tick.phase == "preflop", tick.phase
    deck = opened_deck(stream_id=round_stream(tick.round_id), shuffled_type=SHUFFLED,
                       deal_id=f"house-round:{tick.round_id}")  # fmt: skip
    hidden = set(deck) - set(PLAYER_HAND)
    assert set(DEALER) | set(BOARD) <= hidden
    return table, demo, tick, HouseRound.objects.get(round_id=tick.round_id), hidden


def raise_and_finish(table: Any, demo: int, tick: Any) -> Any:
    """``demo`` raises 4x before the flop; the round plays out to its end."""
    make_decision(table_id=table.pk, player_id=demo, option="call4x", idempotency_key=key(), now=later(tick))
    tick = play_out(table, tick)
    return tick


def finished_round(code: str) -> tuple[HouseRound, int]:
    """``round_in_play`` with its raise, played to its end: the settled round and ``demo``."""
    table, demo, tick, round_row, _ = round_in_play(code)
    raise_and_finish(table, demo, tick)
    round_row.refresh_from_db()
    assert round_row.status == "settled"
    return round_row, demo


def empty_round(code: str) -> HouseRound:
    """A round dealt at a table where nobody bet, played out (closed: no bets)."""
    table = make_table("uth", code=code)
    tick = play_out(table, open_round(table))
    assert tick.phase in ("between", "idle")
    return HouseRound.objects.get(table=table)
