"""A light HTTP/1.1 load generator for ``bench bets``.

Why not ``httpx``: it spent 1.7 to 3 ms of CPU per request, on the same two cores
as the server it measures, so a good part of the server's budget went to the
client. Each client here is one keep-alive connection, an ``asyncio.Protocol``
that writes a ready-made request (a fresh ``Idempotency-Key`` each time) and
parses the answer with ``httptools`` (the C parser uvicorn itself uses): a real
HTTP exchange for a fraction of the CPU.

Two ways to drive the clients:

- closed loop (``rate=None``): each client sends its next request as soon as
  the previous answer arrived: the server's capacity;
- paced (``rate`` requests per second in all): each client sends on a fixed
  schedule, and the latency counts from the *scheduled* time, so a server that
  falls behind is charged for the wait (no coordinated omission).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import httptools


@dataclass
class LoadResult:
    latencies: list[float] = field(default_factory=list)  # seconds, one per answered request
    statuses: dict[int, int] = field(default_factory=dict)
    # How long the load ran, from the first request on (a websocket load's
    # connections and tickets come before it and are not counted).
    seconds: float = 0.0

    @property
    def errors(self) -> int:
        return sum(n for status, n in self.statuses.items() if status != 200)


class _Connection(asyncio.Protocol):
    """One keep-alive connection; ``exchange`` sends a request and awaits its status code."""

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.transport: asyncio.Transport | None = None
        self.answer: asyncio.Future[int] | None = None
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is not an asyncio.Transport

    def data_received(self, data: bytes) -> None:
        self.parser.feed_data(data)

    def on_message_complete(self) -> None:
        if self.answer is not None and not self.answer.done():
            self.answer.set_result(self.parser.get_status_code())

    def connection_lost(self, exc: Exception | None) -> None:
        if self.answer is not None and not self.answer.done():
            self.answer.set_exception(ConnectionError("the server closed the connection"))
        if not self.closed.done():
            self.closed.set_result(None)

    async def exchange(self, request: bytes) -> int:
        assert self.transport is not None
        self.answer = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return await self.answer


def _request(host: str, path: str, headers: dict[str, str], body: bytes) -> tuple[bytes, bytes]:
    """The request before and after its idempotency key."""
    lines = [f"POST {path} HTTP/1.1", f"Host: {host}", "Content-Type: application/json",
             f"Content-Length: {len(body)}", *(f"{k}: {v}" for k, v in headers.items())]  # fmt: skip
    head = ("\r\n".join(lines) + "\r\nIdempotency-Key: ").encode("latin-1")
    return head, b"\r\n\r\n" + body


async def _client(
    host: str, port: int, path: str, identities: list[dict[str, str]], body: bytes, stop_at: float,
    interval: float | None, offset: float, result: LoadResult,
) -> None:  # fmt: skip
    loop = asyncio.get_running_loop()
    transport, connection = await loop.create_connection(_Connection, host, port)
    requests = [_request(f"{host}:{port}", path, headers, body) for headers in identities]
    sent = 0

    async def send() -> int:
        nonlocal sent
        head, tail = requests[sent % len(requests)]
        sent += 1
        return await connection.exchange(head + os.urandom(16).hex().encode() + tail)

    try:
        await drive(send, stop_at, interval, offset, result)
    finally:
        transport.close()


async def drive(
    send: Callable[[], Awaitable[int]], stop_at: float, interval: float | None, offset: float, result: LoadResult
) -> None:
    """One client: ``send`` until ``stop_at``, every ``interval`` seconds from
    ``offset`` on (paced: the latency counts from the scheduled time) or, with no
    ``interval``, each as soon as the previous answered (closed loop); each
    latency, and the status ``send`` answers, into ``result``."""
    latencies, statuses = result.latencies, result.statuses
    scheduled = time.perf_counter() + offset
    while True:
        if interval is not None:
            delay = scheduled - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
        started = time.perf_counter()
        if started >= stop_at:
            break
        status = await send()
        finished = time.perf_counter()
        latencies.append(finished - (scheduled if interval is not None else started))
        statuses[status] = statuses.get(status, 0) + 1
        if interval is not None:
            scheduled += interval


async def post_load(
    *, host: str, port: int, path: str, clients: list[list[dict[str, str]]], body: bytes, seconds: float,
    rate: float | None = None,
) -> LoadResult:  # fmt: skip
    """One connection per entry of ``clients``; each POSTs ``body`` to ``path``
    until ``seconds`` are over, with each of its header sets (its players) in turn.

    ``rate``: requests per second over all clients, evenly spread (paced mode);
    ``None``: closed loop."""
    result = LoadResult()
    interval = len(clients) / rate if rate else None
    started = time.perf_counter()
    stop_at = started + seconds
    await asyncio.gather(
        *(
            _client(host, port, path, identities, body, stop_at, interval, (interval or 0) * i / len(clients), result)
            for i, identities in enumerate(clients)
        )
    )
    result.seconds = time.perf_counter() - started
    return result


def run(coroutine: object) -> LoadResult:
    """Run on uvloop when it is installed (it is with uvicorn's standard extras)."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvicorn[standard] brings it
        return asyncio.run(coroutine)  # type: ignore[arg-type]
    return uvloop.run(coroutine)  # type: ignore[arg-type]
