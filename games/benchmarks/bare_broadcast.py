"""The peer of the table feed in ``bench fanout``: the least a websocket
broadcaster does on the same server stack.

Served only when ``CASINO_BENCH_ENDPOINTS`` is on (never in production), at
``ws/bench/broadcast/``, by the same uvicorn, through the same ASGI router,
origin check, session middleware and Channels consumer base (with its channel
layer) as the table socket ``ws/tables/<id>/``, and authenticated the same
way (a single-use ``?ticket=``, ``games.tables.realtime.authenticate_scope``).
On connect it sends a one-line ``snapshot`` frame (what the benchmark's
clients wait for) and joins the process's set of sockets.

It learns of a broadcast the way the real feed learns of a commit: a
PostgreSQL ``NOTIFY`` (channel ``casino_bench_fanout``), one listener
connection per process, one notification per commit. The notification's
payload IS the frames: the benchmark replays the delta frames the real feed
sent (the same bytes), those of one commit in one payload, one per line
(``FRAME_SEPARATOR``: compact JSON has no raw newline). This peer writes them
to every socket in turn, all of a commit's frames to a socket before the next
socket, awaiting each send, as the real feed hands a batch's frames to each
socket together. No log read, no translation, no per-connection queue or
writer task: what is left is the cost of the websocket sends themselves,
which is what the feed's own figure is compared with. Its broadcasts count
as deliveries for the server's collector schedule (``games.tables.collector.delivering``),
as the feed's hand-outs do: no walk of everything the freezer defers starts
during one or within the quiet interval after it, so the peer's figure bears
the collector's schedule as the feed's does.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from casino.processes import database_url_of
from games.tables.collector import delivering
from games.tables.realtime import CLOSE_UNAUTHENTICATED, DirectDispatch, authenticate_scope, refuse

log = logging.getLogger(__name__)

CHANNEL = "casino_bench_fanout"
FRAME_SEPARATOR = "\n"
SNAPSHOT = '{"type":"snapshot"}'


class _Broadcaster:
    """The process's sockets and its one LISTEN connection (started by the first socket)."""

    def __init__(self) -> None:
        self.sockets: dict[BareBroadcastConsumer, None] = {}  # insertion-ordered set
        self.task: asyncio.Task[None] | None = None
        self.listening = asyncio.Event()

    def add(self, socket: BareBroadcastConsumer) -> None:
        self.sockets[socket] = None
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self.listen())

    async def listen(self) -> None:
        import psycopg

        url = database_url_of(settings.DATABASES["default"])
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as listener:
            await listener.execute(f"LISTEN {CHANNEL}")
            self.listening.set()
            async for note in listener.notifies():
                frames = note.payload.split(FRAME_SEPARATOR)
                with delivering():  # the server's collector schedule treats it as the feed's hand-outs
                    for socket in list(self.sockets):
                        try:
                            for frame in frames:
                                await socket.send(text_data=frame)
                        except Exception as exc:  # that client is gone: that socket only
                            log.info("bare broadcast: dropping a socket: %r", exc)
                            self.sockets.pop(socket, None)


_broadcasters: dict[int, _Broadcaster] = {}


def broadcaster() -> _Broadcaster:
    """The running event loop's broadcaster (one per process in practice)."""
    key = id(asyncio.get_running_loop())
    if key not in _broadcasters:
        _broadcasters[key] = _Broadcaster()
    return _broadcasters[key]


class BareBroadcastConsumer(DirectDispatch, AsyncWebsocketConsumer):
    """One websocket of the bare peer: ticket auth, a snapshot line, then every broadcast frame."""

    async def connect(self) -> None:
        user = await authenticate_scope(self.scope)
        if user is None:
            await refuse(self, CLOSE_UNAUTHENTICATED)
            return
        await self.accept()
        hub = broadcaster()
        hub.add(self)
        await hub.listening.wait()  # a broadcast after the snapshot reaches this socket
        await self.send(text_data=SNAPSHOT)

    async def disconnect(self, code: int) -> None:
        broadcaster().sockets.pop(self, None)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any) -> None:
        """Inbound frames are ignored: this peer only broadcasts."""
