"""The dealer's memory of running hands (``games.poker.services.tables.hand_state``,
docs/poker.md, "Cards at rest"): it holds only what was committed. A hand's id is
its game number (RULES.md: ``CODE-YYYYMMDD-HHMMSS``), unique among the recorded
hands, but a hand dealt in a transaction that is rolled back was never recorded:
its number goes to the next hand its table code deals in that second. (On SQLite
the rolled-back ids come back too, and with a tournament's id its tables' codes:
the tournaments of tests/poker/test_tournament_play.py played one another's
hands there.)"""

from __future__ import annotations

import pytest
from django.db import transaction

from games.poker import services
from games.poker.models import PokerHand, PokerTable
from tests.poker.tables import act, advance, make_player, make_table, seat_balance, sit

pytestmark = pytest.mark.django_db


class RolledBack(Exception):
    pass


def dealt_heads_up(code: str, buy_in: int) -> tuple[PokerTable, PokerHand]:
    """A table ``code`` (blinds 5/10) where two new players sat down with ``buy_in`` at
    ``T0``, its first hand dealt at its deadline (the same second for every such table)."""
    table = make_table(code=code)
    for seat in (1, 2):
        sit(table, make_player(), seat, buy_in)
    table = advance(table)
    return table, PokerHand.objects.get(hand_id=table.current_hand_id)


def dealt_read_and_rolled_back(code: str, buy_in: int) -> tuple[str, int]:
    """``dealt_heads_up``, the dealer's read of the hand (as before a player's action),
    all in a transaction that is rolled back. Returns the hand's number and version."""
    seen: list[tuple[str, int]] = []

    def deal_and_read() -> None:
        with transaction.atomic():
            _, hand = dealt_heads_up(code, buy_in)
            services.hand_state(hand)
            seen.append((hand.hand_id, hand.stream_version))
            raise RolledBack

    with pytest.raises(RolledBack):
        deal_and_read()
    return seen[0]


def test_a_hand_read_in_a_rolled_back_transaction_is_not_taken_for_the_next_hand_with_its_number() -> None:
    number, version = dealt_read_and_rolled_back("RB", 1_000)
    assert not PokerHand.objects.filter(hand_id=number).exists()
    table, hand = dealt_heads_up("RB", 1_500)
    assert (hand.hand_id, hand.stream_version) == (number, version)  # the same game number, as far on
    state, _ = services.hand_state(hand)
    assert state is not None
    # This hand's players, with this hand's chips: heads-up the button posts the small blind (5), the other 10.
    assert {player.player_id for player in state.players} == {str(p) for p in hand.players.values()}
    assert sorted(player.stack for player in state.players) == [1_490, 1_495]
    assert state.acting_seat == state.button  # heads-up the button acts first before the flop
    button_player = int(hand.players[str(state.button)])
    called = act(table, button_player, "call")
    assert (called.seat_number, called.amount, called.stack) == (state.button, 5, 1_490)
    assert seat_balance(table, button_player) == 1_490
