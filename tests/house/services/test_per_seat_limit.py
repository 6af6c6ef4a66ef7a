"""A per-seat round never deals more own hands than the deck has (issue #20).

RULES.md: in per-seat mode "seats are limited by the deck" (52 - 2 dealer - 5
board = 45 cards: 22 hands). Seed 000 (Place Bets): leaving while betting time
remains "will be interpreted as leaving the game, and your bets will therefore
be declined for that particular game round"; RULES.md: "A round, once bets
close, proceeds whether or not a player stays connected". The attack: join,
bet, leave, let the next player take the seat and bet, over and over in one
betting window, until more players hold bets than the deck can deal to.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.db import connections, transaction

from casino.errors import DomainError
from games.house.models import HouseTable, PlayerRound, TableSeat
from games.house.round.state import PER_SEAT_MAX
from games.house.services import TableTick, clear_bets, pause_round, place_chip, resume_round, undo_bet
from games.house.services.seats import leave_table, take_seat
from games.house.store import player_stream, round_stream
from ledger.models import Hold
from ledger.services import house_account, player_accounts, read_stream
from ledger.services.projectors import check_projections, rebuild
from tests.db import ledger_sums
from tests.house.services.conftest import (
    T0,
    key,
    later,
    make_player,
    make_table,
    open_round,
    play_out,
    refused,
    step,
    wallet,
)

pytestmark = pytest.mark.django_db

FUNDS = 10_000
ANTE = 100
HELD = 2 * ANTE  # the Ante and its equal X-tra Bonus, held together


def per_seat_table(*, max_seats: int | None = None, betting_seconds: int = 600, code: str | None = None) -> HouseTable:
    # Each test its own code: game numbers (the round ids a process caches state by) stay unique.
    table = make_table("xtreme", code=code, hand_mode="per_seat")
    HouseTable.objects.filter(pk=table.pk).update(max_seats=max_seats, betting_seconds=betting_seconds)
    table.refresh_from_db()
    return table


def full_table_round(seats: int) -> tuple[HouseTable, list[int], TableTick]:
    """A per-seat table of ``seats`` seats, each taken by a player with ``FUNDS``,
    its first round open for bets: the table, the players, the tick."""
    table = per_seat_table(max_seats=seats)
    players = [make_player(table, funds=FUNDS) for _ in range(seats)]
    return table, players, open_round(table)


def ante(table: HouseTable, player: int, now: datetime) -> None:
    place_chip(table_id=table.pk, player_id=player, spot="ante", amount=ANTE, idempotency_key=key(), now=now)


def holding(table: HouseTable, players: list[int]) -> set[int]:
    """The players whose money the ledger holds for the table right now (pending holds)."""
    wallets = {player_accounts(player_id=p, currency="EUR").wallet: p for p in players}
    house = house_account(table_id=table.pk, currency="EUR")
    pending = Hold.objects.filter(destination_id=house, status="pending").values_list("source_id", flat=True)
    return {wallets[source] for source in pending}


def removed_reasons(round_id: str, player: int) -> list[str]:
    return [e.data["reason"] for e in read_stream(stream_id=player_stream(round_id, player))
            if e.type == "house_bet.removed"]  # fmt: skip


def betting_closed(round_id: str) -> Mapping[str, Any]:
    [closed] = [e.data for e in read_stream(stream_id=round_stream(round_id)) if e.type == "house_round.betting_closed"]
    return closed


def test_join_bet_leave_churn_never_holds_more_players_than_the_deck_deals() -> None:
    table = per_seat_table(code="XTR1")
    players = [make_player(funds=FUNDS) for _ in range(PER_SEAT_MAX + 8)]
    tick = open_round(table)
    now = T0 + timedelta(seconds=1)
    seated: list[int] = []
    left: list[int] = []

    def check() -> None:
        in_round = holding(table, players)
        assert len(in_round) <= PER_SEAT_MAX
        assert in_round == set(seated)  # everyone seated has bet; nobody who left is still held
        assert PlayerRound.objects.filter(round__round_id=tick.round_id, staked__gt=0).count() == len(in_round)

    for player in players[:PER_SEAT_MAX]:
        take_seat(table_id=table.pk, player_id=player)
        ante(table, player, now)
        seated.append(player)
    check()
    waiting = players[PER_SEAT_MAX:]
    refused("table_full", take_seat, table_id=table.pk, player_id=waiting[0])
    # Churn: a seated player leaves (their bets come back), a waiting one takes the
    # seat and bets, the one who left comes back as soon as a seat is free.
    for turn in range(12):
        leaver = seated.pop(0)
        leave_table(table_id=table.pk, player_id=leaver, now=now)
        assert wallet(leaver) == FUNDS
        assert removed_reasons(tick.round_id, leaver)[-1] == "leave"
        check()
        joiner = waiting.pop(0) if waiting else left.pop(0)
        take_seat(table_id=table.pk, player_id=joiner)
        ante(table, joiner, now)
        seated.append(joiner)
        left.append(leaver)
        check()
        if turn % 3 == 2:  # a returning player, with another seated one's bets going first
            refused("table_full", take_seat, table_id=table.pk, player_id=left[0])
        now += timedelta(seconds=1)
    assert now < later(tick, 0)  # all of it within the one betting window

    tick = step(table, tick)  # closing the betting succeeds and deals everyone held
    assert tick.phase == "preflop"
    closed = betting_closed(tick.round_id)
    assert sorted(closed["participants"]) == sorted(seated)
    assert len(closed["participants"]) == PER_SEAT_MAX
    play_out(table, tick)
    assert ledger_sums() == {"EUR": 0}
    for player in players:
        if player not in seated:
            assert wallet(player) == FUNDS  # every departed (or never dealt) player is whole again
    assert not holding(table, players)


def test_a_first_chip_beyond_the_rounds_hands_is_refused_and_changes_nothing() -> None:
    """The round keeps the seats it opened with: seats added meanwhile (an
    operator raising ``max_seats``, a forged seat row) do not add hands to it."""
    table, (a, b), tick = full_table_round(2)
    ante(table, a, later(tick))
    ante(table, b, later(tick))
    HouseTable.objects.filter(pk=table.pk).update(max_seats=3)
    late = make_player(table, funds=FUNDS)  # the table has a third seat now; this round has two hands
    forged = make_player(funds=FUNDS)
    TableSeat.objects.create(table=table, player_id=forged, seat_number=9, joined_at=later(tick))  # no event
    for player in (late, forged):
        refused("round_full", place_chip, table_id=table.pk, player_id=player, spot="ante", amount=ANTE,
                idempotency_key=key(), now=later(tick))  # fmt: skip
    # Players already in the round keep betting, undoing and clearing.
    ante(table, a, later(tick))
    undo_bet(table_id=table.pk, player_id=a, idempotency_key=key(), now=later(tick))
    clear_bets(table_id=table.pk, player_id=b, idempotency_key=key(), now=later(tick))
    ante(table, late, later(tick))  # b's place came free
    refused("round_full", place_chip, table_id=table.pk, player_id=b, spot="ante", amount=ANTE,
            idempotency_key=key(), now=later(tick))  # fmt: skip
    tick = step(table, tick)
    assert tick.phase == "preflop"
    play_out(table, tick)
    assert ledger_sums() == {"EUR": 0}
    assert wallet(b) == FUNDS
    assert wallet(forged) == FUNDS
    # No seat event made the forged row: the rebuild from the log names it, and removes it.
    named = check_projections()
    assert [(d.projector, d.key, d.column, d.rebuilt) for d in named] == [
        ("house_table_seat", {"table_id": table.pk, "player_id": forged}, None, None)
    ]
    rebuild(check=False)
    assert not TableSeat.objects.filter(player_id=forged).exists()


def test_leaving_after_betting_closed_keeps_the_wagers_in_play() -> None:
    table, (a, b), tick = full_table_round(2)
    ante(table, a, later(tick))
    ante(table, b, later(tick))
    # Betting closed by the server's clock; the dealer has not dealt yet.
    leave_table(table_id=table.pk, player_id=a, now=later(tick, 0))
    assert wallet(a) == FUNDS - HELD
    newcomer = make_player(table, funds=FUNDS)  # takes the freed seat, cannot bet in this round
    refused("betting_closed", place_chip, table_id=table.pk, player_id=newcomer, spot="ante", amount=ANTE,
            idempotency_key=key(), now=later(tick, 0))  # fmt: skip
    tick = step(table, tick)
    closed = betting_closed(tick.round_id)
    assert sorted(closed["participants"]) == sorted([a, b])
    leave_table(table_id=table.pk, player_id=b, now=later(tick))  # in a decision window: stays in play too
    assert removed_reasons(tick.round_id, a) == removed_reasons(tick.round_id, b) == []
    play_out(table, tick)
    rows = {r.player_id: r for r in PlayerRound.objects.filter(round__round_id=tick.round_id)}
    assert rows[a].status == rows[b].status == "settled"
    assert wallet(a) == FUNDS + rows[a].net
    assert ledger_sums() == {"EUR": 0}


def test_leaving_a_paused_betting_window_returns_the_bets() -> None:
    """A pause stops the betting clock: the bets are not confirmed yet."""
    table, (a,), tick = full_table_round(1)
    ante(table, a, later(tick))
    pause_round(table_id=table.pk, actor="user:1", reason="camera", now=later(tick))
    leave_table(table_id=table.pk, player_id=a, now=later(tick, 300))
    assert wallet(a) == FUNDS
    b = make_player(table, funds=FUNDS)
    resumed = resume_round(table_id=table.pk, actor="user:1", now=later(tick, 360))
    ante(table, b, later(resumed))
    tick = step(table, resumed)
    assert tick.phase == "preflop"
    play_out(table, tick)
    assert ledger_sums() == {"EUR": 0}


def test_leaving_without_a_seat_is_refused_and_changes_nothing() -> None:
    table = per_seat_table(max_seats=2)
    a, stranger = make_player(table, funds=FUNDS), make_player(funds=FUNDS)
    tick = open_round(table)
    ante(table, a, later(tick))
    refused("not_seated", leave_table, table_id=table.pk, player_id=stranger, now=later(tick))
    refused("table_not_found", leave_table, table_id=10**9, player_id=a, now=later(tick))
    assert holding(table, [a]) == {a}


def test_a_shared_table_declines_the_bets_of_a_player_who_leaves_during_betting() -> None:
    """Seed 000 is the shared-hand live table: its rule holds there too."""
    table = make_table("uth")
    a, b = make_player(table, funds=FUNDS), make_player(table, funds=FUNDS)
    tick = open_round(table)
    for player in (a, b):
        place_chip(table_id=table.pk, player_id=player, spot="ante", amount=ANTE, idempotency_key=key(),
                   now=later(tick))  # fmt: skip
    leave_table(table_id=table.pk, player_id=a, now=later(tick))
    assert wallet(a) == FUNDS
    assert removed_reasons(tick.round_id, a) == ["leave"]
    tick = step(table, tick)
    closed = betting_closed(tick.round_id)
    assert closed["participants"] == [b]
    play_out(table, tick)
    assert ledger_sums() == {"EUR": 0}


def in_this_order(first: Callable[[], Any], second: Callable[[], Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run ``first`` in a transaction of its own thread and keep it open (its
    locks held); then ``second`` in another thread, which must still be waiting
    half a second later; then commit ``first`` and let ``second`` finish. Each
    outcome: ``result``, or ``error`` (a refusal's code)."""
    release, started = threading.Event(), threading.Event()
    outcomes: list[dict[str, Any]] = [{}, {}]

    def run(work: Callable[[], Any], outcome: dict[str, Any], hold: bool) -> None:
        try:
            with transaction.atomic():
                outcome["result"] = work()
                if hold:
                    started.set()
                    assert release.wait(20)
        except DomainError as exc:
            outcome["error"] = exc.code
        finally:
            started.set()
            connections.close_all()

    threads = [threading.Thread(target=run, args=(work, outcome, work is first))
               for work, outcome in zip((first, second), outcomes, strict=True)]  # fmt: skip
    threads[0].start()
    assert started.wait(20)
    threads[1].start()
    threads[1].join(0.5)
    assert threads[1].is_alive(), "the second did not wait for the first"
    release.set()
    for thread in threads:
        thread.join(20)
    return outcomes[0], outcomes[1]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_leave_waits_for_a_first_chip_in_flight_and_returns_it_too() -> None:
    table, (a,), tick = full_table_round(1)
    placed, left = in_this_order(
        lambda: ante(table, a, later(tick)), lambda: leave_table(table_id=table.pk, player_id=a, now=later(tick))
    )
    assert "error" not in placed
    assert "error" not in left
    assert removed_reasons(tick.round_id, a) == ["leave"]
    assert wallet(a) == FUNDS
    assert not holding(table, [a])
    b = make_player(table, funds=FUNDS)  # the one seat and the round's one hand are free
    ante(table, b, later(tick))
    assert step(table, tick).phase == "preflop"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_chip_after_a_leave_in_flight_is_refused() -> None:
    table, (a,), tick = full_table_round(1)
    ante(table, a, later(tick))
    left, placed = in_this_order(
        lambda: leave_table(table_id=table.pk, player_id=a, now=later(tick)), lambda: ante(table, a, later(tick))
    )
    assert "error" not in left
    assert placed["error"] == "not_seated"
    assert wallet(a) == FUNDS
    assert not holding(table, [a])
