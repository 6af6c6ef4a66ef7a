"""Issue 35, part 3, as the red team found it: a session idle in a transaction
in another database of the same PostgreSQL server, and one in this database,
while a table deals. Against a real uvicorn process, PostgreSQL and Redis:
every websocket client gets every delta, in order, none lost, each within the
feed's gap bound (``CASINO_FEED_GAP_SECONDS``) while both sessions are still
open; once PostgreSQL ends the idle one of this database
(``idle_in_transaction_session_timeout``, as on the runtime role), the seal
covers every event committed meanwhile and an audit export of the period that
has just ended succeeds and verifies."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
from django.db import connection
from django.utils import timezone

from compliance.exports import ExportFilters, export_audit, public_key_hex
from games.benchmarks.live import asgi_server
from games.house.models import HouseTable
from tests.db import idle_in_another_database, idle_in_transaction, server_url
from tests.feed_clients import ASGI_LOG, Reader, connect, log_offset, log_since, ws_url
from tests.house.live.conftest import assert_every_delta, change, fast_table, latencies, seqs
from tests.house.services.conftest import make_player, open_round
from tests.ws_auth import token_for
from tools.verify_export import verify_export

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
GAP = 1.0  # the feed's gap bound in this test (production default: 3 s)
LATENCY_BOUND = GAP + 10.0  # generous: a shared, noisy machine
CHANGES = 6
SERVER_LOG = ASGI_LOG.with_name("test-feed-stuck.log")


def still_open(session: psycopg.Connection) -> bool:
    """The session is alive and still inside its transaction."""
    session.execute("SELECT 1")
    return session.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS


def test_transactions_left_open_elsewhere_and_here_neither_freeze_the_feed_nor_the_seal_and_export(
    tmp_path: Path,
) -> None:
    start = timezone.now() - timedelta(seconds=1)
    table = fast_table("uth", betting_seconds=60)
    open_round(table)
    watchers = [token_for(make_player(None, name=f"stuck-watcher-{n}")) for n in range(3)]
    offset = log_offset(SERVER_LOG)

    async def deal(base: str) -> tuple[list[Reader], list[tuple[float, int]]]:
        path = f"/ws/tables/{table.pk}/"
        readers = [Reader(await connect(base, ws_url(base, path, token))) for token in watchers]
        for reader in readers:
            await reader.first("snapshot")
        changes = []
        for _ in range(CHANGES):
            changes.append(await asyncio.to_thread(change, table.pk))
            await asyncio.sleep(0.2)
        final = await asyncio.to_thread(lambda: HouseTable.objects.get(pk=table.pk).public_seq)
        deadline = time.monotonic() + 60
        while any(not seqs(r) or seqs(r)[-1] < final for r in readers) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        for reader in readers:
            await reader.stop()
        return readers, changes

    with (
        idle_in_another_database() as elsewhere,
        idle_in_transaction(server_url(connection.settings_dict["NAME"])) as here,
        asgi_server(extra_env={"CASINO_FEED_GAP_SECONDS": str(GAP)}, log=SERVER_LOG) as base,
    ):
        readers, changes = asyncio.run(deal(base))
        # Every delta arrived while both transactions were still open.
        assert still_open(elsewhere)
        assert still_open(here)
        for reader in readers:
            assert_every_delta(reader, table.pk)  # in order, none lost, none twice
            assert max(latencies(reader, changes)) < LATENCY_BOUND, latencies(reader, changes)
        # The feed read past the stuck transaction of this database (and waited on nothing elsewhere).
        assert "of this database has run for over" in log_since(offset, SERVER_LOG)

        # PostgreSQL ends the idle session of this database (the runtime role's
        # setting, here set on the session); the export seals through it.
        here.execute("SET idle_in_transaction_session_timeout = '1s'")
        end = timezone.now()
        result = export_audit(start=start, end=end, filters=ExportFilters(), file_format="jsonl", out=tmp_path / "x")
        assert verify_export(result.directory, public_key=public_key_hex()).problems == []
        with connection.cursor() as cursor:
            cursor.execute("SELECT MAX(txid) FROM ledger_event WHERE recorded_at < %s", [end])
            dealt = int(cursor.fetchone()[0])
            cursor.execute("SELECT MAX(to_txid) FROM ledger_seal")
            assert int(cursor.fetchone()[0]) > dealt  # the seal covers the events committed meanwhile
        with pytest.raises(psycopg.errors.IdleInTransactionSessionTimeout):
            here.execute("SELECT 1")  # ended by PostgreSQL
        assert still_open(elsewhere)  # never waited on
