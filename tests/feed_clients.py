"""Websocket clients for the feed's tests (tests/house/live/test_backpressure.py,
tests/poker/test_backpressure.py): a client that reads everything and notes
when each frame arrived, and one that stops reading (a tiny TCP receive buffer
and no ``recv``), both against a real server."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import websockets
from django.conf import settings
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed
from websockets.typing import Origin

from tests.ws_auth import ws_ticket


def ws_url(base: str, path: str, token: str, since: str | int | None = None) -> str:
    """The websocket URL with a fresh ticket of the token's player: good for one connection."""
    url = base.replace("http://", "ws://") + f"{path}?ticket={ws_ticket(base, token)}"
    return url if since is None else f"{url}&since={since}"


async def connect(base: str, url: str) -> ClientConnection:
    return await websockets.connect(url, origin=Origin(base), open_timeout=20, max_size=None)


async def stalled(base: str, url: str) -> ClientConnection:
    """A client that takes nothing once its one-frame queue is full: its TCP
    receive buffer is small (64 KB, not autotuned), nobody calls ``recv``, and
    frames are not compressed (a compressed flood of repeated text is tiny)."""
    parts = urlsplit(url)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, (parts.hostname, parts.port))
    return await websockets.connect(
        url, origin=Origin(base), open_timeout=20, sock=sock, max_queue=1, max_size=None, compression=None
    )


async def flood(ws: ClientConnection, *, frames: int = 250, nonce_bytes: int = 32_000) -> None:
    """Ask for ``frames`` large pongs (``frames * nonce_bytes`` bytes, several MB:
    more than the server's socket buffers hold) without reading them."""
    nonce = "n" * nonce_bytes
    for number in range(frames):
        await ws.send(json.dumps({"type": "ping", "nonce": f"{number}:{nonce}"}))


class Reader:
    """Reads a connection until it closes, keeping (arrival time, frame)."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.frames: list[tuple[float, dict[str, Any]]] = []
        self.close_code: int | None = None
        self.task = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        try:
            async for text in self.ws:
                self.frames.append((time.monotonic(), json.loads(text)))
        except ConnectionClosed:
            pass
        self.close_code = self.ws.close_code

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [frame for _, frame in self.frames if frame["type"] == kind]

    async def first(self, kind: str, timeout: float = 20) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while not self.of(kind):
            assert time.monotonic() < deadline, f"no {kind} frame in {timeout} s: {self.frames[-3:]}"
            await asyncio.sleep(0.02)
        return self.of(kind)[0]

    async def stop(self) -> None:
        await self.ws.close()
        await asyncio.wait_for(self.task, 20)


async def drain(ws: ClientConnection, timeout: float = 15) -> tuple[list[dict[str, Any]], int | None]:
    """Everything a (stalled) client still gets, and the close code it ends with."""
    frames: list[dict[str, Any]] = []
    try:
        async with asyncio.timeout(timeout):
            async for text in ws:
                frames.append(json.loads(text))
    except (ConnectionClosed, TimeoutError):
        pass
    return frames, ws.close_code


def gap_free(numbers: list[int]) -> bool:
    """Consecutive, each once."""
    return numbers == list(range(numbers[0], numbers[0] + len(numbers))) if numbers else True


# The session server's log: settings.VAR_DIR is var/, or var/xdist/gwN/ in an xdist worker (tests/services.py).
ASGI_LOG = Path(settings.VAR_DIR) / "test-asgi.log"


def log_offset(path: Path = ASGI_LOG) -> int:
    """Where the session server's log (tests/conftest.py ``asgi_server``) ends now."""
    return path.stat().st_size if path.exists() else 0


def log_since(offset: int, path: Path = ASGI_LOG) -> str:
    with path.open("rb") as log:
        log.seek(offset)
        return log.read().decode(errors="replace")


async def log_shows(offset: int, text: str, timeout: float = 10, path: Path = ASGI_LOG) -> None:
    deadline = time.monotonic() + timeout
    while text not in log_since(offset, path):
        assert time.monotonic() < deadline, f"{text!r} not in the server log in {timeout} s"
        await asyncio.sleep(0.05)


def feed_trouble(log: str) -> list[str]:
    """Lines of a server log showing the feed (or the server) failing: tracebacks,
    the reader's retry loop, an unsubscribe that failed, an ASGI exception."""
    marks = ("Traceback", "feed: reading the log failed", "unsubscribing a connection failed",
             "Exception in ASGI application", "dropping a subscriber")  # fmt: skip
    return [line for line in log.splitlines() if any(mark in line for mark in marks)]
