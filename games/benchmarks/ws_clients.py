"""A light websocket client fleet for ``bench fanout`` (no Django: a child process).

Why not one ``websockets.connect`` per client in the benchmark process: 2,000
asyncio-stream clients in one Python process on the same 2 cores as the server
spend more CPU decoding than the server spends sending, so the measured latency
was mostly the client's own queue. Each child here holds its share of the
sockets as plain asyncio protocols driving the ``websockets`` library's
Sans-I/O ``ClientProtocol`` (a real handshake, real frame parsing, the same
permessage-deflate offer a browser makes), parses each text frame's JSON and
stamps ``time.time()`` right after it: the time the client *has* the message.

Protocol with the parent, line-based on stdin/stdout:

- stdin, first line: JSON ``{"url": "ws://host:port/path?ticket=", "origin": ..., "tokens": [...], "deflate": bool,
  "slow": bool, "keep_frames": bool}``; each socket first fetches a websocket ticket with its API token
  (``POST /api/auth/ws-ticket/``, ``fetch_ticket``) and appends it to ``url``;
- stdout: ``connected <n>`` once every socket has its snapshot;
- stdin: ``stop``; stdout: one JSON line ``{"received": {seq: [times]}, "closed": {how: n},
  "frames": {seq: text}}`` (``frames``: with ``keep_frames``, the text of each delta
  as first received, so that ``bench fanout``'s bare peer can send the same bytes).

A *slow* fleet (``"slow": true``) is the misbehaving 5 % of ``bench fanout``:
each socket has a 4 KiB receive buffer and never reads after its first
snapshot (taking that one first keeps the run from measuring a burst of
connections), and asks for a snapshot every ``SLOW_SNAPSHOT_SECONDS`` (a client that keeps
asking and never reads is what fills a server's send buffers soonest; tiny
deltas alone would take hundreds of rounds). On ``stop`` it reads again,
drains what the server had sent and reports how each socket was closed: the
close code the server sent, ``reset`` (the server aborted the TCP connection),
``eof`` (the server ended it without a close frame), or ``open``. It waits
``SLOW_CLOSE_WAIT`` seconds for that: a close the server decided during the run
is already on its way (its frame behind what the socket holds, or the reset),
so a socket still open by then was not closed within the run.

Run as ``python -m games.benchmarks.ws_clients``.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import time
from typing import cast

from websockets.client import ClientProtocol
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.typing import Origin
from websockets.uri import parse_uri

CONNECT_CONCURRENCY = 50
SLOW_SNAPSHOT_SECONDS = 0.5
SLOW_RECEIVE_BUFFER = 4096
SLOW_CLOSE_WAIT = 3.0


async def fetch_ticket(host: str, port: int, token: str) -> str:
    """A single-use websocket ticket for the holder of ``token``: one HTTP/1.1
    ``POST /api/auth/ws-ticket/`` on its own connection (no HTTP library in
    this light child process). A connection needs a ticket of its own."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(
            f"POST /api/auth/ws-ticket/ HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Token {token}\r\n"
            "Content-Length: 0\r\nConnection: close\r\n\r\n".encode()
        )
        await writer.drain()
        answer = await reader.read()
    finally:
        writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"no websocket ticket: {head.splitlines()[:1]!r} {body[:200]!r}")
    return str(json.loads(body)["ticket"])


class FrameClient(asyncio.Protocol):
    """A light websocket client: the Sans-I/O handshake, frames written as the
    protocol produces them, and each whole text message handed to ``message``
    (``games.benchmarks.ws_bets`` drives its bets with it too)."""

    def __init__(self, uri: str, origin: str, deflate: bool = False) -> None:
        extensions = [ClientPerMessageDeflateFactory()] if deflate else None
        self.ws = ClientProtocol(parse_uri(uri), origin=Origin(origin), extensions=extensions, max_size=None)
        self.transport: asyncio.Transport | None = None
        self.partial: list[bytes] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        self.ws.send_request(self.ws.connect())
        self.flush()

    def flush(self) -> None:
        assert self.transport is not None
        for data in self.ws.data_to_send():
            if data:
                self.transport.write(data)

    def data_received(self, data: bytes) -> None:
        self.ws.receive_data(data)
        for event in self.ws.events_received():
            if isinstance(event, Response):
                self.handshake(event.status_code)
            elif isinstance(event, Frame) and event.opcode == Opcode.CLOSE:
                close = self.ws.close_rcvd
                self.closed(str(close.code) if close is not None else "close")
            elif isinstance(event, Frame) and event.opcode in (Opcode.TEXT, Opcode.CONT):
                self.partial.append(bytes(event.data))
                if event.fin:
                    self.message(b"".join(self.partial))
                    self.partial = []
        self.flush()  # pongs, close replies

    def handshake(self, status: int) -> None:
        """The server's answer to the handshake (101: accepted)."""

    def closed(self, how: str) -> None:
        """The server's close frame arrived (``how``: its code)."""

    def message(self, text: bytes) -> None:
        """One whole text message."""


class Client(FrameClient):
    """One websocket: handshake, then record every ``delta`` frame's arrival."""

    def __init__(
        self,
        uri: str,
        origin: str,
        deflate: bool,
        received: dict[int, list[float]],
        slow: bool = False,
        frames: dict[int, str] | None = None,
    ) -> None:
        super().__init__(uri, origin, deflate)
        self.received = received
        self.frames = frames
        self.slow = slow
        self.snapshot: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.ended: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def handshake(self, status: int) -> None:
        if status != 101 and not self.snapshot.done():
            self.snapshot.set_exception(RuntimeError(f"handshake refused: HTTP {status}"))

    def closed(self, how: str) -> None:
        if not self.ended.done():
            self.ended.set_result(how)

    def message(self, text: bytes) -> None:
        message = json.loads(text)
        kind = message.get("type")
        if kind == "delta":
            seq = int(message["seq"])
            self.received.setdefault(seq, []).append(time.time())
            if self.frames is not None and seq not in self.frames:
                self.frames[seq] = text.decode()
        elif kind == "snapshot" and not self.snapshot.done():
            self.snapshot.set_result(None)
            if self.slow and self.transport is not None:
                self.transport.pause_reading()  # never reads again until ``stop``

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.snapshot.done():
            self.snapshot.set_exception(exc or ConnectionError("closed before the snapshot"))
        if not self.ended.done():
            self.ended.set_result("reset" if exc is not None else "eof")

    async def ask_snapshots(self) -> None:
        """A slow client's requests (written without ever reading the answers)."""
        while not self.ended.done() and self.transport is not None and not self.transport.is_closing():
            self.ws.send_text(b'{"type":"snapshot"}')
            self.flush()
            await asyncio.sleep(SLOW_SNAPSHOT_SECONDS)

    async def how_closed(self, wait: float) -> str:
        """Read again and wait up to ``wait`` seconds for the end of the connection."""
        if self.transport is not None and not self.transport.is_closing():
            self.transport.resume_reading()
        try:
            return await asyncio.wait_for(asyncio.shield(self.ended), wait)
        except TimeoutError:
            return "open"


async def main() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=64 * 1024 * 1024)  # the first line lists thousands of tokens
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    config = json.loads(await reader.readline())
    uri = parse_uri(config["url"])
    received: dict[int, list[float]] = {}
    clients: list[Client] = []
    semaphore = asyncio.Semaphore(CONNECT_CONCURRENCY)

    slow = bool(config.get("slow", False))
    frames: dict[int, str] | None = {} if config.get("keep_frames") else None

    async def connect(token: str) -> None:
        async with semaphore:
            ticket = await fetch_ticket(uri.host, uri.port, token)
            deflate = bool(config.get("deflate", True))
            client = Client(config["url"] + ticket, config["origin"], deflate, received, slow, frames)
            clients.append(client)
            sock = None
            if slow:
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SLOW_RECEIVE_BUFFER)
                sock.setblocking(False)
                await loop.sock_connect(sock, (uri.host, uri.port))
                await loop.create_connection(lambda: client, sock=sock)
            else:
                await loop.create_connection(lambda: client, uri.host, uri.port)
            await asyncio.wait_for(client.snapshot, 120)

    await asyncio.gather(*(connect(token) for token in config["tokens"]))
    print(f"connected {len(clients)}", flush=True)
    askers = [asyncio.ensure_future(client.ask_snapshots()) for client in clients] if slow else []
    while (await reader.readline()).strip() != b"stop":
        pass
    for asker in askers:
        asker.cancel()
    closed: dict[str, int] = {}
    if slow:
        for how in await asyncio.gather(*(client.how_closed(SLOW_CLOSE_WAIT) for client in clients)):
            closed[how] = closed.get(how, 0) + 1
    print(json.dumps({"received": received, "closed": closed, "frames": frames or {}}), flush=True)
    for client in clients:
        if client.transport is not None:
            client.transport.abort()


def run() -> None:
    try:
        import uvloop

        uvloop.run(main())
    except ImportError:  # the client's loop is not what is measured
        asyncio.run(main())


if __name__ == "__main__":
    run()
