"""The dealer loop on real Celery worker processes and PostgreSQL: rounds repeat,
a worker killed (SIGKILL) in the middle of a phase change and a task delivered
twice never pay twice and never leave a round stuck, a round whose dealer is
gone too long is voided with every wager returned (ARCHITECTURE.md, "The dealer
loop"; RULES.md, "Malfunction voids all pays and play")."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from games.house.models import HouseRound, HouseTable, PlayerRound
from games.house.services import advance_table, dealer, make_decision, place_chip, start_table
from games.house.tasks import advance_table_task
from ledger.services.events import read_stream
from ledger.services.verify import verify_ledger
from tests.conftest import _database_url_for_subprocess
from tests.house.live.conftest import Worker, fast_table, make_player, wait_for
from tests.house.services.conftest import key, wallet

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
FUNDS = 100_000


def player_events(round_id: str, player_id: int) -> list[str]:
    return [e.type for e in read_stream(stream_id=f"round-{round_id}-player-{player_id}")]


def settled_row(table: HouseTable, player_id: int) -> PlayerRound | None:
    return PlayerRound.objects.filter(table=table, player_id=player_id, status__in=["settled", "voided"]).first()


def assert_paid_once(row: PlayerRound, player_id: int) -> None:
    """One settlement event for the player, and the wallet moved by exactly the round's net."""
    types = player_events(row.round.round_id, player_id)
    assert types.count("house_player.settled") + types.count("house_player.voided") == 1, types
    assert wallet(player_id) == FUNDS + row.net
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []


def kill_while_blocked(
    victim: Worker, *, lock: tuple[str, list[Any]], send: Callable[[], Any], waiting_on: str, after_writes: bool = False
) -> None:
    """Hold a row lock (``lock``) from another connection, hand the victim its
    task (``send``), wait until the victim's transaction waits on that lock in a
    statement like ``waiting_on`` (having already written, with
    ``after_writes``), then SIGKILL the worker and release the lock."""
    written = " AND backend_xid IS NOT NULL" if after_writes else ""
    with psycopg.connect(_database_url_for_subprocess().replace("postgres://", "postgresql://")) as blocker:
        blocker.execute(*lock)
        send()

        def worker_waiting() -> bool:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    f"AND query ILIKE %s AND datname = current_database(){written}",
                    [waiting_on],
                )
                return bool(cursor.fetchone()[0])

        wait_for(worker_waiting, timeout=20, what=f"the worker waiting in {waiting_on}")
        victim.kill()
        blocker.rollback()
    time.sleep(0.5)


def test_rounds_repeat_on_a_real_worker(spawn_worker) -> None:
    spawn_worker("loop")
    table = fast_table("uth")
    alice = make_player(table, funds=FUNDS)
    tick = dealer.start(table_id=table.pk)
    assert tick.phase == "betting"
    assert tick.deadline > timezone.now()
    place_chip(table_id=table.pk, player_id=alice, spot="ante", amount=100, idempotency_key=key(), now=timezone.now())
    row = wait_for(lambda: settled_row(table, alice), timeout=40, what="alice's wagers settled by the worker")
    assert row.status == "settled"
    assert_paid_once(row, alice)
    # Rounds repeat while the table is open: the worker opens the next betting window.
    wait_for(
        lambda: (
            HouseRound.objects.filter(table=table).count() >= 2
            and HouseTable.objects.get(pk=table.pk).phase == "betting"
        ),
        timeout=20,
        what="the next round",
    )


def test_a_worker_killed_mid_phase_change_leaves_nothing_stuck_or_paid_twice(spawn_worker) -> None:
    victim = spawn_worker("victim")
    table = fast_table("uth")
    alice = make_player(table, funds=FUNDS)
    tick = start_table(table_id=table.pk, now=timezone.now())
    assert tick.deadline is not None
    place_chip(table_id=table.pk, player_id=alice, spot="ante", amount=200, idempotency_key=key(), now=timezone.now())
    # The dealer's task for the deadline, handed to the victim alone. The table row
    # is held from another connection: the worker's close-betting task blocks
    # inside its transaction, and is killed right there.
    deadline = tick.deadline
    kill_while_blocked(
        victim,
        lock=("SELECT id FROM games_housetable WHERE id = %s FOR UPDATE", [table.pk]),
        send=lambda: advance_table_task.apply_async(args=(table.pk, tick.phase_seq), eta=deadline, queue=victim.queue),
        waiting_on="%games_housetable%",
    )
    table.refresh_from_db()
    assert (table.phase, table.phase_seq) == ("betting", tick.phase_seq), "the killed transaction left nothing"
    # Beat's sweeper is the backstop: it advances the overdue table until the round is over.
    grace = timedelta(seconds=settings.CASINO_SWEEP_GRACE_SECONDS + 0.01)
    for _ in range(20):
        table.refresh_from_db()
        if table.phase in ("between", "idle"):
            break
        assert table.deadline is not None
        dealer.sweep(now=table.deadline + grace)
    row = settled_row(table, alice)
    assert row is not None
    assert row.status == "settled"
    assert_paid_once(row, alice)
    # The dead worker's task, delivered again (twice) to a new worker, finds the table moved on.
    events_before = HouseRound.objects.get(pk=row.round_id).stream_version
    survivor = spawn_worker("survivor")
    results = [advance_table_task.apply_async(args=(table.pk, tick.phase_seq), queue=survivor.queue) for _ in range(2)]
    wait_for(
        lambda: survivor.log_path.read_bytes().count(b"games.advance") >= 4, timeout=20, what="both tasks ran"
    )  # "received" + "succeeded" per task
    assert all(r.id for r in results)
    assert HouseRound.objects.get(pk=row.round_id).stream_version == events_before
    assert_paid_once(PlayerRound.objects.get(pk=row.pk), alice)


def test_a_worker_killed_mid_settlement_after_its_first_writes_leaves_nothing_paid_twice(spawn_worker) -> None:
    """The showdown step is killed after it has appended events and resolved
    holds, while its balance update waits on the house's account row: the
    transaction dies whole, and the sweeper settles the round once."""
    from ledger.models import Event
    from ledger.services import house_account

    victim = spawn_worker("victim-settle")
    table = fast_table("uth", decision_seconds=60)
    alice = make_player(table, funds=FUNDS)
    tick = start_table(table_id=table.pk, now=timezone.now())
    assert tick.deadline is not None
    place_chip(table_id=table.pk, player_id=alice, spot="ante", amount=200, idempotency_key=key(), now=timezone.now())
    dealt = advance_table(table_id=table.pk, expected_seq=tick.phase_seq, now=tick.deadline)
    assert dealt is not None
    assert dealt.phase == "preflop"
    tick = dealt
    decided = make_decision(table_id=table.pk, player_id=alice, option="call4x", idempotency_key=key(),
                            now=timezone.now())  # fmt: skip
    assert decided.all_decided  # the showdown may run now (early advance), before the window's deadline
    events_before = Event.objects.count()
    house = house_account(table_id=table.pk, currency="EUR")
    kill_while_blocked(
        victim,
        lock=("SELECT id FROM ledger_account WHERE id = %s FOR UPDATE", [house]),
        send=lambda: advance_table_task.apply_async(args=(table.pk, tick.phase_seq), queue=victim.queue),
        waiting_on="%UPDATE ledger_account%",
        after_writes=True,
    )
    table.refresh_from_db()
    assert (table.phase, table.phase_seq) == ("preflop", tick.phase_seq), "the killed transaction left nothing"
    assert Event.objects.count() == events_before
    assert "house_player.settled" not in player_events(tick.round_id, alice)
    grace = timedelta(seconds=settings.CASINO_SWEEP_GRACE_SECONDS + 0.01)
    assert table.deadline is not None
    dealer.sweep(now=table.deadline + grace)
    table.refresh_from_db()
    assert table.phase in ("between", "idle")
    row = settled_row(table, alice)
    assert row is not None
    assert row.status == "settled"
    assert_paid_once(row, alice)


def test_a_round_whose_dealer_is_gone_is_voided_with_refunds_and_a_reason() -> None:
    table = fast_table("casino_holdem")
    alice = make_player(table, funds=FUNDS)
    bob = make_player(table, funds=FUNDS)
    tick = start_table(table_id=table.pk, now=timezone.now())  # nothing scheduled: no dealer at all
    assert tick.deadline is not None
    for player, amount in ((alice, 300), (bob, 500)):
        place_chip(
            table_id=table.pk, player_id=player, spot="ante", amount=amount, idempotency_key=key(), now=timezone.now()
        )
    assert wallet(alice) == FUNDS - 300
    # Within the limit the sweeper advances; past it the round cannot continue and is voided.
    gone = timedelta(seconds=settings.CASINO_DEALER_GONE_VOID_SECONDS + 1)
    done = dealer.sweep(now=tick.deadline + gone)
    assert done["voided"] == 1
    assert wallet(alice) == FUNDS
    assert wallet(bob) == FUNDS
    round_events = read_stream(stream_id=f"round-{tick.round_id}")
    voided = [e for e in round_events if e.type == "house_round.voided"]
    assert len(voided) == 1
    assert voided[0].data["automatic"] is True
    assert voided[0].data["reason"].startswith("dealer_gone")
    for player in (alice, bob):
        told = [e for e in read_stream(stream_id=f"round-{tick.round_id}-player-{player}") if e.type.endswith("voided")]
        assert len(told) == 1
        assert told[0].data["reason"].startswith("dealer_gone")
    # A second sweep neither voids again nor pays anything.
    dealer.sweep(now=tick.deadline + gone)
    assert wallet(alice) == FUNDS
    assert wallet(bob) == FUNDS
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []


def test_the_sweeper_advances_an_overdue_table_but_not_one_within_grace() -> None:
    table = fast_table("uth")
    make_player(table, funds=FUNDS)
    tick = start_table(table_id=table.pk, now=timezone.now())
    assert tick.deadline is not None
    within = tick.deadline + timedelta(seconds=settings.CASINO_SWEEP_GRACE_SECONDS / 2)
    assert dealer.sweep(now=within)["advanced"] == 0
    assert HouseTable.objects.get(pk=table.pk).phase_seq == tick.phase_seq
    overdue = tick.deadline + timedelta(seconds=settings.CASINO_SWEEP_GRACE_SECONDS + 0.5)
    assert dealer.sweep(now=overdue)["advanced"] == 1
    assert HouseTable.objects.get(pk=table.pk).phase_seq > tick.phase_seq


def lose_this_connection() -> None:
    """Have the database end this process's connection (as a restart or a network failure would)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    with psycopg.connect(_database_url_for_subprocess().replace("postgres://", "postgresql://")) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])


def raise_a_bug() -> None:
    raise RuntimeError("simulated failure")


@pytest.mark.parametrize("fault", [raise_a_bug, lose_this_connection], ids=["a bug", "a lost connection"])
def test_one_tables_failure_does_not_keep_the_sweep_from_the_others(monkeypatch, fault) -> None:
    """The beat backstop goes on to the next table when one table's step fails
    (a bug, or the database dropping the connection: the next table gets a new
    one): that table is counted as failed and left as it was, and the others
    are still advanced."""
    broken, healthy = fast_table("uth"), fast_table("casino_holdem")
    ticks = {}
    for table in (broken, healthy):
        make_player(table, funds=FUNDS)
        ticks[table.pk] = start_table(table_id=table.pk, now=timezone.now())
    real_advance = dealer.advance

    def failing_at_one_table(*, table_id: int, **kwargs: object) -> object:
        if table_id == broken.pk:
            fault()
        return real_advance(table_id=table_id, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(dealer, "advance", failing_at_one_table)
    deadline = max(tick.deadline for tick in ticks.values() if tick.deadline is not None)
    done = dealer.sweep(now=deadline + timedelta(seconds=settings.CASINO_SWEEP_GRACE_SECONDS + 0.5))
    assert (done["failed"], done["advanced"]) == (1, 1)
    assert HouseTable.objects.get(pk=broken.pk).phase_seq == ticks[broken.pk].phase_seq
    assert HouseTable.objects.get(pk=healthy.pk).phase_seq > ticks[healthy.pk].phase_seq


def test_an_open_idle_table_is_started_by_the_sweeper() -> None:
    table = fast_table("xtreme")
    assert table.phase == "idle"
    assert dealer.sweep()["started"] == 1
    table.refresh_from_db()
    assert table.phase == "betting"
    assert table.current_round_id
