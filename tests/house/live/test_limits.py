"""The websocket inbound limits (docs/websocket.md, "Limits"; issue 21) against a
real uvicorn process, PostgreSQL and Redis: frame size (1009), the per-connection
message rate (``rate_limited``, then 1008), connections per player (4429), and
read paths that write nothing. Both families share ``games.tables.realtime.JSONFrames``;
where their paths differ (poker's snapshot takes its feed's lock) both are driven.

The figures (latency of another client's delivery while one misbehaves) are
printed: run with ``-s`` to see them."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx
import pytest
import websockets
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, connections
from django.utils import timezone
from websockets.typing import Origin

from casino.auth import issue_token
from games.house.services import start_table
from games.house.services.seats import take_seat
from games.poker import services as poker
from games.tables.chat import ChatMessage
from tests.house.live.conftest import fast_table
from tests.poker.tables import advance, make_table
from tests.poker.test_tables import AA_VS_KK
from tests.ws_auth import ws_ticket

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

# Another client's delivery while one misbehaves: the relay is woken by
# NOTIFY (house) or polls every 0.2 s (poker); a stalled server would miss this by seconds.
DELIVERY_BOUND_SECONDS = 1.0


def player(name: str, *, funds: int = 0) -> tuple[int, str]:
    """A player and their API token; with ``funds``, a wallet holding them."""
    user = get_user_model().objects.create_user(username=name, password=f"{name}-pw-123456")
    if funds:
        from ledger.services import deposit, player_accounts

        deposit(wallet=player_accounts(player_id=user.pk, currency="EUR").wallet, amount=funds, currency="EUR",
                external_reference=f"lim-{name}", idempotency_key=f"lim-dep-{name}", actor="test")  # fmt: skip
    return int(user.pk), issue_token(user=user)


def ws_url(base: str, path: str, token: str) -> str:
    """The websocket URL with a fresh ticket of the token's player (one connection)."""
    return base.replace("http://", "ws://") + f"{path}?ticket={ws_ticket(base, token)}"


def connect(base: str, path: str, token: str) -> Any:
    return websockets.connect(ws_url(base, path, token), origin=Origin(base), open_timeout=20, max_size=None)


async def recv_json(ws: Any, timeout: float = 10) -> dict[str, Any]:
    return json.loads(await asyncio.wait_for(ws.recv(), timeout=timeout))


async def until(ws: Any, predicate: Callable[[dict[str, Any]], bool], timeout: float = 10) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        message = await recv_json(ws, max(0.01, deadline - time.monotonic()))
        if predicate(message):
            return message


async def close_code(ws: Any, timeout: float = 10) -> tuple[int | None, list[dict[str, Any]]]:
    """Read until the server closes; its close code and what came before."""
    received: list[dict[str, Any]] = []
    try:
        while True:
            received.append(await recv_json(ws, timeout))
    except websockets.ConnectionClosed:
        pass
    return (ws.close_code, received)


async def timed(action: Awaitable[Any]) -> float:
    started = time.monotonic()
    await action
    return time.monotonic() - started


def finish(coroutine: Awaitable[Any]) -> Any:
    async def run() -> Any:
        try:
            return await coroutine
        finally:
            # The scenario's database work ran in asgiref's thread: close its connection there.
            await sync_to_async(connections.close_all)()

    return asyncio.run(run())


def house_round_opened(message: dict[str, Any]) -> bool:
    return message.get("type") == "delta" and message.get("event") == "house_round.opened"


def poker_table(players: list[int]) -> Any:
    """A poker table with ``players`` seated and nothing dealt (long clocks: a
    dealer worker that may be running must not deal before the test does)."""
    table = make_table(between_hands_seconds=3600, turn_seconds=3600)
    for number, pid in enumerate(players, start=1):
        poker.sit_down(table_id=table.pk, player_id=pid, seat_number=number, buy_in=1000,
                       idempotency_key=f"lim-sit-{table.pk}-{pid}", now=timezone.now())  # fmt: skip
    return table


# --- frame size -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wide_server(django_db_setup, django_db_blocker) -> Iterator[str]:
    """A uvicorn whose own ``--ws-max-size`` is 1 MiB, the project's limit the default
    16 KiB: a bigger frame reaches ``JSONFrames``, the second line of defence."""
    from games.benchmarks.live import asgi_server

    log = settings.VAR_DIR / "test-asgi-wide.log"
    with (
        django_db_blocker.unblock(),
        asgi_server(extra_env={"LOG_LEVEL": "INFO"}, log=log, args=["--ws-max-size", str(1 << 20)]) as base,
    ):
        yield base


def oversized_frame_scenario(base: str) -> tuple[int | None, float]:
    """One client sends a frame one byte over the limit; another watches the table.
    Returns the close code the sender got and the watcher's delivery latency of
    the round opened right after."""
    table = fast_table("uth", betting_seconds=60)
    _, sender = player(f"big-{base[-5:]}")
    _, watcher = player(f"watch-{base[-5:]}")
    too_big = json.dumps({"type": "chat", "text": "x" * settings.CASINO_WS_MAX_FRAME_BYTES})[
        : settings.CASINO_WS_MAX_FRAME_BYTES + 1
    ]
    assert len(too_big.encode()) == settings.CASINO_WS_MAX_FRAME_BYTES + 1

    async def scenario() -> tuple[int | None, float]:
        path = f"/ws/tables/{table.pk}/"
        async with connect(base, path, watcher) as watching, connect(base, path, sender) as sending:
            assert (await recv_json(watching))["type"] == "snapshot"
            assert (await recv_json(sending))["type"] == "snapshot"
            await sending.send(too_big)
            code, _ = await close_code(sending)
            started = time.monotonic()
            await sync_to_async(start_table)(table_id=table.pk, now=timezone.now())
            await until(watching, house_round_opened)
            return code, time.monotonic() - started

    return finish(scenario())


def test_an_oversized_frame_is_closed_1009_by_uvicorn_and_others_are_served(asgi_server) -> None:
    code, latency = oversized_frame_scenario(asgi_server)
    print(f"\noversized frame (uvicorn --ws-max-size): close {code}; watcher's delta after {latency * 1000:.0f} ms")
    assert code == 1009
    assert latency < DELIVERY_BOUND_SECONDS


def test_an_oversized_frame_past_uvicorn_is_closed_1009_by_the_consumer(wide_server) -> None:
    code, latency = oversized_frame_scenario(wide_server)
    print(f"\noversized frame (JSONFrames): close {code}; watcher's delta after {latency * 1000:.0f} ms")
    assert code == 1009
    assert latency < DELIVERY_BOUND_SECONDS
    # A frame of exactly the limit is parsed and answered.
    table = fast_table("uth")
    _, token = player("exact-size")
    exact = json.dumps({"type": "ping", "nonce": ""})
    exact = exact.replace('""', '"' + "n" * (settings.CASINO_WS_MAX_FRAME_BYTES - len(exact)) + '"')
    assert len(exact.encode()) == settings.CASINO_WS_MAX_FRAME_BYTES

    async def scenario() -> dict[str, Any]:
        async with connect(wide_server, f"/ws/tables/{table.pk}/", token) as ws:
            await recv_json(ws)
            await ws.send(exact)
            return await recv_json(ws)

    assert finish(scenario())["type"] == "pong"


# --- binary frames --------------------------------------------------------------------------------


@pytest.mark.parametrize("family", ["house", "poker"])
def test_a_binary_frame_is_answered_malformed_message_and_the_socket_stays(asgi_server, family) -> None:
    _, token = player(f"binary-{family}")
    path = f"/ws/tables/{fast_table('uth').pk}/" if family == "house" else f"/ws/poker/{make_table().pk}/"

    async def scenario() -> list[dict[str, Any]]:
        async with connect(asgi_server, path, token) as ws:
            assert (await recv_json(ws))["type"] == "snapshot"
            await ws.send(b'{"type": "ping"}')
            error = await recv_json(ws)
            await ws.send(json.dumps({"type": "ping", "nonce": 7}))
            return [error, await recv_json(ws)]

    error, pong = finish(scenario())
    assert error["type"] == "error"
    assert error["code"] == "malformed_message"
    assert pong == {"type": "pong", "nonce": 7}


# --- message rate ---------------------------------------------------------------------------------


async def flood(ws: Any, message: dict[str, Any], count: int) -> None:
    text = json.dumps(message)
    for _ in range(count):
        await ws.send(text)


class Flood:
    """One client sends ``message`` as fast as the connection takes it until the
    server closes it (at most ``limit`` messages), reading all the while."""

    def __init__(self, ws: Any, message: dict[str, Any], limit: int = 2000) -> None:
        self.ws, self.text, self.limit = ws, json.dumps(message), limit
        self.sent = 0
        self.started = time.monotonic()
        self.reader = asyncio.ensure_future(close_code(ws, timeout=20))
        self.writer = asyncio.ensure_future(self._write())

    async def _write(self) -> None:
        with contextlib.suppress(websockets.ConnectionClosed):
            while self.sent < self.limit and not self.reader.done():
                await self.ws.send(self.text)
                self.sent += 1
                if self.sent % 20 == 0:
                    await asyncio.sleep(0)  # let the reader read

    async def result(self) -> tuple[int | None, list[dict[str, Any]], float]:
        """The close code, every frame received, the seconds from the first send to the close."""
        await self.writer
        code, received = await self.reader
        return code, received, time.monotonic() - self.started


def check_flood(code: int | None, received: list[dict[str, Any]], elapsed: float, what: str) -> None:
    """The token bucket's contract, whatever the machine's speed: at most the burst
    plus the rate over the time taken answered, every refusal ``rate_limited``
    until ``CASINO_WS_FLOOD_CLOSE`` of them in a row closed the connection (1008)."""
    answered = [m for m in received if m["type"] == what]
    limited = [m for m in received if m["type"] == "error" and m["code"] == "rate_limited"]
    assert code == 1008
    assert len(limited) >= settings.CASINO_WS_FLOOD_CLOSE - 1
    assert all(m["details"]["retry_after"] >= 0 for m in limited)
    assert len(answered) <= settings.CASINO_WS_BURST + settings.CASINO_WS_RATE * elapsed + 1


def check_snapshot_flood(
    server: str,
    path: str,
    *,
    watcher: str,
    flooder: str,
    change: Callable[[], object],
    seen: Callable[[dict[str, Any]], bool],
    label: str,
    watched: str,
) -> None:
    """``flooder`` floods ``path`` with snapshot requests while ``change`` (run in a
    thread) makes a change that ``watcher`` must see (``seen``) within the delivery
    bound: the flood is limited, then closed (``label`` and ``watched`` name the
    flood and the change in the line printed)."""

    async def scenario() -> tuple[int | None, list[dict[str, Any]], float, float, int]:
        async with connect(server, path, watcher) as watching, connect(server, path, flooder) as flooding:
            await recv_json(watching)
            await recv_json(flooding)
            flood_ = Flood(flooding, {"type": "snapshot"})
            await asyncio.sleep(0.05)  # the flood is under way
            changed = time.monotonic()
            await sync_to_async(change)()
            await until(watching, seen)
            latency = time.monotonic() - changed
            code, received, elapsed = await flood_.result()
            return code, received, elapsed, latency, flood_.sent

    code, received, elapsed, latency, sent = finish(scenario())
    print(f"\n{label}: {sent} sent, {len([m for m in received if m['type'] == 'snapshot'])} answered, "
          f"{len([m for m in received if m.get('code') == 'rate_limited'])} rate_limited, close {code} after "
          f"{elapsed * 1000:.0f} ms; watcher's {watched} after {latency * 1000:.0f} ms")  # fmt: skip
    check_flood(code, received, elapsed, "snapshot")
    assert latency < DELIVERY_BOUND_SECONDS


def test_a_snapshot_flood_is_rate_limited_then_closed_and_others_are_served_house(asgi_server) -> None:
    table = fast_table("uth", betting_seconds=60)
    _, flooder = player("flood-snap")
    _, watcher = player("flood-watch")
    check_snapshot_flood(asgi_server, f"/ws/tables/{table.pk}/", watcher=watcher, flooder=flooder,
                         change=lambda: start_table(table_id=table.pk, now=timezone.now()), seen=house_round_opened,
                         label="snapshot flood", watched="delta")  # fmt: skip


def test_a_chat_flood_changes_nothing_beyond_the_limits(asgi_server) -> None:
    table = fast_table("uth", betting_seconds=60)
    flooder_id, flooder = player("flood-chat")
    _, watcher = player("flood-chat-watch")
    take_seat(table_id=table.pk, player_id=flooder_id)
    count = settings.CASINO_WS_BURST + 30

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]], float]:
        path = f"/ws/tables/{table.pk}/"
        async with connect(asgi_server, path, watcher) as watching, connect(asgi_server, path, flooder) as flooding:
            await recv_json(watching)
            await recv_json(flooding)
            started = time.monotonic()
            await flood(flooding, {"type": "chat", "text": "spam"}, count)
            # Each line is answered once: its broadcast (the flooder's own line) or a refusal.
            answers = [await recv_json(flooding, 20) for _ in range(count)]
            elapsed = time.monotonic() - started
            await asyncio.sleep(0.5)  # the watcher's chat lines, all of them
            seen = []
            with contextlib.suppress(TimeoutError):
                while True:
                    seen.append(await recv_json(watching, 0.3))
            return answers, seen, elapsed

    answers, seen, elapsed = finish(scenario())
    codes = [m.get("code") for m in answers if m["type"] == "error"]
    stored = ChatMessage.objects.filter(table_id=table.pk).count()
    print(f"\nchat flood of {count}: {stored} stored, answers {codes.count('chat_rate_limited')} chat_rate_limited, "
          f"{codes.count('rate_limited')} rate_limited in {elapsed * 1000:.0f} ms")  # fmt: skip
    # At most CASINO_CHAT_RATE lines are stored and broadcast; what the bucket
    # refused reached no service (rate_limited), the rest met the chat's own limit.
    assert stored == settings.CASINO_CHAT_RATE
    assert len([m for m in answers if m["type"] == "chat"]) == settings.CASINO_CHAT_RATE
    assert len([m for m in seen if m["type"] == "chat"]) == settings.CASINO_CHAT_RATE
    assert codes.count("chat_rate_limited") + codes.count("rate_limited") == count - settings.CASINO_CHAT_RATE
    passed = count - codes.count("rate_limited")
    assert passed <= settings.CASINO_WS_BURST + settings.CASINO_WS_RATE * elapsed + 1


def test_a_snapshot_flood_does_not_hold_up_a_poker_table(asgi_server) -> None:
    """A poker snapshot is taken under the table feed's lock, which every delivery
    of that table in the process waits for: a flood must not hold it for long."""
    seated = [player(f"pk-seat-{n}", funds=100_000) for n in range(2)]
    table = poker_table([pid for pid, _ in seated])
    _, flooder = player("pk-flood")
    check_snapshot_flood(asgi_server, f"/ws/poker/{table.pk}/", watcher=seated[0][1], flooder=flooder,
                         change=lambda: advance(table, cards=AA_VS_KK), seen=lambda m: m["type"] == "private",
                         label="poker snapshot flood", watched="hole cards")  # fmt: skip


# --- connections per player -----------------------------------------------------------------------


def test_the_connection_over_the_per_player_limit_is_closed_4429(asgi_server) -> None:
    """The limit counts every table and both families (here through Redis, which
    the tests configure); the ones already open keep working, and a closed one
    frees its place."""
    limit = settings.CASINO_WS_MAX_CONNECTIONS_PER_PLAYER
    _, token = player("many-sockets")
    # One table each: a second connection to the same table would close the first (4409, seed 000).
    house = [f"/ws/tables/{fast_table('uth').pk}/" for _ in range(limit - 1)]
    paths = [*house, f"/ws/poker/{make_table().pk}/"]

    async def scenario() -> tuple[list[int | None], list[dict[str, Any]], dict[str, Any]]:
        sockets = []
        try:
            for n in range(limit):
                ws = await connect(asgi_server, paths[n % len(paths)], token)
                sockets.append(ws)
                assert (await recv_json(ws))["type"] == "snapshot"
            refused = []
            for path in paths:  # over the limit, whichever table or family
                async with connect(asgi_server, path, token) as extra:
                    refused.append((await close_code(extra))[0])
            pongs = []
            for n, ws in enumerate(sockets):
                await ws.send(json.dumps({"type": "ping", "nonce": n}))
                pongs.append(await until(ws, lambda m: m["type"] == "pong"))
            await sockets.pop().close()
            await asyncio.sleep(0.2)  # the server has seen the close
            async with connect(asgi_server, paths[0], token) as again:
                first = await recv_json(again)
            return refused, pongs, first
        finally:
            for ws in sockets:
                await ws.close()

    refused, pongs, first = finish(scenario())
    assert refused == [4429] * len(paths)
    assert [p["nonce"] for p in pongs] == list(range(limit))
    assert first["type"] == "snapshot"
    assert settings.REDIS_URL, "these tests run with REDIS_URL: the limit spans processes"


# --- read paths write nothing ---------------------------------------------------------------------


def row_counts() -> dict[str, int]:
    """The number of rows of every table of the database."""
    counts = {}
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f'SELECT count(*) FROM "{table}"')
            counts[table] = int(cursor.fetchone()[0])
    return counts


def test_reads_by_a_brand_new_player_create_no_row(asgi_server) -> None:
    """A player who never deposited, bet or changed a setting reads the tables
    (REST and websocket snapshots, both families), the wallet and their settings:
    nothing is created (before #21 the table view opened two wallet accounts,
    the settings views a profile, the limits view a limits row)."""
    house = fast_table("uth", betting_seconds=60)
    start_table(table_id=house.pk, now=timezone.now())  # a round in play: the view has "me"
    poker_ = poker_table([player(f"ro-seat-{n}", funds=100_000)[0] for n in range(2)])
    _, token = player("read-only")
    before = row_counts()

    async def scenario() -> list[dict[str, Any]]:
        auth = {"Authorization": f"Token {token}"}
        bodies = []
        async with httpx.AsyncClient(base_url=asgi_server, headers=auth, timeout=10) as http:
            for path in (f"/api/tables/{house.pk}/", "/api/tables/", f"/api/poker/tables/{poker_.pk}/", "/api/wallet/",
                         "/api/me/", "/api/me/settings/", "/api/me/limits/", "/api/history/"):  # fmt: skip
                response = await http.get(path)
                assert response.status_code == 200, (path, response.text)
                bodies.append(response.json())
        for path in (f"/ws/tables/{house.pk}/", f"/ws/poker/{poker_.pk}/"):
            async with connect(asgi_server, path, token) as ws:
                bodies.append(await recv_json(ws))
                await ws.send(json.dumps({"type": "snapshot"}))
                bodies.append(await until(ws, lambda m: m["type"] == "snapshot"))
        return bodies

    bodies = finish(scenario())
    after = row_counts()
    assert {t: (before[t], after[t]) for t in after if before.get(t) != after[t]} == {}
    assert bodies[0]["me"]["balance"] == 0
    assert bodies[3] == {"currency": "EUR", "balance": 0, "in_play": 0}
    assert bodies[8]["table"]["me"]["balance"] == 0


def test_connections_are_counted_across_processes_and_a_dead_process_s_expire(settings, caplog) -> None:
    """Two registries on the one Redis stand for two ASGI processes: the second
    sees the first's connections; once the first stops refreshing (it crashed),
    its entries stop counting after the TTL."""
    from games.tables.realtime import PlayerConnections

    assert settings.REDIS_URL
    settings.CASINO_WS_MAX_CONNECTIONS_PER_PLAYER = 2
    settings.CASINO_WS_CONNECTION_TTL_SECONDS = 1.5
    player_id = 10_000 + os.getpid()

    async def scenario() -> dict[str, Any]:
        first, second = PlayerConnections(), PlayerConnections()
        held = [await first.acquire(player_id), await first.acquire(player_id)]
        result: dict[str, Any] = {"first": held, "over_limit": await second.acquire(player_id)}
        await asyncio.sleep(2 * settings.CASINO_WS_CONNECTION_TTL_SECONDS)  # refreshed meanwhile: still held
        result["while_refreshed"] = await second.acquire(player_id)
        await first.close()  # the first process stops: nobody refreshes its entries
        await asyncio.sleep(2 * settings.CASINO_WS_CONNECTION_TTL_SECONDS)
        result["after_ttl"] = await second.acquire(player_id)
        result["released_one"] = await second.acquire(player_id)
        result["third"] = await second.acquire(player_id)
        await second.release(player_id, result["after_ttl"])
        result["after_release"] = await second.acquire(player_id)
        for connection_id in (result["released_one"], result["after_release"]):
            await second.release(player_id, connection_id)
        await second.close()
        return result

    result = asyncio.run(asyncio.wait_for(scenario(), timeout=60))
    assert not [r for r in caplog.records if r.name == "games.tables.realtime"], (
        caplog.text
    )  # Redis answered every call
    assert all(result["first"])
    assert result["over_limit"] is None
    assert result["while_refreshed"] is None
    assert result["after_ttl"] is not None
    assert result["released_one"] is not None
    assert result["third"] is None
    assert result["after_release"] is not None


def test_without_redis_the_connections_are_counted_in_the_process(settings) -> None:
    """The embedded default (no REDIS_URL, one process): the same limit, counted locally."""
    from games.tables.realtime import PlayerConnections

    settings.REDIS_URL = ""
    settings.CASINO_WS_MAX_CONNECTIONS_PER_PLAYER = 2

    async def scenario() -> list[str | None]:
        registry = PlayerConnections()
        got = [await registry.acquire(player) for player in (1, 1, 1, 2)]
        first = got[0]
        assert first is not None
        await registry.release(1, first)
        return [*got, await registry.acquire(1)]

    first, second, third, other_player, after_release = asyncio.run(scenario())
    assert first is not None
    assert second is not None
    assert third is None
    assert other_player is not None
    assert after_release is not None


def test_a_burst_of_connections_never_exhausts_the_redis_pool(settings, caplog) -> None:
    """500 sockets opening and then closing at once in one process (a network
    blip, a deploy): every one is counted and released, none refused for want
    of a Redis connection (redis-py's pool raises instead of waiting)."""
    from games.tables.realtime import PlayerConnections

    assert settings.REDIS_URL
    base = 20_000 + 1_000 * (os.getpid() % 1_000)

    async def burst() -> list[str | None]:
        registry = PlayerConnections()
        ids = await asyncio.gather(*(registry.acquire(base + i) for i in range(500)))
        await asyncio.gather(*(registry.release(base + i, c) for i, c in enumerate(ids) if c is not None))
        await registry.close()
        return list(ids)

    ids = asyncio.run(asyncio.wait_for(burst(), timeout=60))
    assert not [r for r in caplog.records if r.name == "games.tables.realtime"], caplog.text
    assert all(ids)
