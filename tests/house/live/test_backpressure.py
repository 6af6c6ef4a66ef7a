"""Issue 21: no client can stall the feed. Against a real uvicorn process,
PostgreSQL and Redis: a client that stops reading is closed with 4408 within
the bound while the others, at its table and at another table, get every
delta in time; a client that stalls and goes, or dies mid-delivery, leaves
everyone else served exactly once; a reconnect with ``since`` resumes with a
snapshot and no gap (docs/websocket.md, "Close codes, resume and backpressure")."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from rest_framework.authtoken.models import Token

from games.benchmarks.live import asgi_server
from games.house.models import HouseTable
from games.house.services import advance_table
from tests.feed_clients import Reader, connect, drain, flood, gap_free, stalled, ws_url
from tests.house.live.conftest import fast_table
from tests.house.services.conftest import make_player, open_round

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
SEND_TIMEOUT = 1.0
OUTBOX = 64
LATENCY_BOUND = 1.0  # seconds from a change's commit to its first delta at a reading client
SERVER_ENV = {
    "CASINO_WS_SEND_TIMEOUT_SECONDS": str(SEND_TIMEOUT),
    "CASINO_WS_OUTBOX_FRAMES": str(OUTBOX),
    "CASINO_WS_CLOSE_GRACE_SECONDS": "30",
    "CASINO_CHAT_RATE": "100000",
}
LINE = "x" * 280


@pytest.fixture
def server() -> Iterator[str]:
    with asgi_server(extra_env=SERVER_ENV) as base:
        yield base


def change(table_id: int) -> tuple[float, int]:
    """One dealer step at the table's deadline; (commit time, the seq before it)."""
    current = HouseTable.objects.get(pk=table_id)
    assert current.deadline is not None
    assert advance_table(table_id=table_id, expected_seq=current.phase_seq, now=current.deadline) is not None
    return time.monotonic(), current.public_seq


def token_for(player: int) -> str:
    return Token.objects.get_or_create(user_id=player)[0].key


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


async def post_chat(http: httpx.AsyncClient, table_id: int, count: int) -> None:
    for n in range(count):
        response = await http.post(f"/api/tables/{table_id}/chat/", json={"text": f"{n} {LINE}"[:280]})
        assert response.status_code == 201, response.text


def test_a_client_that_never_reads_is_closed_with_4408_and_stalls_nobody(server: str) -> None:
    tables = [fast_table("uth", betting_seconds=60), fast_table("uth", betting_seconds=60)]
    for table in tables:
        open_round(table)
    chatter = token_for(make_player(tables[0], name="bp-chatter"))
    watcher = token_for(make_player(None, name="bp-watcher"))

    async def scenario() -> tuple[list[Reader], list[list[tuple[float, int]]], tuple[list[dict[str, Any]], Any]]:
        path = [f"/ws/tables/{table.pk}/" for table in tables]
        readers = [Reader(await connect(server, ws_url(server, p, watcher))) for p in path]
        slow = await stalled(server, ws_url(server, path[0], chatter))
        for reader in readers:
            await reader.first("snapshot")
        changes: list[list[tuple[float, int]]] = [[], []]
        async with httpx.AsyncClient(base_url=server, headers={"Authorization": f"Token {chatter}"}) as http:
            await flood(slow)  # several MB the slow client never reads
            for _ in range(6):  # chat for everyone at the table; the tables move meanwhile
                await post_chat(http, tables[0].pk, 50)
                for index, table in enumerate(tables):
                    changes[index].append(await asyncio.to_thread(change, table.pk))
        await asyncio.sleep(SEND_TIMEOUT + 1)
        stalled_frames = await drain(slow)
        for reader in readers:
            await reader.stop()
        return readers, changes, stalled_frames

    readers, changes, (slow_frames, slow_code) = asyncio.run(scenario())
    # The server stopped sending to the slow client (a strict, gap-free prefix of
    # what it asked for) and, once it read again, closed it with 4408.
    assert slow_code == 4408, slow_code
    chat_ids = [frame["id"] for frame in readers[0].of("chat")]
    assert len(chat_ids) == 300
    slow_chat = [frame["id"] for frame in slow_frames if frame["type"] == "chat"]
    assert slow_chat == chat_ids[: len(slow_chat)]
    assert gap_free([frame["seq"] for frame in slow_frames if frame["type"] == "delta"])
    pongs = [int(frame["nonce"].split(":")[0]) for frame in slow_frames if frame["type"] == "pong"]
    assert pongs == list(range(len(pongs)))
    assert len(pongs) < 250
    # The others got every delta, in time, at the slow client's table and at the other one.
    for reader, table, moves in zip(readers, tables, changes, strict=True):
        assert_every_delta(reader, table.pk)
        late = [round(lag, 3) for lag in latencies(reader, moves) if lag > LATENCY_BOUND]
        assert not late, late
