"""A tournament's tables played by several processes (issue #39,
``games.poker.tournament.workers``): a table's lease is its holder's alone and
goes with its session; the tournament's step does not wait for a table playing
a hand; a worker killed in the middle of a hand loses nothing: the other plays
its tables to the end, every hand complete, the money exact."""

from __future__ import annotations

import os
import time
from datetime import timedelta
from io import StringIO
from typing import Any

import psycopg
import pytest
from django.db import connection, transaction
from django.utils import timezone

from games.benchmarks import tournament as bench
from games.poker import services
from games.poker.models import PokerHand, PokerSeat, PokerTable
from games.poker.store.leases import LEASE_TABLE, LEASE_WORKER, Leases
from games.poker.tournament import services as tournament_services
from games.poker.tournament import workers
from games.poker.tournament.models import Tournament
from games.poker.tournament.workers import TableWorker, fair_share
from tests.poker.tables import make_player, make_tournament

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

THREE_PAID = [{"max_entrants": None, "shares_bp": [5000, 3000, 2000]}]


def other_session() -> psycopg.Connection[Any]:
    """A second connection to the test database (another process's session)."""
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    return psycopg.connect(**params, autocommit=True)


def released(leases: Leases, table_id: int) -> bool:
    """Whether the lease on ``table_id`` is free once the other session's backend has
    ended (it ends just after its client closes it: looked at for up to 10 s)."""
    for _ in range(200):
        if table_id not in leases.holders([table_id])[1]:
            return True
        time.sleep(0.05)
    return False


def assert_played_to_the_end_with_the_money_exact(tournament: Tournament, figures: dict[str, Any]) -> None:
    """Every hand complete, every table closed, ``verify_ledger`` clean, the pool and
    the chip bank at zero, the payouts equal to the pool."""
    assert figures["verify_ledger_problems"] == 0
    assert figures["prize_pool_after"] == 0
    assert figures["chip_bank_after"] == 0
    assert figures["payouts_equal_pool"] is True
    assert not PokerHand.objects.filter(table__tournament=tournament).exclude(status="complete").exists()
    assert not PokerTable.objects.filter(tournament=tournament, is_open=True).exists()


def test_fair_share_is_the_ceiling_of_the_tables_over_the_workers_alive() -> None:
    assert fair_share(112, 2) == 56
    assert fair_share(5, 2) == 3
    assert fair_share(1, 2) == 1
    assert fair_share(3, 1) == 3
    assert fair_share(3, 0) == 3  # nobody counted yet: the caller takes what it can


def test_a_tables_lease_is_its_holders_alone_and_goes_with_its_session() -> None:
    leases = Leases(tournament_id=1)
    try:
        leases.join()
        assert leases.claim([101, 102]) == {101, 102}
        other = other_session()
        try:
            assert other.execute("SELECT pg_try_advisory_lock(%s, 101)", [LEASE_TABLE]).fetchone() == (False,)
            assert other.execute("SELECT pg_try_advisory_lock(%s, 103)", [LEASE_TABLE]).fetchone() == (True,)
            assert leases.claim([103]) == set()  # held by the other session
            assert leases.holders([101, 102, 103]) == ({101, 102}, {103}, 1)
        finally:
            other.close()  # the other process dies: its lease goes with its session
        assert released(leases, 103)
        assert leases.holders([101, 102, 103]) == ({101, 102}, set(), 1)
        assert leases.claim([103]) == {103}
        leases.release([101])
        assert leases.holders([101, 102, 103]) == ({102, 103}, set(), 1)
    finally:
        leases.leave()
    assert leases.holders([101, 102, 103]) == (set(), set(), 0)


def test_a_worker_session_that_sends_nothing_for_too_long_is_ended_and_its_leases_freed() -> None:
    leases = Leases(tournament_id=1)
    hung = other_session()
    try:
        leases.join()
        hung.execute("SELECT pg_advisory_lock_shared(%s, 1)", [LEASE_WORKER])  # a worker of the tournament
        hung.execute("SELECT pg_advisory_lock(%s, 104)", [LEASE_TABLE])  # holding a table, then silent
        hung_pid = hung.info.backend_pid
        assert leases.holders([104]) == (set(), {104}, 2)
        assert leases.evict_stalled(60.0) == []  # silent for less than that: alive
        time.sleep(0.3)
        assert leases.evict_stalled(0.2) == [hung_pid]
        assert released(leases, 104)
        assert leases.holders([104]) == (set(), set(), 1)
        assert leases.claim([104]) == {104}
        with pytest.raises(psycopg.OperationalError):
            hung.execute("SELECT 1")  # its session is gone: nothing it sends runs
    finally:
        hung.close()
        leases.leave()


def tournament_state(tournament_id: int) -> str:
    with other_session() as session:
        row = session.execute(f"SELECT state FROM {Tournament._meta.db_table} WHERE id = %s", [tournament_id])
        return str(row.fetchone()[0])  # type: ignore[index]


def test_a_hung_worker_loses_its_tables_to_the_other_which_finishes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Worker 1 hangs inside its third action's transaction with its connection alive
    (idle in transaction, its table's row locked), until the tournament is over.
    Worker 0 ends its session once it has been silent for ``STALLED_SECONDS``: the
    hung transaction is rolled back, its leases freed, and worker 0 plays its tables
    to the end. Worker 1 wakes to a lost session: its transaction does not commit,
    it joins again in a new session and plays nothing more. Every hand complete,
    the money exact."""
    monkeypatch.setattr(workers, "STALLED_SECONDS", 1.0)  # the forked workers inherit it
    submit = TableWorker.submit

    def hangs_in_its_third_action(self: TableWorker, table: PokerTable, player: int, action: str, key: str) -> None:
        if self.worker == 1 and self.report.actions == 2:
            with transaction.atomic():
                submit(self, table, player, action, key)
                for _ in range(2400):  # hung, its session idle in its transaction (2 minutes at most)
                    if tournament_state(self.tournament_id) != "running":
                        break
                    time.sleep(0.05)
        submit(self, table, player, action, key)

    monkeypatch.setattr(TableWorker, "submit", hangs_in_its_third_action)
    figures = bench.play_tournament(out=StringIO(), players=18, seed=7, aggression=1.0, workers=2)

    tournament = Tournament.objects.latest("pk")
    assert tournament.state == "finished"
    assert figures["worker_errors"] == 0
    assert figures["workers_evicted"] >= 1  # worker 0 ended worker 1's session
    assert figures["sessions_lost"] >= 1  # worker 1 found its session gone when it woke
    assert figures["actions_by_process"][1] == 2  # nothing played by worker 1 after its hang
    assert figures["leases_claimed"] >= 3  # worker 0 took worker 1's table
    assert_played_to_the_end_with_the_money_exact(tournament, figures)


def test_the_step_releases_a_waiting_table_without_waiting_for_a_table_playing_a_hand() -> None:
    tournament = make_tournament(max_players=6, table_seats=3, payouts=THREE_PAID)
    now = timezone.now()
    for _ in range(6):
        tournament_services.register(
            tournament_id=tournament.pk, player_id=make_player(), idempotency_key=f"reg-{_}", now=now
        )
    playing, waiting = PokerTable.objects.filter(tournament=tournament).order_by("pk")
    later = now + timedelta(minutes=1)
    assert services.advance_table(table_id=playing.pk, expected_seq=playing.phase_seq, now=later) is not None
    playing.refresh_from_db()
    assert playing.phase == services.HAND
    # The other table's hand is over: it waits for the step (as ``table_hand_done`` leaves it).
    PokerTable.objects.filter(pk=waiting.pk).update(phase=services.WAITING, deadline=None)
    hand = other_session()
    try:
        with hand.transaction():  # a worker's transaction at the table playing its hand, in flight
            hand.execute("SELECT 1 FROM games_pokertable WHERE id = %s FOR UPDATE", [playing.pk])
            with transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute("SET LOCAL lock_timeout = '5s'")  # waiting for it would fail the step
                step = tournament_services.advance_tournament(tournament_id=tournament.pk, now=later)
    finally:
        hand.close()
    assert step is not None
    assert step.released == 1
    waiting.refresh_from_db()
    assert waiting.phase == services.BETWEEN
    playing.refresh_from_db()
    assert playing.phase == services.HAND


def test_the_step_never_holds_the_tournament_row_against_a_tables_foreign_key_check() -> None:
    """Lock order (issue #39): a table's transaction locks its table's row first and,
    at its commit, checks that row's foreign key to the tournament (``FOR KEY SHARE``
    on the tournament row: PostgreSQL does when the transaction updated the table's
    row twice); the step locks the tournament row first, then tables (a balancing
    move's destination waits for that table's transaction). So the step must hold
    the tournament row only in a mode that lets a key-share lock through (``FOR NO
    KEY UPDATE``), through every statement it runs: here, a bust recorded (its
    entry locked) in hand-for-hand play. Before, their entries were locked ``FOR UPDATE`` with the
    tournament row joined for the entries' ordering, and the two deadlocked."""
    tournament = make_tournament(max_players=6, table_seats=3, payouts=THREE_PAID)
    now = timezone.now()
    for _ in range(6):
        tournament_services.register(
            tournament_id=tournament.pk, player_id=make_player(), idempotency_key=f"reg-{_}", now=now
        )
    waiting = PokerTable.objects.filter(tournament=tournament).order_by("pk").last()
    assert waiting is not None
    hand = other_session()
    try:
        with transaction.atomic():  # rolled back: the forged rows below are not kept
            PokerTable.objects.filter(pk=waiting.pk).update(phase=services.WAITING, deadline=None)
            Tournament.objects.filter(pk=tournament.pk).update(hand_for_hand=True)  # busts wait for the round
            busted = waiting.seats.order_by("pk").first()
            assert busted is not None
            PokerSeat.objects.filter(pk=busted.pk).update(stack=0)
            step = tournament_services.advance_tournament(tournament_id=tournament.pk, now=now + timedelta(minutes=1))
            assert step is not None
            assert step.busted == 1
            # The step's transaction is still open: a table's foreign-key check gets through.
            row = hand.execute(
                f"SELECT 1 FROM {Tournament._meta.db_table} WHERE id = %s FOR KEY SHARE NOWAIT", [tournament.pk]
            )
            assert row.fetchone() == (1,)
            transaction.set_rollback(True)
    finally:
        hand.close()


def test_a_worker_killed_in_the_middle_of_a_hand_loses_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Worker 1 dies (``os._exit``) inside its third action's transaction, before the
    commit: nothing of that action is kept, its leases go with its session, and worker
    0 plays its tables to the end. Every hand is complete, the money exact."""
    submit = TableWorker.submit

    def dies_on_its_third_action(self: TableWorker, table: PokerTable, player: int, action: str, key: str) -> None:
        if self.worker == 1 and self.report.actions == 2:
            with transaction.atomic():
                submit(self, table, player, action, key)
                os._exit(9)  # killed before the commit
        submit(self, table, player, action, key)

    monkeypatch.setattr(TableWorker, "submit", dies_on_its_third_action)  # the forked workers inherit it
    figures = bench.play_tournament(out=StringIO(), players=18, seed=7, aggression=1.0, workers=2)

    tournament = Tournament.objects.latest("pk")
    assert tournament.state == "finished"
    assert figures["worker_errors"] == 1  # worker 1: stopped, without a report
    assert figures["leases_claimed"] >= 2  # worker 0 took worker 1's table after it died
    assert_played_to_the_end_with_the_money_exact(tournament, figures)
