"""Issue #20: a player who folds, stands up and sits down again during the same
hand. The new seat is not in the hand (it was taken after the deal): the hand's
steps must leave its stack alone, so every seat's stack stays equal to the
balance of its ``poker_seat`` ledger account."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from games.poker import services
from games.poker.models import PokerHand, PokerHandPlayer, PokerSeat, PokerTable
from tests.db import ledger_sums
from tests.poker.tables import T0, act, advance, deck, key, make_player, make_table, refused, seat_balance, sit, wallet

pytestmark = pytest.mark.django_db

# Button on seat 1: seat 2 small blind, seat 3 big blind, seat 1 acts first.
AA_VS_KK = deck("2c", "As", "Ks", "7d", "Ah", "Kh", "5c", "3h", "8s", "9d", "6c", "Jc", "6d", "4s")


def three_handed() -> tuple[PokerTable, list[int]]:
    table = make_table()
    players = [make_player() for _ in range(3)]
    for number, player in enumerate(players, start=1):
        sit(table, player, number)
    PokerTable.objects.filter(pk=table.pk).update(button_seat=3)  # the first hand's button moves to seat 1
    return advance(table, cards=AA_VS_KK), players


def assert_stacks_equal_ledger(table: PokerTable) -> None:
    seats = {s.player_id: s.stack for s in PokerSeat.objects.filter(table=table)}
    assert seats == {player: seat_balance(table, player) for player in seats}
    assert ledger_sums() == {"EUR": 0}


def leave(table: PokerTable, player: int) -> int:
    return services.stand_up(table_id=table.pk, player_id=player, idempotency_key=key(), now=T0).moved


def fold_and_rejoin(table: PokerTable, player: int, seat: int, buy_in: int, *, at: datetime = T0) -> None:
    """The player folds, stands up and sits down at ``seat`` during the same hand."""
    act(table, player, "fold", at=at)
    leave(table, player)
    sit(table, player, seat, buy_in=buy_in, at=at)


@pytest.mark.parametrize("new_seat", [4, 1], ids=["another_seat", "the_same_seat_number"])
def test_rejoining_mid_hand_keeps_the_new_stack(new_seat: int) -> None:
    table, (p1, p2, p3) = three_handed()
    act(table, p1, "fold")
    assert leave(table, p1) == 1_000
    sit(table, p1, new_seat, buy_in=500)
    act(table, p2, "call")  # the next step of the hand p1 folded in
    assert PokerSeat.objects.get(table=table, player_id=p1).stack == 500
    assert_stacks_equal_ledger(table)
    # The new seat is not in the hand: it cannot act in it ...
    refused("poker_not_in_hand", lambda: act(table, p1, "check"))
    act(table, p3, "check")  # preflop closed; flop
    for player in (p2, p3, p2, p3, p2, p3):
        act(table, player, "check")
    assert PokerHand.objects.get(hand_id=table.current_hand_id).status == "complete"
    assert_stacks_equal_ledger(table)
    # ... and cashes out exactly its buy-in.
    assert leave(table, p1) == 500
    assert wallet(p1) == 100_000
    assert_stacks_equal_ledger(table)


def test_the_rejoined_seat_is_dealt_into_the_next_hand_with_its_buy_in() -> None:
    table, (p1, p2, _p3) = three_handed()
    fold_and_rejoin(table, p1, 4, 300)
    act(table, p2, "fold")  # the big blind wins; the hand is over
    assert_stacks_equal_ledger(table)
    table = advance(table, cards=AA_VS_KK)
    hand = PokerHand.objects.get(hand_id=table.current_hand_id)
    assert hand.players["4"] == p1
    assert hand.participants.get(player_id=p1).stack_before == 300
    assert_stacks_equal_ledger(table)


def test_a_seat_taken_after_the_deal_may_top_up_during_the_hand() -> None:
    table, (p1, p2, _p3) = three_handed()
    fold_and_rejoin(table, p1, 4, 300)
    services.top_up(table_id=table.pk, player_id=p1, amount=200, idempotency_key=key(), now=T0)
    act(table, p2, "call")
    assert PokerSeat.objects.get(table=table, player_id=p1).stack == 500
    assert_stacks_equal_ledger(table)


def test_a_void_after_a_rejoin_refunds_the_folded_stake_to_the_wallet() -> None:
    """The seat dealt in is gone (the player left it): what they put into the
    hand goes back to their wallet, not to the seat taken after the deal."""
    table, (p1, p2, p3) = three_handed()
    act(table, p1, "raise", 30)
    act(table, p2, "call")
    act(table, p3, "call")
    act(table, p2, "check")  # flop
    act(table, p3, "check")
    act(table, p1, "fold")
    assert leave(table, p1) == 970
    sit(table, p1, 5, buy_in=400)
    services.void_hand(table_id=table.pk, actor="user:ops", reason="shuffler jam", now=T0)
    assert wallet(p1) == 100_000 - 400
    assert PokerSeat.objects.get(table=table, player_id=p1).stack == 400
    assert {s.player_id: s.stack for s in PokerSeat.objects.filter(table=table).exclude(player_id=p1)} == {
        p2: 1_000,
        p3: 1_000,
    }
    assert_stacks_equal_ledger(table)


def test_the_migration_links_hands_to_the_seats_still_taken() -> None:
    """Migration 0009 fills ``PokerHandPlayer.seat`` for rows written before it:
    hands since a seat was taken are that seat's; a hand before a rejoin is not."""
    from importlib import import_module

    from django.apps import apps

    table, (p1, p2, _p3) = three_handed()
    first_hand = table.current_hand_id
    assert table.deadline is not None
    started = table.deadline - timedelta(seconds=table.turn_seconds)
    fold_and_rejoin(table, p1, 4, 300, at=started + timedelta(seconds=1))
    act(table, p2, "fold", at=started + timedelta(seconds=3))
    table = advance(table, cards=AA_VS_KK)
    second_hand = table.current_hand_id
    linked = {(row.hand.hand_id, row.player_id): row.seat_id for row in PokerHandPlayer.objects.all()}
    assert linked[(first_hand, p1)] is None  # that seat was freed
    PokerHandPlayer.objects.update(seat=None)
    import_module("games.migrations.0001_squashed_0016_deal_keys").link_dealt_in_seats(apps, None)
    assert {(row.hand.hand_id, row.player_id): row.seat_id for row in PokerHandPlayer.objects.all()} == linked
    assert linked[(second_hand, p1)] == PokerSeat.objects.get(table=table, player_id=p1).pk
