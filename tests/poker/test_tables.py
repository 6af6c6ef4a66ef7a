"""Poker tables through the services: seats and chips through the ledger, a
full hand with seed 001's rake, pacing (turn timer, time bank, sit out,
reservation), refusals that change nothing (issue 7: "Tables", "Bad input")."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings

from casino.errors import DomainError
from games.poker import event_types as et
from games.poker import services
from games.poker.engine.rules import Variant, seed_rake_rule
from games.poker.models import PokerHand, PokerSeat, PokerTable
from games.poker.services.cards import open_deck
from ledger.services import balance_of, read_stream
from ledger.services.verify import verify_ledger
from tests.db import ledger_sums
from tests.poker.tables import (
    T0,
    act,
    advance,
    deck,
    key,
    make_player,
    make_table,
    play_the_raked_hand,
    refused,
    seat_balance,
    sit,
    snapshot,
    wallet,
)
from tools.verify_deal import merkle_root_of

pytestmark = pytest.mark.django_db

# Seats 2, 3, 1 in position order when the button is on seat 1: seat 2 small
# blind, seat 3 big blind. next_deal: position i gets deck[i] and deck[3 + i];
# then burn, flop, burn, turn, burn, river.
AA_VS_KK = deck("2c", "As", "Ks", "7d", "Ah", "Kh", "5c", "3h", "8s", "9d", "6c", "Jc", "6d", "4s")


def three_handed(**changes: object) -> tuple[PokerTable, list[int]]:
    table = make_table(**changes)
    players = [make_player() for _ in range(3)]
    for number, player in enumerate(players, start=1):
        sit(table, player, number)
    # The button was "on seat 3" before: the first hand's button moves to seat 1.
    PokerTable.objects.filter(pk=table.pk).update(button_seat=3)
    table.refresh_from_db()
    return table, players


def test_sit_top_up_leave_move_chips_through_the_ledger() -> None:
    table = make_table()
    player = make_player(funds=5_000)
    sit(table, player, 4, buy_in=1_500)
    assert wallet(player) == 3_500
    assert seat_balance(table, player) == 1_500
    assert PokerSeat.objects.get(table=table, player_id=player).stack == 1_500
    result = services.top_up(table_id=table.pk, player_id=player, amount=500, idempotency_key=key(), now=T0)
    assert (result.stack, wallet(player), seat_balance(table, player)) == (2_000, 3_000, 2_000)
    left = services.stand_up(table_id=table.pk, player_id=player, idempotency_key=key(), now=T0)
    assert left.moved == 2_000
    assert wallet(player) == 5_000
    assert seat_balance(table, player) == 0
    assert not PokerSeat.objects.filter(table=table).exists()
    types = [e.type for e in read_stream(stream_id=et.table_stream(table.pk))]
    assert types == [et.SAT_DOWN, et.TOPPED_UP, et.STOOD_UP]
    assert ledger_sums() == {"EUR": 0}


def test_idempotent_sit_down_is_done_once() -> None:
    table = make_table()
    player = make_player(funds=5_000)
    k = key()
    first = services.sit_down(table_id=table.pk, player_id=player, seat_number=1, buy_in=1_000, idempotency_key=k,
                              now=T0)  # fmt: skip
    again = services.sit_down(table_id=table.pk, player_id=player, seat_number=1, buy_in=1_000, idempotency_key=k,
                              now=T0)  # fmt: skip
    assert first == again
    assert wallet(player) == 4_000


def test_a_full_hand_with_seed_001_rake() -> None:
    table, (p1, p2, p3) = three_handed()
    table = advance(table, cards=AA_VS_KK)  # deal
    hand = PokerHand.objects.get(hand_id=table.current_hand_id)
    assert table.button_seat == 1
    assert hand.actor_seat == 1
    assert hand.hand_id.startswith(f"{table.code}-20261122-1345")
    play_the_raked_hand(table, p1, p2, p3)
    hand.refresh_from_db()
    assert hand.status == "complete"
    # Seed 001: no limit, 2-3 players: 2.5 %, no minimum, cap 1.00 EUR.
    rule = seed_rake_rule(Variant.NO_LIMIT, players=3, small_blind=5)
    assert (rule.percent_bp, rule.minimum, rule.cap) == (250, 0, 100)
    pot = 90 + 120
    rake = pot * 250 // 10_000
    assert hand.rake == rake == 5
    assert balance_of(account_id=services.rake_account(table_id=table.pk, currency="EUR")) == 5
    assert balance_of(account_id=services.pot_account(hand_id=hand.hand_id, currency="EUR")) == 0
    expected = {p1: 1000 - 90, p2: 1000 - 30, p3: 1000 - 90 + pot - rake}
    for player, stack in expected.items():
        assert PokerSeat.objects.get(table=table, player_id=player).stack == stack
        assert seat_balance(table, player) == stack
    assert ledger_sums() == {"EUR": 0}
    # Hash chains, transfer causes and balances all check out.
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []
    table.refresh_from_db()
    assert table.phase == "between"


def test_no_flop_no_drop() -> None:
    table, (p1, p2, p3) = three_handed()
    table = advance(table, cards=AA_VS_KK)
    act(table, p1, "raise", 30)
    act(table, p2, "fold")
    act(table, p3, "fold")
    hand = PokerHand.objects.get(hand_id=table.current_hand_id)
    assert hand.status == "complete"
    assert hand.rake == 0
    assert PokerSeat.objects.get(table=table, player_id=p1).stack == 1000 + 15
    assert ledger_sums() == {"EUR": 0}


def test_first_button_by_high_card_draw() -> None:
    table = make_table()
    players = [make_player() for _ in range(3)]
    for number, player in enumerate(players, start=2):
        sit(table, player, number)
    table = advance(table)
    events = read_stream(stream_id=et.hand_stream(table.current_hand_id))
    drawn = next(e for e in events if e.type == et.BUTTON_DRAWN)
    order = {card: ("23456789TJQKA".index(card[0]), "cdhs".index(card[1])) for card in drawn.data["draws"].values()}
    best_seat = max(drawn.data["draws"], key=lambda seat: order[drawn.data["draws"][seat]])
    assert drawn.data["button"] == int(best_seat) == table.button_seat
    # The deck was shuffled for the hand and recorded first.
    assert events[0].type == et.SHUFFLED
    # Sealed under the hand's deal key (only the dealer opens it), checked against the Merkle commitment.
    assert events[0].data["sealed_deck"]["scheme"] == "aes-256-gcm"
    opened = open_deck(hand_id=table.current_hand_id, commitment=events[0].data["commitment"],
                       sealed_deck=events[0].data["sealed_deck"])  # fmt: skip
    assert opened is not None
    assert sorted(opened.deck) == sorted(deck())
    assert events[0].data["commitment"] == merkle_root_of(opened.leaves())


def test_button_moves_each_hand() -> None:
    table, (p1, p2, _p3) = three_handed()
    table = advance(table, cards=AA_VS_KK)
    act(table, p1, "fold")
    act(table, p2, "fold")
    table = advance(table, cards=AA_VS_KK)  # next hand
    assert table.button_seat == 2


def test_timeout_checks_if_allowed_else_folds_and_sits_out() -> None:
    table, (p1, p2, p3) = three_handed(time_bank_seconds=4)
    table = advance(table, cards=AA_VS_KK)
    hand = PokerHand.objects.get(hand_id=table.current_hand_id)
    # Seat 1 owes the big blind: the turn timer runs out, then the time bank, then a fold.
    turn_deadline = table.deadline
    assert turn_deadline is not None
    table = advance(table)
    assert table.deadline == turn_deadline + timedelta(seconds=4)
    assert PokerSeat.objects.get(table=table, player_id=p1).time_bank_left == 0
    table = advance(table)
    seat1 = PokerSeat.objects.get(table=table, player_id=p1)
    assert table.deadline is not None
    assert seat1.sitting_out
    assert seat1.reserved_until == table.deadline - timedelta(seconds=5) + timedelta(seconds=60)
    events = read_stream(stream_id=et.hand_stream(hand.hand_id))
    timed_out = [e for e in events if e.type == et.TIMED_OUT]
    assert [(e.data["seat"], e.data["action"]) for e in timed_out] == [(1, "fold")]
    act(table, p2, "call")
    hand.refresh_from_db()
    assert hand.actor_seat == 3
    # The big blind may check: their timeout checks (bank spent at once: 4 s).
    table = advance(table)
    table = advance(table)
    events = read_stream(stream_id=et.hand_stream(hand.hand_id))
    assert [(e.data["seat"], e.data["action"]) for e in events if e.type == et.TIMED_OUT][-1] == (3, "check")
    assert PokerSeat.objects.get(table=table, player_id=p3).sitting_out
    assert ledger_sums() == {"EUR": 0}


def test_sitting_out_player_is_not_dealt_in_and_seat_is_freed() -> None:
    table, (p1, p2, p3) = three_handed()
    services.sit_out(table_id=table.pk, player_id=p1, now=T0)
    table = advance(table, cards=AA_VS_KK)
    hand = PokerHand.objects.get(hand_id=table.current_hand_id)
    assert sorted(hand.players) == ["2", "3"]
    with pytest.raises(DomainError) as refused:
        act(table, p1, "fold")
    assert refused.value.code == "poker_not_in_hand"
    # Hand over (the small blind folds); the reservation runs out before the next hand.
    act(table, p2 if hand.actor_seat == 2 else p3, "fold")
    reserved = PokerSeat.objects.get(table=table, player_id=p1).reserved_until
    assert reserved is not None
    table.refresh_from_db()
    assert services.advance_table(table_id=table.pk, expected_seq=table.phase_seq, now=reserved) is not None
    assert not PokerSeat.objects.filter(table=table, player_id=p1).exists()
    assert wallet(p1) == 100_000
    assert ledger_sums() == {"EUR": 0}


def test_bad_input_is_refused_and_changes_nothing() -> None:
    table, (p1, p2, _p3) = three_handed()
    stranger = make_player()
    refused("poker_seat_taken", lambda: sit(table, stranger, 1))
    refused("poker_already_seated", lambda: sit(table, p1, 5))
    refused("poker_buy_in_out_of_range", lambda: sit(table, stranger, 5, buy_in=199))
    refused("poker_buy_in_out_of_range", lambda: sit(table, stranger, 5, buy_in=2_001))
    refused("poker_invalid_seat", lambda: sit(table, stranger, 7))
    poor = make_player(funds=300)
    refused("insufficient_funds", lambda: sit(table, poor, 5, buy_in=400))
    table = advance(table, cards=AA_VS_KK)
    refused("poker_in_hand", lambda: services.top_up(table_id=table.pk, player_id=p1, amount=10,
                                                      idempotency_key=key(), now=T0))  # fmt: skip
    refused("poker_in_hand", lambda: services.stand_up(table_id=table.pk, player_id=p1, idempotency_key=key(),
                                                        now=T0))  # fmt: skip
    refused("poker_not_your_turn", lambda: act(table, p2, "call"))
    refused("poker_below_minimum", lambda: act(table, p1, "raise", 15))
    refused("poker_over_stack", lambda: act(table, p1, "raise", 1_001))
    refused("poker_cannot_check", lambda: act(table, p1, "check"))
    refused("poker_invalid_action", lambda: act(table, p1, "dance"))
    refused("poker_not_seated", lambda: act(table, stranger, "fold"))
    act(table, p1, "fold")
    refused("poker_player_folded", lambda: act(table, p1, "call"))


def test_fixed_limit_sizes() -> None:
    table, (p1, _p2, _p3) = three_handed(variant="fixed_limit")
    table = advance(table, cards=AA_VS_KK)
    refused("poker_not_fixed_limit_size", lambda: act(table, p1, "raise", 30))
    result = act(table, p1, "raise", 20)
    assert result.amount == 20


def test_demo_has_one_open_poker_table_that_deals() -> None:
    from casino.demo import seed_demo

    seed_demo()
    seed_demo()
    [table] = PokerTable.objects.all()
    assert table.is_open
    assert table.currency == "EUR"
    assert 2 <= table.max_seats <= 10
    players = [make_player() for _ in range(2)]
    for number, player in enumerate(players, start=1):
        sit(table, player, number, buy_in=table.buy_in_max)
    table = advance(table)
    assert table.phase == "hand"
    assert PokerHand.objects.get(hand_id=table.current_hand_id).hand_id.startswith("NL1-")


def test_a_retried_action_is_done_once() -> None:
    table, (p1, _p2, _p3) = three_handed()
    table = advance(table, cards=AA_VS_KK)
    k = key()
    first = services.act(table_id=table.pk, player_id=p1, action="raise", amount=30, idempotency_key=k, now=T0)
    before = snapshot()
    again = services.act(table_id=table.pk, player_id=p1, action="raise", amount=30, idempotency_key=k, now=T0)
    assert again == first
    assert snapshot() == before
    with pytest.raises(DomainError) as reused:
        services.act(table_id=table.pk, player_id=p1, action="fold", idempotency_key=k, now=T0)
    assert reused.value.code == "idempotency_key_reused"


def test_acting_inside_the_time_bank_keeps_what_is_left() -> None:
    table, (p1, _p2, _p3) = three_handed(time_bank_seconds=10)
    table = advance(table, cards=AA_VS_KK)
    table = advance(table)  # turn timer out: the bank starts, 10 s
    assert table.deadline is not None
    act(table, p1, "fold", at=table.deadline - timedelta(seconds=4))
    assert PokerSeat.objects.get(table=table, player_id=p1).time_bank_left == 4
    assert not PokerSeat.objects.get(table=table, player_id=p1).sitting_out


def test_sweep_frees_expired_seats_and_starts_ready_tables() -> None:
    table = make_table()
    p1, p2, p3 = (make_player() for _ in range(3))
    sit(table, p1, 1)
    services.sit_out(table_id=table.pk, player_id=p1, now=T0)
    sit(table, p2, 2)
    table.refresh_from_db()
    assert table.phase == "idle"  # one player ready
    done = services.sweep(now=T0 + timedelta(seconds=61))
    assert done["freed"] == 1
    assert wallet(p1) == 100_000
    sit(table, p3, 3)
    table.refresh_from_db()
    assert table.phase == "between"
    assert table.deadline is not None
    done = services.sweep(now=table.deadline + timedelta(seconds=60))
    table.refresh_from_db()
    assert done["advanced"] == 1
    assert table.phase == "hand"
    assert ledger_sums() == {"EUR": 0}
