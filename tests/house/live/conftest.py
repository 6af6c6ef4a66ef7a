"""Live-table fixtures: fast tables, funded players, a dealer worker the test may kill,
and what a feed test checks at a reading client (tests/feed_clients.py ``Reader``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from games.house.models import HouseTable
from games.house.services import advance_table
from tests.conftest import _database_url_for_subprocess
from tests.feed_clients import Reader
from tests.house.services.conftest import make_player, make_table

ROOT = Path(__file__).resolve().parents[3]
FAST = {
    "betting_seconds": 2,
    "warning_seconds": 1,
    "decision_seconds": 1,
    "deal_pause_seconds": 1,
    "between_rounds_seconds": 1,
}


def fast_table(game: str, **changes: Any) -> HouseTable:
    """An open table with one-to-two-second phases (tests only)."""
    table = make_table(game)
    for name, value in {**FAST, **changes}.items():
        setattr(table, name, value)
    table.save()
    return table


def wait_for(predicate: Callable[[], Any], *, timeout: float, interval: float = 0.1, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


class Worker:
    """A real ``celery worker`` process on the test database and broker, killable.
    Besides the default queue it consumes its own (``queue``), so a test can hand
    a task to this worker and no other (the session's worker may be running)."""

    def __init__(self, name: str) -> None:
        self.queue = f"{name}-{os.getpid()}"
        env = dict(os.environ, DATABASE_URL=_database_url_for_subprocess(), PYTHONUNBUFFERED="1")
        self.log_path = settings.VAR_DIR / f"test-live-{name}.log"
        self.log = open(self.log_path, "wb")  # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "casino", "worker", "--loglevel", "INFO", "--pool", "solo",
             "--without-gossip", "--without-mingle", "--without-heartbeat",
             "--hostname", f"{name}-{os.getpid()}@%h", "--queues", f"celery,{self.queue}"],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip

    def wait_ready(self, timeout: float = 60) -> None:
        wait_for(lambda: b"ready." in self.log_path.read_bytes(), timeout=timeout, what="worker ready")

    def kill(self) -> None:
        """SIGKILL: no warm shutdown, no ack of the task in hand."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=20)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


@pytest.fixture
def spawn_worker() -> Iterator[Callable[[str], Worker]]:
    workers: list[Worker] = []

    def spawn(name: str) -> Worker:
        worker = Worker(name)
        workers.append(worker)
        worker.wait_ready()
        return worker

    yield spawn
    for worker in workers:
        worker.stop()


def change(table_id: int) -> tuple[float, int]:
    """One dealer step at the table's deadline; (commit time, the seq before it)."""
    current = HouseTable.objects.get(pk=table_id)
    assert current.deadline is not None
    assert advance_table(table_id=table_id, expected_seq=current.phase_seq, now=current.deadline) is not None
    return time.monotonic(), current.public_seq


def seqs(reader: Reader) -> list[int]:
    return [frame["seq"] for frame in reader.of("delta")]


def latencies(reader: Reader, changes: list[tuple[float, int]]) -> list[float]:
    """For each change: the time from its commit to the first delta past the seq before it."""
    out = []
    for committed, before in changes:
        arrived = [at for at, frame in reader.frames if frame["type"] == "delta" and frame["seq"] > before]
        assert arrived, (before, seqs(reader))
        out.append(arrived[0] - committed)
    return out


def assert_every_delta(reader: Reader, table_id: int) -> None:
    """Every delta from the client's snapshot to the table's seq now, each once."""
    snapshot = reader.of("snapshot")[0]["seq"]
    got = seqs(reader)
    assert got == list(range(snapshot + 1, HouseTable.objects.get(pk=table_id).public_seq + 1)), got


__all__ = [
    "FAST",
    "Worker",
    "assert_every_delta",
    "change",
    "fast_table",
    "latencies",
    "make_player",
    "seqs",
    "wait_for",
]
