"""Database checks shared by the suites: the rows a refused command must leave
exactly as they were, the ledger's per-currency sum (always zero), waiting
for committed events to reach the global log's safe bound, racing
commands on real connections, and sessions left idle in a transaction."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from django.db import connection, connections, transaction

from casino.errors import DomainError
from casino.processes import database_url_of
from ledger.services.events import safe_txid_bound


def rows(*tables: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of each table, in primary-key order: compare before and after a refusal."""
    result: dict[str, list[tuple[Any, ...]]] = {}
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f"SELECT * FROM {table} ORDER BY 1")
            result[table] = cursor.fetchall()
    return result


def ledger_sums() -> dict[str, int]:
    """Sum of every account's balance per currency: zero when no money was created or lost."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT currency, SUM(balance) FROM ledger_account GROUP BY currency")
        return {currency: int(total) for currency, total in cursor.fetchall()}


def wait_until_readable(timeout: float = 30) -> None:
    """Wait until every committed event is below the global log's safe bound
    (on PostgreSQL a transaction of the test database still running, e.g. a
    live server's, holds it back for a moment: readers wait, never skip)."""
    deadline = time.monotonic() + timeout
    while True:
        with connection.cursor() as cursor:
            cursor.execute("SELECT COALESCE(MAX(txid), 0) FROM ledger_event")
            top = cursor.fetchone()[0]
            if safe_txid_bound(cursor) > top:
                return
        assert time.monotonic() < deadline, "the safe bound did not pass the committed events"
        time.sleep(0.05)


def race(workers: int, work: Callable[[int], Any], *, atomic: bool = True) -> list[Any]:
    """Run ``work(i)`` in ``workers`` threads (one connection each) released
    together; each in its own ``transaction.atomic()`` unless ``atomic`` is
    false (then each call commits as it would alone). A result per worker: what
    ``work`` returned, the code of the ``DomainError`` it raised, or any other
    exception (surfaced by the assertions)."""
    barrier = threading.Barrier(workers)
    results: list[Any] = [None] * workers

    def run(i: int) -> None:
        try:
            barrier.wait(10)
            if atomic:
                with transaction.atomic():
                    results[i] = work(i)
            else:
                results[i] = work(i)
        except DomainError as exc:
            results[i] = exc.code
        except BaseException as exc:  # surfaced by the assertions
            results[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results


def server_url(database: str) -> str:
    """The test server's URL for ``database``, as the suite's user."""
    return database_url_of({**connection.settings_dict, "NAME": database})


def idle_in_transaction(url: str) -> psycopg.Connection:
    """A session on ``url`` that has begun a transaction, taken a transaction id
    and gone idle (what issue 35's red team left open)."""
    session = psycopg.connect(url)
    session.execute("SELECT txid_current()")
    return session


@contextmanager
def idle_in_another_database() -> Iterator[psycopg.Connection]:
    """A session idle in a transaction in a scratch database of the same server,
    dropped afterwards."""
    name = f"casino_scratch_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_url("postgres"), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            with idle_in_transaction(server_url(name)) as session:
                yield session
        finally:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
