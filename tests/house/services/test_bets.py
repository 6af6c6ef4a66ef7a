"""Bet commands (RULES.md "Bet placement"), refusals, void, pause and the dealer's idempotency."""

from __future__ import annotations

from datetime import timedelta

import pytest

from games.house.models import HouseTable
from games.house.services import (
    advance_table,
    clear_bets,
    double_bets,
    make_decision,
    pause_round,
    place_chip,
    repeat_bets,
    resume_round,
    undo_bet,
    void_round,
)
from tests.db import ledger_sums
from tests.house.services.conftest import (
    T0,
    betting_round,
    key,
    later,
    make_player,
    make_table,
    open_round,
    play_out,
    refused,
    shoe,
    snapshot,
    step,
    wallet,
)

pytestmark = pytest.mark.django_db

LIMITS = {"ante": {"min": 100, "max": 1000}, "best_five": {"min": 100, "max": 500}}


def chip(table: HouseTable, player: int, spot: str, amount: int, now):
    return place_chip(table_id=table.pk, player_id=player, spot=spot, amount=amount, idempotency_key=key(), now=now)


def test_chip_is_capped_at_the_spot_maximum_and_the_cap_is_reported() -> None:
    table, p, tick = betting_round("uth", limits=LIMITS, funds=10_000)
    assert not chip(table, p, "ante", 600, later(tick)).capped
    result = chip(table, p, "ante", 600, later(tick))
    assert result.capped
    assert result.totals["ante"] == 1000
    assert result.totals["ante_plus"] == 1000
    assert result.balance == 10_000 - 2000 == wallet(p)
    full = chip(table, p, "ante", 100, later(tick))
    assert full.capped
    assert full.totals["ante"] == 1000
    assert wallet(p) == 8000


def test_undo_removes_chips_in_reverse_order_and_clear_removes_all() -> None:
    table, p, tick = betting_round("uth", limits=LIMITS, funds=10_000)
    chip(table, p, "ante", 100, later(tick))
    chip(table, p, "best_five", 200, later(tick))
    chip(table, p, "ante", 300, later(tick))
    u = undo_bet(table_id=table.pk, player_id=p, idempotency_key=key(), now=later(tick))
    assert u.totals == {"ante": 100, "ante_plus": 100, "best_five": 200}
    u = undo_bet(table_id=table.pk, player_id=p, idempotency_key=key(), now=later(tick))
    assert u.totals == {"ante": 100, "ante_plus": 100}
    chip(table, p, "best_five", 100, later(tick))
    c = clear_bets(table_id=table.pk, player_id=p, idempotency_key=key(), now=later(tick))
    assert c.totals == {}
    assert wallet(p) == 10_000
    refused("nothing_to_undo", undo_bet, table_id=table.pk, player_id=p, idempotency_key=key(), now=later(tick))


def test_double_in_placing_order_until_the_balance_runs_out_and_only_once() -> None:
    # The ante holds 400 (ante + ante plus); the balance is then 1100, of which 200 kept for the river's 1x.
    table, p, tick = betting_round("uth", limits=LIMITS, funds=1600, bets={"ante": 200, "best_five": 100})
    d = double_bets(table_id=table.pk, player_id=p, idempotency_key=key(), now=later(tick))
    # Doubling the ante needs 400 (ante plus follows) and 200 more kept for the
    # 1x river play: 300 left; best five needs 100 more: done too.
    assert d.doubled == ["ante", "best_five"]
    assert d.totals == {"ante": 400, "ante_plus": 400, "best_five": 200}
    assert wallet(p) == 600
    refused("already_doubled", double_bets, table_id=table.pk, player_id=p, idempotency_key=key(), now=later(tick))


def test_double_stops_when_the_balance_runs_out() -> None:
    table, p, tick = betting_round("uth", limits=LIMITS, funds=900, bets={"ante": 200, "best_five": 200})  # balance 300
    # The ante (first placed) needs 400 and is not covered: doubling stops there, nothing after it.
    refused("insufficient_balance", double_bets, table_id=table.pk, player_id=p, idempotency_key=key(),
            now=later(tick))  # fmt: skip
    # The ante holds 200 (balance 600), the best five 200 (balance 400).
    table2, q, tick2 = betting_round("uth", limits=LIMITS, funds=800, bets={"ante": 100, "best_five": 200})
    d = double_bets(table_id=table2.pk, player_id=q, idempotency_key=key(), now=later(tick2))
    # The ante (first placed) doubles for 200 and keeps 100 more for the river's
    # 1x play; the best five would need 200 more with nothing left beyond the 200 kept.
    assert d.doubled == ["ante"]
    assert d.totals == {"ante": 200, "ante_plus": 200, "best_five": 200}
    assert wallet(q) == 200


def test_repeat_places_the_previous_rounds_bets() -> None:
    table, p, tick = betting_round("uth", limits=LIMITS, funds=10_000)
    refused("nothing_to_repeat", repeat_bets, table_id=table.pk, player_id=p, idempotency_key=key(), now=later(tick))
    chip(table, p, "ante", 300, later(tick))
    chip(table, p, "best_five", 100, later(tick))
    tick = play_out(table, step(table, tick))
    tick = step(table, tick)  # next round opens
    assert tick.phase == "betting"
    r = repeat_bets(table_id=table.pk, player_id=p, idempotency_key=key(), now=later(tick))
    assert r.totals == {"ante": 300, "ante_plus": 300, "best_five": 100}


def test_betting_window_is_closed_by_the_server_clock() -> None:
    table, p, tick = betting_round("uth", limits=LIMITS, funds=10_000)
    assert tick.deadline is not None
    from games.house.realtime.presenters import table_view

    light = table_view(table_id=table.pk, viewer_id=p)["round"]
    assert light["warning_at"] == (tick.deadline - timedelta(seconds=table.warning_seconds)).isoformat()
    refused("betting_closed", chip, table=table, player=p, spot="ante", amount=100, now=tick.deadline)


def test_every_bet_refusal_has_its_code_and_changes_nothing() -> None:
    table = make_table("uth", limits=LIMITS)
    p = make_player(table, funds=150)
    outsider = make_player(None, funds=10_000)
    tick = open_round(table)
    now = later(tick)
    refused("below_minimum", chip, table=table, player=p, spot="ante", amount=50, now=now)
    refused("ante_required", chip, table=table, player=p, spot="best_five", amount=100, now=now)
    refused("spot_not_offered", chip, table=table, player=p, spot="bonus", amount=100, now=now)
    refused("spot_not_offered", chip, table=table, player=p, spot="ante_plus", amount=100, now=now)
    refused("insufficient_balance", chip, table=table, player=p, spot="ante", amount=100, now=now)  # needs 200
    refused("invalid_chip", chip, table=table, player=p, spot="ante", amount=0, now=now)
    refused("not_seated", chip, table=table, player=outsider, spot="ante", amount=100, now=now)


def test_decision_refusals() -> None:
    table = make_table("uth", limits=LIMITS)
    p = make_player(table, funds=500)
    watcher = make_player(table, funds=10_000)
    tick = open_round(table, shoe_cards=shoe("As Kd", dealer="2c 3c", board="Ah 7d 9s Jc 4h"))
    chip(table, p, "ante", 100, later(tick))  # balance 300 left
    decide = make_decision
    refused("no_decision_window", decide, table_id=table.pk, player_id=p, option="check", idempotency_key=key(),
            now=later(tick))  # fmt: skip
    tick = step(table, tick)
    now = later(tick)
    refused("not_in_round", decide, table_id=table.pk, player_id=watcher, option="check", idempotency_key=key(),
            now=now)  # fmt: skip
    refused("option_not_offered", decide, table_id=table.pk, player_id=p, option="call2x", idempotency_key=key(),
            now=now)  # fmt: skip
    refused("decision_not_covered", decide, table_id=table.pk, player_id=p, option="call4x", idempotency_key=key(),
            now=now)  # fmt: skip
    refused("betting_closed", chip, table=table, player=p, spot="ante", amount=100, now=now)
    d = decide(table_id=table.pk, player_id=p, option="call3x", idempotency_key="dec-1", now=now)
    assert d.amount == 300
    assert d.balance == 0
    assert d.all_decided
    again = decide(table_id=table.pk, player_id=p, option="call3x", idempotency_key="dec-1", now=now)
    assert again == d  # a retry returns the first result
    refused("decision_after_call", decide, table_id=table.pk, player_id=p, option="check", idempotency_key=key(),
            now=now)  # fmt: skip


def test_early_advance_when_everyone_decided_and_stale_ticks_change_nothing() -> None:
    table = make_table("uth", limits=LIMITS)
    p = make_player(table, funds=10_000)
    tick = open_round(table, shoe_cards=shoe("As Kd", dealer="2c 3c", board="Ah 7d 9s Jc 4h"))
    chip(table, p, "ante", 100, later(tick))
    assert advance_table(table_id=table.pk, expected_seq=tick.phase_seq, now=later(tick)) is None  # not due
    dealt = step(table, tick)
    before = snapshot()
    assert advance_table(table_id=table.pk, expected_seq=tick.phase_seq, now=later(dealt, 60)) is None  # stale
    assert snapshot() == before
    d = make_decision(table_id=table.pk, player_id=p, option="check", idempotency_key=key(), now=later(dealt))
    assert d.all_decided
    assert d.tick is not None
    nxt = advance_table(table_id=table.pk, expected_seq=d.tick.phase_seq, now=later(dealt))
    assert nxt is not None
    assert nxt.phase == "flop"


def test_void_returns_every_wager_including_the_call() -> None:
    table = make_table("uth", limits=LIMITS)
    p = make_player(table, funds=10_000)
    q = make_player(table, funds=10_000)
    tick = open_round(table)
    chip(table, p, "ante", 200, later(tick))
    chip(table, p, "best_five", 100, later(tick))
    chip(table, q, "ante", 100, later(tick))
    tick = step(table, tick)
    make_decision(table_id=table.pk, player_id=p, option="call4x", idempotency_key=key(), now=later(tick))
    assert wallet(p) == 10_000 - 500 - 800
    pause_round(table_id=table.pk, actor="operator:1", reason="card shoe jam", now=later(tick))
    refused("round_paused", make_decision, table_id=table.pk, player_id=q, option="check", idempotency_key=key(),
            now=later(tick))  # fmt: skip
    void = void_round(table_id=table.pk, actor="operator:1", reason="malfunction", now=later(tick))
    assert void.phase == "between"
    assert wallet(p) == 10_000
    assert wallet(q) == 10_000
    assert ledger_sums() == {"EUR": 0}


def test_pause_keeps_the_remaining_time_and_resume_restores_it() -> None:
    table, p, tick = betting_round("uth", limits=LIMITS, funds=10_000, bets={"ante": 100})
    paused = pause_round(table_id=table.pk, actor="op", reason="check", now=later(tick, -5))
    assert paused.phase == "paused"
    assert paused.deadline is None
    refused("round_paused", chip, table=table, player=p, spot="ante", amount=100, now=later(tick, -5))
    resumed = resume_round(table_id=table.pk, actor="op", now=T0 + timedelta(hours=1))
    assert resumed.phase == "betting"
    assert resumed.deadline == T0 + timedelta(hours=1, seconds=5)


@pytest.mark.parametrize(
    "change",
    [
        {"limits": {"best_five": {"min": 100, "max": 500}}},  # no Ante
        {"limits": {"ante": {"min": 100, "max": 50}}},  # min above max
        {"limits": {"ante": {"min": 100, "max": 500}, "ante_plus": {"min": 1, "max": 5}}},  # automatic, not a spot
        {"pay_tables": {"best_five": 1}},  # Ante Plus has no pay table
        {"pay_tables": {"ante_plus": 1, "best_five": 99}},  # no such table
    ],
)
def test_a_misconfigured_table_opens_no_round(change: dict) -> None:
    table = make_table("uth", limits=LIMITS)
    for field, value in change.items():
        setattr(table, field, value)
    table.save()
    refused_code = "unknown_pay_table" if change.get("pay_tables", {}).get("best_five") == 99 else "table_misconfigured"
    from games.house.services import start_table

    refused(refused_code, start_table, table_id=table.pk, now=T0)


def test_bonus_spin_needs_a_wheel() -> None:
    from games.house.services import start_table

    table = make_table("xtreme", wheel={})
    refused("table_misconfigured", start_table, table_id=table.pk, now=T0)


def test_one_decision_per_street_and_seat_limits() -> None:
    from django.test import override_settings

    from games.house.services import assign_seat

    table, p, tick = betting_round("uth", limits=LIMITS, funds=10_000, bets={"ante": 100})
    tick = step(table, tick)
    make_decision(table_id=table.pk, player_id=p, option="check", idempotency_key=key(), now=later(tick))
    refused("already_decided", make_decision, table_id=table.pk, player_id=p, option="call3x", idempotency_key=key(),
            now=later(tick))  # fmt: skip
    seats = make_table("xtreme", hand_mode="per_seat")
    seats.max_seats = 1
    seats.save()
    make_player(seats)
    late = make_player(None)
    refused("table_full", assign_seat, table_id=seats.pk, player_id=late)
    with override_settings(CASINO_MAX_TABLES_PER_PLAYER=1):
        refused("too_many_tables", assign_seat, table_id=seats.pk, player_id=p)


def test_a_retried_bet_is_not_placed_twice() -> None:
    table, p, tick = betting_round("uth", limits=LIMITS, funds=10_000)
    first = place_chip(table_id=table.pk, player_id=p, spot="ante", amount=100, idempotency_key="bet-1",
                       now=later(tick))  # fmt: skip
    before = snapshot()
    again = place_chip(table_id=table.pk, player_id=p, spot="ante", amount=100, idempotency_key="bet-1",
                       now=later(tick))  # fmt: skip
    assert again == first
    assert snapshot() == before
    refused("idempotency_key_reused", place_chip, table_id=table.pk, player_id=p, spot="ante", amount=200,
            idempotency_key="bet-1", now=later(tick))  # fmt: skip


def test_a_round_whose_dealer_is_gone_is_voided_automatically() -> None:
    from games.house.services import void_overdue_rounds
    from ledger.services import read_stream

    table, p, tick = betting_round("uth", limits=LIMITS, funds=10_000, bets={"ante": 100})
    tick = step(table, tick)  # cards dealt, decision window open; then no dealer task ever comes
    assert tick.deadline is not None
    assert void_overdue_rounds(now=tick.deadline + timedelta(seconds=10), grace_seconds=30) == []
    [voided] = void_overdue_rounds(now=tick.deadline + timedelta(seconds=31), grace_seconds=30)
    assert voided.phase == "between"
    assert wallet(p) == 10_000
    void = [e.data for e in read_stream(stream_id=f"round-{tick.round_id}") if e.type == "house_round.voided"]
    assert void[0]["automatic"] is True
    assert void[0]["reason"] == "dealer_gone"


def test_bonus_spin_is_exactly_one_two_or_five_units() -> None:
    table = make_table("xtreme")
    p = make_player(table, funds=100_000)
    tick = open_round(table)
    chip(table, p, "ante", 100, later(tick))
    refused("invalid_bonus_spin_wager", chip, table=table, player=p, spot="bonus_spin", amount=150, now=later(tick))
    assert chip(table, p, "bonus_spin", 100, later(tick)).totals["bonus_spin"] == 100
    assert chip(table, p, "bonus_spin", 100, later(tick)).totals["bonus_spin"] == 200  # 2 units
    refused("invalid_bonus_spin_wager", chip, table=table, player=p, spot="bonus_spin", amount=200, now=later(tick))
    assert chip(table, p, "bonus_spin", 300, later(tick)).totals["bonus_spin"] == 500  # 5 units, the maximum
    result = chip(table, p, "ante", 100, later(tick))
    assert result.totals["xtra_bonus"] == result.totals["ante"] == 200  # X-tra Bonus follows the Ante
