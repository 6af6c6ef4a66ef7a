"""Shared fixtures: a real Celery worker process, API clients."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import pytest
from _pytest.nodeid import NodeId
from django.conf import settings

from casino.processes import database_url_of, free_port, uvicorn_command

ROOT = Path(__file__).resolve().parent.parent


def _flush_past_ledger_triggers() -> None:
    """Let the test harness empty append-only tables between transactional tests.

    The ledger's triggers reject TRUNCATE/DELETE, which is what Django's flush
    does after a ``transaction=True`` test. The harness (a superuser, like a
    DBA) flushes with triggers off: ``session_replication_role = replica`` on
    PostgreSQL; on SQLite it drops and recreates the triggers around the flush.
    """
    from django.db.backends.base.operations import BaseDatabaseOperations

    from ledger import triggers

    original = BaseDatabaseOperations.execute_sql_flush

    def ledger_triggers(self: BaseDatabaseOperations, *, on: bool) -> None:
        vendor = self.connection.vendor
        with self.connection.cursor() as cursor:
            if vendor == "postgresql":
                cursor.execute(f"SET session_replication_role = {'origin' if on else 'replica'}")
            elif vendor == "sqlite":
                triggers.run(cursor, vendor, install=on)
                triggers.run_epoch_guards(cursor, vendor, install=on)

    def execute_sql_flush(self: BaseDatabaseOperations, sql_list: Iterable[str]) -> None:
        ledger_triggers(self, on=False)
        try:
            original(self, sql_list)
        finally:
            ledger_triggers(self, on=True)

    BaseDatabaseOperations.execute_sql_flush = execute_sql_flush  # type: ignore[method-assign]


_flush_past_ledger_triggers()


@pytest.fixture(autouse=True)
def _fresh_request_rates() -> None:
    """Each test starts with no request-rate history (``casino.throttling``).

    On Redis the history outlives the test (and the run, for a minute): only
    the throttles' keys are removed, never the channel layer's or the broker's.
    """
    from django.core.cache import caches
    from django.core.cache.backends.redis import RedisCache

    cache = caches["throttles"]
    if not isinstance(cache, RedisCache):
        cache.clear()
        return
    client = cache._cache.get_client(write=True)
    prefix = settings.CACHES["throttles"]["KEY_PREFIX"]
    stale = list(client.scan_iter(match=f"{prefix}:*", count=1000))
    if stale:
        client.delete(*stale)


def _database_url_for_subprocess() -> str:
    """The URL of the database the tests use (the test database, once created)."""
    return database_url_of(settings.DATABASES["default"])


def _stop(process: subprocess.Popen[bytes], log: IO[bytes]) -> None:
    """Stop a process the harness started (killed if it has not ended after 20 s), drop its live
    metrics gauges (``casino.metrics.process_dead``), then close its log."""
    from casino import metrics

    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    metrics.process_dead(process.pid)
    log.close()


@contextmanager
def uvicorn_process(*, log_name: str, ready_path: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """A uvicorn process of the project on the test database (``env`` on top of
    the tests' environment), its output in ``settings.VAR_DIR / log_name`` (``var/``,
    or ``var/xdist/gwN/`` in an xdist worker: tests/services.py); yields its base
    URL once ``ready_path`` answers, and stops it on exit."""
    import httpx

    port = free_port()
    full = dict(os.environ, DATABASE_URL=_database_url_for_subprocess(), PYTHONUNBUFFERED="1")
    full.update(env or {})
    log = open(settings.VAR_DIR / log_name.format(port=port), "wb")  # noqa: SIM115 (closed below)
    process = subprocess.Popen(
        # A bounded shutdown: open sockets and the feed's tasks are cancelled after 2 s, not waited for.
        uvicorn_command(host="127.0.0.1", port=port, extra=["--timeout-graceful-shutdown", "2"]),
        cwd=ROOT, env=full, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{base}{ready_path}", timeout=2)
                break
            except httpx.HTTPError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"uvicorn did not start; see {log.name}") from None
                time.sleep(0.2)
        yield base
    finally:
        _stop(process, log)


@pytest.fixture(scope="session")
def asgi_server(django_db_setup, django_db_blocker) -> Iterator[str]:
    """A real uvicorn process serving the project on the test database; yields its base URL.

    Tests that write data for it to see must be ``django_db(transaction=True)``.
    """
    with uvicorn_process(log_name="test-asgi.log", ready_path="/api/") as base:
        yield base


@contextmanager
def celery_worker(
    *, log_name: str = "test-worker.log", env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """A real ``celery worker`` process on the test broker and the test database
    (``env`` on top of the tests' environment), its output in ``settings.VAR_DIR / log_name``;
    yields it once it answers the broker's ping, and stops it on exit."""
    from casino.health import check_broker

    full = dict(os.environ, DATABASE_URL=_database_url_for_subprocess(), PYTHONUNBUFFERED="1")
    full.update(env or {})
    log = open(settings.VAR_DIR / log_name, "wb")  # noqa: SIM115 (closed at teardown)
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "casino", "worker", "--loglevel", "INFO", "--pool", "solo",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "--hostname", f"test-{os.getpid()}@%h"],
        cwd=ROOT, env=full, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not check_broker(timeout=2).ok:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"celery worker did not start; see {log.name}")
        yield process
    finally:
        _stop(process, log)


@pytest.fixture(scope="module")
def celery_worker_process(django_db_setup, django_db_blocker) -> Iterator[subprocess.Popen[bytes]]:
    """A real ``celery worker`` process (``celery_worker``) for one test module: a
    worker left running would deal and time out other modules' tables (their
    tasks are enqueued on commit, due at once)."""
    with celery_worker() as process:
        yield process


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every item has its own node id: pytest-xdist's schedulers key tests by it,
    and ``--dist loadfile`` (``make test``) runs one of each duplicated id only.

    The schemathesis items of ``tests/platform/test_schema_fuzz.py`` (schemathesis
    4.32 on pytest 9.2) all carry their function's id (``::test_as_player``, pytest 9
    builds it from ``originalname``); each gets its name's
    (``::test_as_player[GET /api/...]``). pytest has no public way to set an id:
    this sets ``_id`` (pytest 9) and stops the run if any id is still shared.
    """
    counts = Counter(item.nodeid for item in items)
    for item in items:
        if counts[item.nodeid] > 1 and item.parent is not None and item.nodeid != f"{item.parent.nodeid}::{item.name}":
            item._id = NodeId.parse(f"{item.parent.nodeid}::{item.name}")
    shared = [nodeid for nodeid, count in Counter(item.nodeid for item in items).items() if count > 1]
    if shared:
        raise pytest.UsageError(f"tests share a node id (pytest-xdist would run one of them): {shared[:5]}")


def _uses_database(item: pytest.Item) -> bool:
    names = getattr(item, "fixturenames", ())
    return item.get_closest_marker("django_db") is not None or "db" in names or "transactional_db" in names


def _projections_in_play() -> list[str]:
    """The registered projections whose streams have events or whose own table has rows."""
    from django.db import connection

    from ledger.services.projectors import registered_projectors

    projectors = registered_projectors()
    prefixes = sorted({p for cls in projectors.values() for p in cls.stream_prefixes})
    tables = sorted({cls.model._meta.db_table for cls in projectors.values() if cls.owns_rows})
    probes: list[tuple[str, str | bool]] = [
        ("SELECT 1 FROM ledger_event WHERE stream_id LIKE %s", prefix + "%") for prefix in prefixes
    ]
    probes += [(f"SELECT 1 FROM {connection.ops.quote_name(table)} WHERE %s", True) for table in tables]
    with connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(f"EXISTS({sql})" for sql, _ in probes), [arg for _, arg in probes])
        found = dict(zip([*prefixes, *tables], cursor.fetchone(), strict=True))
    return [
        name
        for name, cls in projectors.items()
        if any(found[p] for p in cls.stream_prefixes) or (cls.owns_rows and found[cls.model._meta.db_table])
    ]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """After a test that played rounds, hands or tournaments, the read models
    rebuilt from the log equal the live ones (issue #24): a difference fails the
    test, named. The projections compared are those with something to compare:
    a stream they read has events, or their table has rows (one query finds
    them; none for most tests, which then cost nothing more)."""
    result = yield
    if _uses_database(item):
        from ledger.services.projectors import check_projections

        wanted = _projections_in_play()
        if wanted:
            differences = check_projections(wanted)
            assert not differences, "projections differ from their rebuild from the log:\n" + "\n".join(
                str(d) for d in differences[:50]
            )
    return result
