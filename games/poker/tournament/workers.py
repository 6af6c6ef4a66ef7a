"""One tournament's tables played by several processes (``bench tournament``,
issue #39): nothing is shared between them but PostgreSQL and Redis.

Worker ``i`` of ``n`` owns the open tables whose id is ``i`` modulo ``n``: it
plays the dealer's steps and the bots' actions there, as ``TournamentDriver``
does at every table (a hand's dealer state stays in one process's cache). The
tournament's step (busts, the level clock, balancing moves, breaking tables,
hand-for-hand, the final table, the payouts) is already safe when two
processes reach it: ``advance_tournament`` locks the tournament row, then its
open tables in id order, so two steps run one after the other, and a step
waits for a table transaction in flight (a hand's action holds its table's
row) and moves players only from the tables between hands. A table moved to
another worker's share by balancing is simply played by that worker from then.

The clock is shared (``SharedClock``): a counter in Redis, moved on by each
worker after its share of a round by ``seconds_per_round`` times its share of
the open tables, so one sweep of every table moves it on by
``seconds_per_round`` however the tables are shared, as the one-process driver's
clock does. It only moves forward; a worker reads it before each table step,
and reads it under the tournament's row lock for the tournament's step, so
the steps see it in order (the level never goes back).
"""

from __future__ import annotations

import multiprocessing
import time
import traceback
import uuid
from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Any

import redis
from django.conf import settings
from django.db import OperationalError, connections, transaction
from psycopg.errors import DeadlockDetected

from games.cards.shuffle import SeededRandomSource
from games.poker.models import PokerTable
from games.poker.tournament import services as tournament_services
from games.poker.tournament.driver import DriveReport, TournamentDriver
from games.poker.tournament.models import Tournament, TournamentState
from games.poker.tournament.services.core import lock_tournament
from games.tables import pacing

IDLE_SLEEP = 0.02  # seconds a worker with no table of its own waits before looking again


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


class TableWorker(TournamentDriver):
    """Worker ``worker`` of ``workers``: plays the tournament's open tables whose
    id is ``worker`` modulo ``workers``, on the shared ``clock``, until the
    tournament is over."""

    def __init__(self, tournament_id: int, *, worker: int, workers: int, clock: SharedClock, **options: Any) -> None:
        super().__init__(tournament_id, start=clock.now(), **options)
        self.worker = worker
        self.workers = workers
        self.shared = clock
        self.round_seconds = self.step_seconds.total_seconds()
        self.stepped = False  # the tournament's step ran in this round

    def owns(self, table: PokerTable) -> bool:
        return table.pk % self.workers == self.worker

    def table_step(self, table: PokerTable) -> bool:
        """One step at ``table`` at the shared clock. A transaction PostgreSQL
        aborts as a deadlock's victim changed nothing: the table's step is
        taken again next round, as a retried task would (``report.retried``)."""
        self.now = self.shared.now()
        try:
            return super().table_step(table)
        except OperationalError as error:
            if not isinstance(error.__cause__, DeadlockDetected):
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

    def run(self, *, max_rounds: int = 1_000_000, on_round: Any = None) -> DriveReport:
        """Rounds over this worker's tables until the tournament is over (or ``max_rounds``)."""
        with pacing.suppress_scheduling():
            for _ in range(max_rounds):
                state = Tournament.objects.filter(pk=self.tournament_id).values_list("state", flat=True).get()
                if state != TournamentState.RUNNING:
                    break
                tables = list(PokerTable.objects.filter(tournament_id=self.tournament_id, is_open=True).order_by("pk"))
                mine = [table for table in tables if self.owns(table)]
                self.stepped = False
                for table in mine:
                    self.table_step(table)
                self.report.rounds += 1
                if mine:
                    self.now = self.shared.advance(self.round_seconds * len(mine) / len(tables))
                else:  # the other workers hold every table left: they move the clock
                    time.sleep(IDLE_SLEEP)
                if on_round is not None:
                    on_round(self.report)
        self.report.state = Tournament.objects.filter(pk=self.tournament_id).values_list("state", flat=True).get()
        self.report.finished = self.report.state == TournamentState.FINISHED
        self.report.clock = self.now
        return self.report


def _worker_main(tournament_id: int, worker: int, workers: int, key: str, start: datetime, seed: int,
                 aggression: float, seconds_per_round: float, out: Any) -> None:  # fmt: skip
    """A forked worker process: its own database connection and Redis client."""
    clock = SharedClock(key=key, start=start)
    try:
        player = TableWorker(
            tournament_id, worker=worker, workers=workers, clock=clock, seed=seed * 1000 + worker,
            aggression=aggression, seconds_per_round=seconds_per_round,
            rng_source=SeededRandomSource(seed * 1000 + worker),
        )  # fmt: skip
        report = player.run()
        out.put((worker, asdict(report)))
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
    before the fork: each child opens its own."""
    key = f"poker:tournament-clock:{tournament_id}:{uuid.uuid4().hex}"
    ctx = multiprocessing.get_context("fork")
    connections.close_all()
    out = ctx.Queue()
    options = (key, start, seed, aggression, seconds_per_round, out)
    processes = [ctx.Process(target=_worker_main, args=(tournament_id, i, workers, *options)) for i in range(workers)]
    for process in processes:
        process.start()
    reports: dict[int, dict[str, Any]] = {}
    try:
        for _ in processes:
            worker, report = out.get(timeout=timeout)
            reports[worker] = report
            if report.get("errors"):  # the others would wait for its tables for ever
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
    return [reports.get(i, {"tournament_id": tournament_id, "errors": [f"worker {i} stopped"]}) for i in range(workers)]
