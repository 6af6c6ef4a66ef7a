"""A light websocket bet generator for ``bench bets`` (the websocket half).

Each client is one player's websocket to the table (``ws/tables/<id>/?ticket=``,
a ticket fetched with the player's API token just before it connects),
an ``asyncio.Protocol`` driving the ``websockets`` library's Sans-I/O
``ClientProtocol`` (a real handshake and real frames, the CPU of a light client,
as in ``ws_clients``). After its snapshot it sends ``{"type": "bet", "id": ...,
"spot": "ante", "amount": 100}`` frames and matches each ``ack`` or ``error``
answer to its ``id``; every other frame (the player's own ``private`` deltas,
public deltas) is parsed and ignored, as a real client would.

The two ways to drive the clients are those of ``http_clients``: closed loop
(each client sends its next bet when the last one is answered: capacity) and
paced (``rate`` bets per second over all clients on a fixed schedule; latency
counts from the scheduled time, so a server that falls behind is charged for
its backlog).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

from websockets.uri import parse_uri

from games.benchmarks.http_clients import LoadResult, drive
from games.benchmarks.ws_clients import FrameClient, fetch_ticket

ACK = 200  # how an ``ack`` counts in ``LoadResult.statuses`` (errors count under 400)
ERROR = 400
ANSWER_TIMEOUT = 10.0  # seconds: a bet not answered by then counts as an error (``no_answer``)


class BetSocket(FrameClient):
    """One player's websocket; ``bet`` sends one chip and awaits its answer."""

    def __init__(self, uri: str, origin: str, body: dict[str, Any]) -> None:
        super().__init__(uri, origin)
        self.body = body
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting: dict[str, asyncio.Future[str]] = {}
        self.codes: dict[str, int] = {}

    def handshake(self, status: int) -> None:
        if status != 101 and not self.ready.done():
            self.ready.set_exception(RuntimeError(f"handshake refused: HTTP {status}"))

    def message(self, text: bytes) -> None:
        message = json.loads(text)
        kind = message.get("type")
        if kind == "snapshot" and not self.ready.done():
            self.ready.set_result(None)
        elif kind in ("ack", "error") and message.get("id") in self.waiting:
            if kind == "error":
                code = str(message.get("code"))
                self.codes[code] = self.codes.get(code, 0) + 1
            future = self.waiting.pop(message["id"])
            if not future.done():
                future.set_result(kind)

    def connection_lost(self, exc: Exception | None) -> None:
        error = exc or ConnectionError("the server closed the websocket")
        if not self.ready.done():
            self.ready.set_exception(error)
        for future in self.waiting.values():
            if not future.done():
                future.set_exception(error)

    async def bet(self) -> str:
        """One chip; ``"ack"`` or ``"error"``."""
        client_id = os.urandom(12).hex()
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.waiting[client_id] = future
        self.ws.send_text(json.dumps({**self.body, "id": client_id}, separators=(",", ":")).encode())
        self.flush()
        try:
            return await asyncio.wait_for(future, ANSWER_TIMEOUT)
        except TimeoutError:
            self.waiting.pop(client_id, None)
            self.codes["no_answer"] = self.codes.get("no_answer", 0) + 1
            return "error"


async def _client(socket: BetSocket, stop_at: float, interval: float | None, offset: float, result: LoadResult) -> None:
    async def send() -> int:
        return ACK if await socket.bet() == "ack" else ERROR

    await drive(send, stop_at, interval, offset, result)


async def connect(*, url: str, origin: str, tokens: list[str], body: dict[str, Any]) -> list[BetSocket]:
    """One socket per token (``url`` ends with ``?ticket=``; each gets its own
    ticket with its token), each past its snapshot."""
    loop = asyncio.get_running_loop()
    uri = parse_uri(url)
    sockets = []
    gate = asyncio.Semaphore(50)

    async def one(token: str) -> None:
        async with gate:
            socket = BetSocket(url + await fetch_ticket(uri.host, uri.port, token), origin, body)
            await loop.create_connection(lambda: socket, uri.host, uri.port)
            await asyncio.wait_for(socket.ready, 60)
            sockets.append(socket)

    await asyncio.gather(*(one(token) for token in tokens))
    return sockets


async def bet_load(
    *, url: str, origin: str, tokens: list[str], body: dict[str, Any], seconds: float, rate: float | None = None
) -> tuple[LoadResult, dict[str, int]]:
    """Connect one socket per token, then bet for ``seconds`` (closed loop, or
    ``rate`` bets/s in all); returns the load's result and the error codes seen."""
    sockets = await connect(url=url, origin=origin, tokens=tokens, body=body)
    result = LoadResult()
    interval = len(sockets) / rate if rate else None
    started = time.perf_counter()
    stop_at = started + seconds
    try:
        await asyncio.gather(
            *(_client(s, stop_at, interval, (interval or 0) * i / len(sockets), result) for i, s in enumerate(sockets))
        )
        result.seconds = time.perf_counter() - started  # from the first bet: the connections are not counted
    finally:
        for socket in sockets:
            if socket.transport is not None:
                socket.transport.close()
    codes: dict[str, int] = {}
    for socket in sockets:
        for code, n in socket.codes.items():
            codes[code] = codes.get(code, 0) + n
    return result, codes


def run_load(**options: Any) -> tuple[LoadResult, dict[str, int]]:
    """``bet_load(**options)`` on uvloop (the client's loop is not what is measured)."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvicorn's standard extras bring it
        return asyncio.run(bet_load(**options))
    return uvloop.run(bet_load(**options))
