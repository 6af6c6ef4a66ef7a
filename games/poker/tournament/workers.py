"""One tournament's tables played by several processes (``bench tournament``,
issue #39): nothing is shared between them but PostgreSQL and Redis.

Tables are claimed, not assigned: a worker plays a table while its database
session holds the table's lease, a session-level advisory lock
(``pg_try_advisory_lock(LEASE_TABLE, table id)``). Only the holder plays the
table (the dealer's steps and the bots' actions, as ``TournamentDriver`` does
at every table; the hand's dealer state stays in the holder's cache), so no
table is played by two workers at once. Every worker holds a shared lock
(``LEASE_WORKER``, tournament id) while it runs, so each counts the workers
alive from ``pg_locks``, and each round it takes its fair share of the open
tables (``ceil(open / alive)``) from those nobody holds and lets go of what
it holds beyond it: as tables break and balance, and in the late stages, the
tables stay spread over the workers. A worker that dies (or loses its
connection) loses its session and with it its leases at once: its
transaction in flight is rolled back (no hand lost, none doubled: every step
is one transaction, and the next holder reads the hand from its stream), and
the others, counting one worker fewer, claim its tables the next round.

A worker that hangs with its connection alive would keep its leases for ever:
each round every worker evicts (``Leases.evict_stalled``: ``pg_terminate_backend``)
the session of any other worker of the tournament that has sent no statement for
``STALLED_SECONDS``, which ends as a dead worker's does. It never plays a table
at the same time as its successor: the successor takes the lease only once the
hung backend has exited, and the hung process cannot commit anything after
that (its connection is dead); when it wakes it finds its session lost
(``check_session`` before every table's step: Django would open a new
connection, without the leases, after a failed transaction) and joins again in
a new session holding nothing. Worker sessions wait for a lock for at most
``STALLED_SECONDS`` (``lock_timeout``), so none waits for ever on a row a hung
worker holds.

The tournament's step (busts, the level clock, balancing moves, breaking
tables, hand-for-hand, the final table, the payouts) is safe when two
processes reach it: ``advance_tournament`` locks the tournament row (never in a mode a table's
foreign-key check waits for), then only the tables waiting for it (and a
balancing move's destination), so it seldom waits for a hand in flight, and
two steps run one after the other (the lock order: ``step``'s docstring).

The clock is shared (``SharedClock``): a counter in Redis, moved on by each
worker after its share of a round by ``seconds_per_round`` times its share of
the open tables, so one sweep of every table moves it on by
``seconds_per_round`` however the tables are shared, as the one-process driver's
clock does. It only moves forward; a worker reads it before each table step,
and reads it under the tournament's row lock for the tournament's step, so
the steps see it in order (the level never goes back).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import time
import traceback
import uuid
from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Any

import redis
from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, connections, transaction
from psycopg.errors import DeadlockDetected, LockNotAvailable

from games.cards.shuffle import SeededRandomSource
from games.poker.models import PokerTable
from games.poker.store.leases import Leases
from games.poker.tournament import services as tournament_services
from games.poker.tournament.driver import DriveReport, TournamentDriver
from games.poker.tournament.models import Tournament, TournamentState
from games.poker.tournament.services.core import lock_tournament
from games.tables import pacing

IDLE_SLEEP = 0.1  # seconds a worker with no table waits before looking again (its queries cost the others CPU)
JOIN_WAIT = 30.0  # seconds a worker waits at most for the others to join before its first round
STALLED_SECONDS = 30.0  # a worker whose session sent no statement for this long is hung: evicted (``Leases``)


class SessionLost(Exception):
    """This worker's database session (and with it its leases) is gone: evicted as
    stalled, or its connection dropped."""


class SharedClock:
    """A tournament's clock shared by its worker processes: ``start`` plus a
    counter of microseconds in Redis (``key``) that only moves forward."""

    def __init__(self, *, key: str, start: datetime, url: str | None = None) -> None:
        self.key = key
        self.start = start
        self.redis = redis.Redis.from_url(url or settings.REDIS_URL)

    def now(self) -> datetime:
        return self.start + timedelta(microseconds=int(self.redis.get(self.key) or 0))

    def advance(self, seconds: float) -> datetime:
        """Move the clock on by ``seconds`` (atomically, whoever else moves it); the new time."""
        return self.start + timedelta(microseconds=int(self.redis.incrby(self.key, int(seconds * 1_000_000))))

    def close(self) -> None:
        self.redis.close()


def fair_share(open_tables: int, alive: int) -> int:
    """The most tables one of ``alive`` workers holds: ``ceil(open / alive)``."""
    return -(-open_tables // max(1, alive))


class TableWorker(TournamentDriver):
    """A worker of tournament ``tournament_id`` (``worker`` names it in reports and
    seeds): plays the open tables whose lease it holds, its fair share of them, on
    the shared ``clock``, until the tournament is over."""

    def __init__(self, tournament_id: int, *, worker: int, clock: SharedClock, **options: Any) -> None:
        super().__init__(tournament_id, start=clock.now(), **options)
        self.worker = worker
        self.shared = clock
        self.round_seconds = self.step_seconds.total_seconds()
        self.stepped = False  # the tournament's step ran in this round
        self.leases = Leases(tournament_id)
        self.claimed = 0  # leases taken (reported)
        self.released = 0  # leases let go of beyond the fair share (reported)
        self.stalled_seconds = STALLED_SECONDS
        self.session_pid: int | None = None  # the backend whose session holds this worker's leases
        self.evicted = 0  # stalled workers' sessions this one ended (reported)
        self.sessions_lost = 0  # this worker's own sessions lost, each followed by a new one (reported)

    def join(self) -> None:
        """Join the tournament's workers in this connection's session (a new one after
        a session is lost), remembered by its backend's pid: the leases this worker
        takes are that session's. A lock wait longer than ``stalled_seconds`` fails
        (``LockNotAvailable``, retried like a deadlock's victim): a live worker never
        waits for ever on a row a hung one holds, and evicts it the next round."""
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('lock_timeout', %s, false)", [f"{int(self.stalled_seconds * 1000)}ms"])
        self.leases.join()
        self.session_pid = connection.connection.info.backend_pid

    def check_session(self) -> None:
        """``SessionLost`` unless this worker's connection is still the session that
        joined (no round trip). Django opens a new connection after a failed
        transaction closed the old one; a table step in that new session would play
        a table whose lease it does not hold, so none runs there."""
        if not self.session_alive():
            raise SessionLost

    def session_alive(self) -> bool:
        raw = connection.connection
        return raw is not None and not raw.closed and raw.info.backend_pid == self.session_pid

    def share(self, tables: list[PokerTable]) -> list[PokerTable]:
        """The tables this worker plays this round: those it holds, topped up to its fair
        share from the tables nobody holds (lowest id first), less what it holds beyond
        the share (let go of, highest id first, for a worker with fewer to take)."""
        ids = [table.pk for table in tables]
        mine, theirs, alive = self.leases.holders(ids)
        share = fair_share(len(ids), alive)
        if len(mine) < share:
            free = [pk for pk in ids if pk not in mine and pk not in theirs]
            taken = self.leases.claim(free[: share - len(mine)])
            self.claimed += len(taken)
            mine |= taken
        elif len(mine) > share:
            extra = sorted(mine)[share:]
            self.leases.release(extra)
            self.released += len(extra)
            mine -= set(extra)
        return [table for table in tables if table.pk in mine]

    def table_step(self, table: PokerTable) -> bool:
        """One step at ``table`` at the shared clock. A transaction PostgreSQL
        aborts as a deadlock's victim changed nothing: the table's step is
        taken again next round, as a retried task would (``report.retried``), and
        so is one that waited on a lock for ``stalled_seconds`` (``join``)."""
        self.check_session()
        self.now = self.shared.now()
        try:
            return super().table_step(table)
        except OperationalError as error:
            if not isinstance(error.__cause__, DeadlockDetected | LockNotAvailable):
                raise
            self.report.retried += 1
            return False

    def tournament_step(self) -> bool:
        """The tournament's step at the shared clock read under the tournament's
        row lock: the steps of every worker see the clock in order. Once per
        round: the first releases every table that waited when the round began
        (the round's list of tables is not read again), and a table still
        waiting (hand-for-hand) gets its step next round."""
        if self.stepped:
            return False
        self.stepped = True
        with transaction.atomic():
            lock_tournament(self.tournament_id)
            self.now = self.shared.now()
            step = tournament_services.advance_tournament(
                tournament_id=self.tournament_id, now=self.now, rng=self.rng_source
            )
        return step is not None

    def play_round(self) -> bool:
        """One round: stalled workers evicted, this worker's share of the open tables
        claimed and each played one step; False once the tournament is over."""
        state = Tournament.objects.filter(pk=self.tournament_id).values_list("state", flat=True).get()
        if state != TournamentState.RUNNING:
            return False
        self.evicted += len(self.leases.evict_stalled(self.stalled_seconds))
        tables = list(PokerTable.objects.filter(tournament_id=self.tournament_id, is_open=True).order_by("pk"))
        mine = self.share(tables)
        self.stepped = False
        for table in mine:
            if self.table_step(table):
                self.report.table_steps += 1
        self.report.rounds += 1
        if mine:
            self.now = self.shared.advance(self.round_seconds * len(mine) / len(tables))
        else:  # the other workers hold every table left: they move the clock
            time.sleep(IDLE_SLEEP)
        return True

    def run(self, *, workers: int = 1, max_rounds: int = 1_000_000, on_round: Any = None) -> DriveReport:
        """Rounds over this worker's share of the tables until the tournament is over (or
        ``max_rounds``); the first once ``workers`` have joined (or ``JOIN_WAIT`` passed),
        so that the first does not claim every table."""
        self.join()
        try:
            waited = time.monotonic() + JOIN_WAIT
            while self.leases.holders([])[2] < workers and time.monotonic() < waited:
                time.sleep(IDLE_SLEEP)
            with pacing.suppress_scheduling():
                for _ in range(max_rounds):
                    try:
                        if not self.play_round():
                            break
                    except (SessionLost, OperationalError, InterfaceError):
                        if self.session_alive():
                            raise  # a failure in a live session: a bug, not a lost session
                        # Evicted as stalled (or the connection dropped): the session and its
                        # leases are gone, its transaction rolled back. Join again in a new one.
                        self.sessions_lost += 1
                        connection.close()
                        self.join()
                    if on_round is not None:
                        on_round(self.report)
        finally:
            with contextlib.suppress(OperationalError, InterfaceError):  # a lost session's locks went with it
                self.leases.leave()
        self.report.state = Tournament.objects.filter(pk=self.tournament_id).values_list("state", flat=True).get()
        self.report.finished = self.report.state == TournamentState.FINISHED
        self.report.clock = self.now
        return self.report


def backend_cpu_seconds() -> float | None:
    """CPU seconds (user + system) of this connection's PostgreSQL backend so far,
    read from ``/proc`` (``None`` when the server is not on this machine)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    return process_cpu_seconds(pid)


def process_cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user + system) of process ``pid`` so far (``/proc``); ``None`` if unreadable."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_cpu_seconds() -> tuple[float, float] | None:
    """(busy, idle) CPU seconds of every core of this machine so far (``/proc/stat``)."""
    try:
        with open("/proc/stat") as stat:
            values = [int(v) for v in stat.readline().split()[1:]]
    except OSError:
        return None
    idle = values[3] + values[4]  # idle, iowait
    busy = sum(values[:8]) - idle  # user nice system idle iowait irq softirq steal
    tick = os.sysconf("SC_CLK_TCK")
    return busy / tick, idle / tick


def _worker_main(tournament_id: int, worker: int, workers: int, key: str, start: datetime, seed: int,
                 aggression: float, seconds_per_round: float, out: Any) -> None:  # fmt: skip
    """A forked worker process: its own database connection and Redis client. Its
    report adds the CPU seconds it used (``cpu_s``) and its PostgreSQL backend
    used (``postgres_cpu_s``) while it played."""
    clock = SharedClock(key=key, start=start)
    try:
        player = TableWorker(
            tournament_id, worker=worker, clock=clock, seed=seed * 1000 + worker,
            aggression=aggression, seconds_per_round=seconds_per_round,
            rng_source=SeededRandomSource(seed * 1000 + worker),
        )  # fmt: skip
        cpu, backend = time.process_time(), backend_cpu_seconds()
        report = player.run(workers=workers)
        backend_after = backend_cpu_seconds()
        figures = asdict(report) | {
            "cpu_s": round(time.process_time() - cpu, 2),
            "postgres_cpu_s": None if backend is None or backend_after is None else round(backend_after - backend, 2),
            "leases_claimed": player.claimed,
            "leases_released": player.released,
            "workers_evicted": player.evicted,
            "sessions_lost": player.sessions_lost,
        }
        out.put((worker, figures))
    except BaseException:  # the parent reports it; the process ends either way
        out.put((worker, {"tournament_id": tournament_id, "errors": [traceback.format_exc()]}))
    finally:
        clock.close()
        connections.close_all()


def play_in_processes(tournament_id: int, *, workers: int, start: datetime, seed: int = 1,
                      aggression: float = 0.3, seconds_per_round: float = 3.0,
                      timeout: float = 6 * 3600) -> list[dict[str, Any]]:  # fmt: skip
    """Play running tournament ``tournament_id`` to the end with ``workers``
    forked processes (the clock from ``start``); each worker's report (a
    ``DriveReport`` as a dict, by worker). Django's connections are closed
    before the fork: each child opens its own. A worker that reports an error
    stops the others; one that dies without a report (killed) is reported as
    stopped, and the others play its tables (its leases went with its session)."""
    key = f"poker:tournament-clock:{tournament_id}:{uuid.uuid4().hex}"
    ctx = multiprocessing.get_context("fork")
    connections.close_all()
    out = ctx.Queue()
    options = (key, start, seed, aggression, seconds_per_round, out)
    processes = [ctx.Process(target=_worker_main, args=(tournament_id, i, workers, *options)) for i in range(workers)]
    for process in processes:
        process.start()
    reports: dict[int, dict[str, Any]] = {}
    deadline = time.monotonic() + timeout
    try:
        while len(reports) < workers and time.monotonic() < deadline:
            try:
                worker, report = out.get(timeout=1.0)
            except queue.Empty:
                if all(not process.is_alive() for i, process in enumerate(processes) if i not in reports):
                    break  # every worker left without a report has died: nothing more will come
                continue
            reports[worker] = report
            if report.get("errors"):  # a bug: stop the play
                for process in processes:
                    process.terminate()
                break
    finally:
        for process in processes:
            process.join(30)
            if process.is_alive():
                process.terminate()
        clock = SharedClock(key=key, start=start)
        clock.redis.delete(key)
        clock.close()
    return [
        reports.get(i, {"tournament_id": tournament_id, "errors": [f"worker {i} stopped ({processes[i].exitcode})"]})
        for i in range(workers)
    ]
