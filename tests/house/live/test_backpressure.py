"""Issue 21: no client can stall the feed. Against a real uvicorn process,
PostgreSQL and Redis: a client that stops reading is closed with 4408 within
the bound while the others, at its table and at another table, get every
delta in time; a client that stalls and goes, or dies mid-delivery, leaves
everyone else served exactly once; a reconnect with ``since`` resumes with a
snapshot and no gap (docs/websocket.md, "Close codes, resume and backpressure")."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from django.test import override_settings
from websockets.exceptions import ConnectionClosed

from casino.metrics_view import scrape
from games.benchmarks.live import asgi_server
from games.house.models import HouseTable
from games.house.services import place_chip
from tests.feed_clients import (
    ASGI_LOG,
    Reader,
    connect,
    drain,
    feed_trouble,
    flood,
    gap_free,
    log_offset,
    log_shows,
    log_since,
    stalled,
    ws_url,
)
from tests.house.live.conftest import assert_every_delta, change, fast_table, latencies, seqs, wait_for
from tests.house.services.conftest import make_player, open_round
from tests.platform.test_metrics import value
from tests.ws_auth import token_for

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
SEND_TIMEOUT = 1.0
OUTBOX = 64
LATENCY_BOUND = 1.0  # seconds from a change's commit to its first delta at a reading client
SERVER_LOG = ASGI_LOG.with_name("test-backpressure.log")
FRAME_LIMIT = 64 * 1024  # the floods ask for 32 kB pongs
SERVER_ENV = {
    "CASINO_WS_SEND_TIMEOUT_SECONDS": str(SEND_TIMEOUT),
    "CASINO_WS_OUTBOX_FRAMES": str(OUTBOX),
    "CASINO_WS_CLOSE_GRACE_SECONDS": "30",
    # The floods here test the outbound side (several MB of large pongs): the
    # inbound limits (tests/house/live/test_limits.py) are opened wide.
    "CASINO_WS_MAX_FRAME_BYTES": str(FRAME_LIMIT),
    "CASINO_WS_RATE": "100000",
    "CASINO_WS_BURST": "100000",
    "CASINO_WS_FLOOD_CLOSE": "100000",
    "CASINO_CHAT_RATE": "100000",
}
LINE = "x" * 280


@pytest.fixture(scope="module")
def server(django_db_setup: None, django_db_blocker: Any) -> Iterator[str]:
    """This module's uvicorn: a small outbox, a 1 s send timeout, chat unthrottled."""
    with (
        django_db_blocker.unblock(),
        override_settings(CASINO_WS_MAX_FRAME_BYTES=FRAME_LIMIT),
        asgi_server(extra_env={**SERVER_ENV, "LOG_LEVEL": "INFO"}, log=SERVER_LOG) as base,
    ):
        yield base


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

    closes_before = closed_too_slow()
    readers, changes, (slow_frames, slow_code) = asyncio.run(scenario())
    # The server stopped sending to the slow client (a strict, gap-free prefix of
    # what it asked for) and, once it read again, closed it with 4408.
    assert slow_code == 4408, slow_code
    # ...and counted it (docs/live.md, "Metrics"): the 4408 decided and the close by its code.
    wait_for(lambda: closed_too_slow()[1] > closes_before[1], timeout=10, what="the 4408 close counted")
    assert closed_too_slow()[0] > closes_before[0]
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


def closed_too_slow() -> tuple[float, float]:
    """From the metrics every process reports (``casino.metrics_view.scrape``): the 4408s the
    feed decided (``casino_ws_too_slow_total``) and the closes with 4408 (``casino_ws_closes_total``)."""
    text = scrape("text/plain")[0].decode()
    return value(text, "casino_ws_too_slow_total", reason="outbox_full"), value(
        text, "casino_ws_closes_total", family="house", code="4408"
    )


async def until_seq(reader: Reader, table_id: int, timeout: float = 10) -> None:
    """Wait until ``reader`` has a delta (or snapshot) at the table's seq now, then
    a little longer (a duplicate or a stray frame would arrive meanwhile)."""
    target = await asyncio.to_thread(lambda: HouseTable.objects.get(pk=table_id).public_seq)
    deadline = time.monotonic() + timeout
    while max([*seqs(reader), *(f["seq"] for f in reader.of("snapshot"))], default=-1) < target:
        assert time.monotonic() < deadline, (target, seqs(reader))
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.3)


def test_a_client_that_stalls_then_closes_leaves_the_feed_serving_everyone(server: str) -> None:
    """On this module's server (inbound limits opened; log var/test-backpressure.log):
    a client stalls (its outbox overflows: 4408), then closes; the reader
    already there and fresh clients connected after it get every delta of
    later changes, once."""
    table = fast_table("uth", betting_seconds=60)
    open_round(table)
    slow_token = token_for(make_player(table, name="st-slow"))
    watchers = [token_for(make_player(None, name=f"st-watch-{n}")) for n in range(3)]
    path = f"/ws/tables/{table.pk}/"
    offset = log_offset(SERVER_LOG)

    async def scenario() -> list[Reader]:
        before = Reader(await connect(server, ws_url(server, path, watchers[0])))
        await before.first("snapshot")
        slow = await stalled(server, ws_url(server, path, slow_token))
        await flood(slow, frames=300)  # more than the outbox holds
        await log_shows(offset, "closing a connection with 4408", path=SERVER_LOG)
        await asyncio.to_thread(change, table.pk)  # a change while it is still there, stalled
        slow.transport.close()  # it goes (FIN) without reading anything more
        await asyncio.sleep(0.5)
        fresh = [Reader(await connect(server, ws_url(server, path, t))) for t in watchers[1:]]
        for reader in fresh:
            await reader.first("snapshot")
        for _ in range(5):
            await asyncio.to_thread(change, table.pk)
        readers = [before, *fresh]
        for reader in readers:
            await until_seq(reader, table.pk)
            await reader.stop()
        return readers

    readers = asyncio.run(scenario())
    for reader in readers:
        assert_every_delta(reader, table.pk)
        assert reader.close_code == 1000
    # The fresh ones saw the five later changes (several deltas each).
    assert all(len(seqs(reader)) >= 5 for reader in readers[1:]), [seqs(r) for r in readers]
    assert not feed_trouble(log_since(offset, SERVER_LOG)), feed_trouble(log_since(offset, SERVER_LOG))


def test_a_client_killed_mid_delivery_leaves_the_others_served_exactly_once(server: str) -> None:
    """A burst of chat, bets (private deltas) and table changes; one client's
    socket is aborted while frames are being sent to it; the others get every
    chat line, public delta and private delta exactly once, in order."""
    table = fast_table("uth", betting_seconds=60)
    tick = open_round(table)
    assert tick.deadline is not None
    bettor = make_player(table, name="kill-bettor")
    tokens = {name: token_for(make_player(None, name=f"kill-{name}")) for name in ("victim", "watcher")}
    tokens["bettor"] = token_for(bettor)
    path = f"/ws/tables/{table.pk}/"
    bets_at = tick.deadline - timedelta(seconds=30)

    def bet(number: int) -> None:
        place_chip(table_id=table.pk, player_id=bettor, spot="ante", amount=100,
                   idempotency_key=f"kill-{table.pk}-{number}", now=bets_at)  # fmt: skip

    async def scenario() -> tuple[dict[str, Reader], int]:
        readers = {name: Reader(await connect(server, ws_url(server, path, token))) for name, token in tokens.items()}
        for reader in readers.values():
            await reader.first("snapshot")
        victim = readers["victim"]
        async with httpx.AsyncClient(base_url=server, headers={"Authorization": f"Token {tokens['bettor']}"}) as http:

            async def chat_burst() -> None:
                await post_chat(http, table.pk, 120)

            async def bets() -> None:
                for number in range(30):
                    await asyncio.to_thread(bet, number)

            burst = asyncio.gather(chat_burst(), bets())
            deadline = time.monotonic() + 10
            while len(victim.of("chat")) < 20:  # frames are flowing to it: kill it now
                assert not burst.done(), burst.exception()
                assert time.monotonic() < deadline, victim.frames[-3:]
                await asyncio.sleep(0.005)
            victim.ws.transport.abort()
            await burst
        for _ in range(3):  # deal, decisions: public deltas and the bettor's private ones
            await asyncio.to_thread(change, table.pk)
        for name in ("watcher", "bettor"):
            await until_seq(readers[name], table.pk)
        for reader in readers.values():
            with contextlib.suppress(ConnectionClosed):
                await reader.stop()
        return readers, len(victim.of("chat"))

    readers, victim_chat = asyncio.run(scenario())
    assert 20 <= victim_chat < 120, victim_chat  # it was killed mid-burst
    for name in ("watcher", "bettor"):
        reader = readers[name]
        chat_ids = [frame["id"] for frame in reader.of("chat")]
        assert len(chat_ids) == 120, (name, chat_ids)
        assert chat_ids == sorted(set(chat_ids)), (name, chat_ids)
        assert_every_delta(reader, table.pk)
    private = readers["bettor"].of("private")
    versions = [frame["stream_version"] for frame in private if frame.get("stream_version") is not None]
    assert len(versions) >= 30, private[:3]  # every chip, at least
    assert versions == list(range(versions[0], versions[0] + len(versions))), versions
    assert not readers["watcher"].of("private")


def test_resume_with_a_stale_a_future_and_a_malformed_since(asgi_server: str) -> None:
    """``?since=`` an old seq: a snapshot (no error), then every later delta once;
    a seq the table has not reached, or not a number: ``bad_resume_seq`` (with
    the current seq) before the snapshot."""
    table = fast_table("uth", betting_seconds=60)
    open_round(table)
    token = token_for(make_player(None, name="resumer"))
    path = f"/ws/tables/{table.pk}/"

    async def scenario() -> tuple[int, int, Reader, list[list[dict[str, Any]]], int]:
        first = Reader(await connect(asgi_server, ws_url(asgi_server, path, token)))
        last_seq = (await first.first("snapshot"))["seq"]
        await first.stop()
        for _ in range(3):  # missed while away
            await asyncio.to_thread(change, table.pk)
        current = await asyncio.to_thread(lambda: HouseTable.objects.get(pk=table.pk).public_seq)
        resumed = Reader(await connect(asgi_server, ws_url(asgi_server, path, token, since=last_seq)))
        await resumed.first("snapshot")
        for _ in range(2):
            await asyncio.to_thread(change, table.pk)
        await until_seq(resumed, table.pk)
        await resumed.stop()
        bad = []
        for since in (current + 1_000, "abc", "-1"):  # a seq the table has not reached
            reader = Reader(await connect(asgi_server, ws_url(asgi_server, path, token, since=since)))
            await reader.first("snapshot")
            await reader.stop()
            bad.append([frame for _, frame in reader.frames])
        final = await asyncio.to_thread(lambda: HouseTable.objects.get(pk=table.pk).public_seq)
        return last_seq, current, resumed, bad, final

    last_seq, current, resumed, bad, final = asyncio.run(scenario())
    assert current > last_seq
    kinds = [frame["type"] for _, frame in resumed.frames]
    assert kinds[0] == "snapshot", kinds  # a stale since is no error
    assert not resumed.of("error")
    assert resumed.of("snapshot")[0]["seq"] == current
    assert_every_delta(resumed, table.pk)
    assert seqs(resumed)  # it did continue
    for frames in bad:
        assert [frame["type"] for frame in frames[:2]] == ["error", "snapshot"], frames[:2]
        assert frames[0]["code"] == "bad_resume_seq"
        assert frames[0]["details"]["current_seq"] == final


def test_a_client_that_reads_nothing_within_the_close_grace_is_dropped(django_db_blocker: Any) -> None:
    """No reading within CASINO_WS_CLOSE_GRACE_SECONDS after 4408 was decided:
    the server aborts the TCP connection (no close frame can be written), so
    the client's connection ends abnormally (1006) instead of hanging open."""
    table = fast_table("uth", betting_seconds=60)
    open_round(table)
    token = token_for(make_player(None, name="grace-sleeper"))
    env = {**SERVER_ENV, "CASINO_WS_CLOSE_GRACE_SECONDS": "1"}

    async def scenario(base: str) -> tuple[list[dict[str, Any]], int | None, float]:
        slow = await stalled(base, ws_url(base, f"/ws/tables/{table.pk}/", token))
        await flood(slow)  # outbox overflow: 4408 decided, the socket takes nothing
        await asyncio.sleep(SEND_TIMEOUT + 1 + 1)  # past the close grace
        started = time.monotonic()
        frames, code = await drain(slow)
        return frames, code, time.monotonic() - started

    with override_settings(CASINO_WS_MAX_FRAME_BYTES=FRAME_LIMIT), asgi_server(extra_env=env) as base:
        frames, code, took = asyncio.run(scenario(base))
    assert code == 1006, code  # reset by the server: no close frame
    assert took < 5, took  # not a connection left open (drain gives up after 15 s)
    pongs = [int(frame["nonce"].split(":")[0]) for frame in frames if frame["type"] == "pong"]
    assert pongs == list(range(len(pongs)))
