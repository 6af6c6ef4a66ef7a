"""The relay is woken by the dealer's commit (PostgreSQL NOTIFY from the trigger
of ``games.0003``), not only by its poll: with the poll slowed to 3 s, phase
changes still reach a real websocket in well under the poll interval."""

from __future__ import annotations

import asyncio
import json
import statistics
import time

import pytest
import websockets
from django.db import connection
from websockets.typing import Origin

from games.benchmarks.live import asgi_server
from games.house.models import HouseTable
from games.house.realtime.relay import NOTIFY_CHANNEL
from games.house.services import advance_table
from tests.house.live.conftest import fast_table, wait_for
from tests.house.services.conftest import make_player, open_round
from tests.ws_auth import token_for, ws_ticket

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
POLL_SECONDS = 3.0


def listening() -> bool:
    """This test's server is listening: a LISTEN on this database (pg_stat_activity
    is cluster-wide; another run's or xdist worker's servers listen on theirs)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE query = %s AND datname = current_database()",
            [f"LISTEN {NOTIFY_CHANNEL}"],
        )
        return bool(cursor.fetchone()[0])


def test_a_commit_wakes_the_relay_before_its_poll() -> None:
    table = fast_table("uth", betting_seconds=60)
    token = token_for(make_player(None, name="wake-watcher"))
    open_round(table)

    def change() -> float:
        current = HouseTable.objects.get(pk=table.pk)
        assert current.deadline is not None
        assert advance_table(table_id=table.pk, expected_seq=current.phase_seq, now=current.deadline) is not None
        return time.time()

    async def scenario(base: str) -> list[float]:
        url = base.replace("http://", "ws://") + f"/ws/tables/{table.pk}/?ticket={ws_ticket(base, token)}"
        latencies = []
        async with websockets.connect(url, origin=Origin(base), open_timeout=20) as ws:
            assert json.loads(await asyncio.wait_for(ws.recv(), 20))["type"] == "snapshot"
            await asyncio.to_thread(wait_for, listening, timeout=10, what="the relay's LISTEN")
            for _ in range(3):
                committed = await asyncio.to_thread(change)
                message = json.loads(await asyncio.wait_for(ws.recv(), 2 * POLL_SECONDS))
                assert message["type"] == "delta"
                latencies.append(time.time() - committed)
                while True:  # the rest of this change's deltas
                    try:
                        json.loads(await asyncio.wait_for(ws.recv(), 0.5 * POLL_SECONDS))
                    except TimeoutError:
                        break
        return latencies

    with asgi_server(extra_env={"CASINO_RELAY_POLL_SECONDS": str(POLL_SECONDS)}) as base:
        latencies = asyncio.run(scenario(base))
    # Polling alone would deliver after about half the poll interval on average.
    assert statistics.median(latencies) < 0.5, latencies
