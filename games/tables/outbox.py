"""One websocket connection's outbound side (docs/websocket.md, "Delivery"):
its bounded queue of frames and writer task (``Outbox``), the loop's watchdog
that times out sends and clients that take nothing, and the transport behind
an ASGI ``send`` (``transport_of``). Interface layer; the feed
(``games.tables.feed``) hands each connection's frames to its outbox."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from django.conf import settings

from casino import metrics

log = logging.getLogger(__name__)

CLOSE_TOO_SLOW = 4408


def transport_of(send: Any) -> Any:
    """The asyncio transport behind an ASGI ``send``, or ``None``.

    ASGI has no way to abort a connection: uvicorn's protocols (``websockets``
    sans-I/O, legacy ``websockets``, ``wsproto``) keep their transport as
    ``transport`` on the object whose bound method ``send`` is, and Channels'
    session middleware wraps the server's send as ``real_send``; follow that."""
    for _ in range(8):
        owner = getattr(send, "__self__", None)
        if owner is None:
            return None
        transport = getattr(owner, "transport", None)
        if transport is not None and callable(getattr(transport, "abort", None)):
            return transport
        send = getattr(owner, "real_send", None)
    return None


_WATCHDOG_SECONDS = 0.25
_outboxes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, weakref.WeakSet[Outbox]] = weakref.WeakKeyDictionary()


def _watched_outboxes(loop: asyncio.AbstractEventLoop) -> weakref.WeakSet[Outbox]:
    """The loop's live outboxes, with its watchdog started on first use."""
    found = _outboxes.get(loop)
    if found is None:
        found = _outboxes[loop] = weakref.WeakSet()
        loop.create_task(_watch(found))
    return found


async def _watch(outboxes: weakref.WeakSet[Outbox]) -> None:
    """Every ``_WATCHDOG_SECONDS``: time out the sends that have waited too long
    and the clients that take nothing (one task for every connection of the
    loop, instead of a timer per send)."""
    loop = asyncio.get_running_loop()
    while True:
        await asyncio.sleep(_WATCHDOG_SECONDS)
        now = loop.time()
        for outbox in list(outboxes):
            try:
                outbox.overdue(now)
            except Exception:  # one connection's bookkeeping must not end the watchdog
                log.exception("feed: timing out a send failed")


class Outbox:
    """One connection's bounded queue of frames and its writer task.

    ``put`` never waits. ``on_gone`` is called once when the connection stops
    taking frames (too slow, or the socket failed), so its feed can drop it.

    Closing a too-slow connection (why it is done this way: uvicorn's
    ``send`` first awaits its ``writable`` event, cleared while the
    transport's write buffer is over its high-water mark, and writes a whole
    frame synchronously once it is set, so cancelling a send that waits writes
    nothing): the send in flight is cancelled, then ``websocket.close(4408)``
    waits up to ``close_grace`` seconds for the socket to take it. A client
    that reads again within that time gets the frames already written and then
    the close frame; one that does not is aborted (``abort``: TCP reset, the
    server's buffers freed). A close written is followed by an abort
    ``close_grace`` seconds later too, in case the client stops again before
    the closing handshake ends (harmless once the connection is closed).

    A client that stops reading while the kernel still buffers what is sent
    to it (a send then never waits) is found by ``progress`` (``delivery_progress``):
    once bytes have waited for it and it has not taken as many as have
    waited since within ``timeout`` seconds, it is too slow, and closed as above. A never-reading
    client is therefore closed within ``timeout`` (plus the watchdog's tick)
    of its receive window filling up, however little is sent to it after."""

    def __init__(
        self,
        *,
        send: Callable[[str], Awaitable[None]],
        close: Callable[[int], Awaitable[None]],
        on_gone: Callable[[], None],
        abort: Callable[[], None] | None = None,
        progress: Callable[[], tuple[int, int] | None] | None = None,
        limit: int | None = None,
        timeout: float | None = None,
        close_grace: float | None = None,
    ) -> None:
        self.send, self.close, self.on_gone = send, close, on_gone
        self.abort = abort or (lambda: None)
        self.limit = int(limit if limit is not None else settings.CASINO_WS_OUTBOX_FRAMES)
        self.timeout = float(timeout if timeout is not None else settings.CASINO_WS_SEND_TIMEOUT_SECONDS)
        grace = close_grace if close_grace is not None else settings.CASINO_WS_CLOSE_GRACE_SECONDS
        self.close_grace = float(grace)
        self.frames: collections.deque[str] = collections.deque()
        self.wake = asyncio.Event()
        self.closing = False  # too slow: the writer closes with 4408, nothing more is sent
        self.gone = False
        # When the send in flight started (loop time), else None: the loop's
        # watchdog (``_watch``) times sends out, so a send costs no timer of its own.
        self.sending_since: float | None = None
        # The client's intake (``delivery_progress``), checked by the watchdog
        # after a frame was written and until nothing waits for the client.
        self.progress = progress
        self.wrote = False
        # Since when (loop time) bytes have waited for the client, what it had
        # acknowledged then and how much waited: taking all of that restarts the bound.
        self.unread_since: float | None = None
        self.acknowledged = 0
        self.owed = 0
        # A frame (the very object ``put`` queued) and what to call right after it is written.
        self._on_written: tuple[str, Callable[[], None]] | None = None
        loop = asyncio.get_running_loop()
        self.task = loop.create_task(self._write())
        _watched_outboxes(loop).add(self)

    @property
    def open(self) -> bool:
        return not (self.closing or self.gone)

    def put(self, text: str) -> None:
        """Queue a frame; on overflow close the connection with 4408 instead."""
        if not self.open:
            return
        if len(self.frames) >= self.limit:
            self.too_slow(f"outbox over {self.limit} frames", reason="outbox_full")
            return
        self.frames.append(text)
        self.wake.set()

    def when_written(self, frame: str, then: Callable[[], None]) -> None:
        """Call ``then`` right after ``frame``, the very object queued by ``put``,
        is written to the connection (never, if it is not); one frame at a time."""
        self._on_written = (frame, then)

    def too_slow(self, why: str, *, reason: str) -> None:
        """Close with 4408: ``why`` for the log, ``reason`` (``outbox_full``,
        ``send_timeout``, ``snapshot_backlog``) for ``casino_ws_too_slow_total``."""
        if not self.open:
            return
        log.warning("feed: closing a connection with %s (%s)", CLOSE_TOO_SLOW, why)
        metrics.ws_too_slow(reason)
        self.closing = True
        self.frames.clear()  # the client resumes from its last seq with a snapshot
        if self.sending_since is not None:
            self.task.cancel()  # its send waits for a full socket: nothing of it is written
        self.wake.set()
        self._gone()

    def _gone(self) -> None:
        self.gone = True
        self.frames.clear()
        try:
            self.on_gone()
        except Exception:  # the feed's bookkeeping must never break a writer
            log.exception("feed: unsubscribing a connection failed")

    async def _close_too_slow(self) -> None:
        """4408 once the socket takes it, within ``close_grace``; else abort."""
        try:
            await asyncio.wait_for(self.close(CLOSE_TOO_SLOW), self.close_grace)
        except TimeoutError:
            log.warning("feed: a too-slow client took no close frame in %s s; aborting it", self.close_grace)
            self.abort()
            return
        except Exception as exc:  # client gone meanwhile
            log.info("feed: connection gone before its 4408: %r", exc)
            return
        asyncio.get_running_loop().call_later(self.close_grace, self.abort)

    async def _write(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                if self.closing:
                    await self._close_too_slow()
                    return
                if not self.frames:
                    if self.gone:
                        return
                    self.wake.clear()
                    await self.wake.wait()
                    continue
                self.sending_since = loop.time()
                try:
                    frame = self.frames.popleft()
                    await self.send(frame)
                    self.wrote = True
                    watched = self._on_written
                    if watched is not None and watched[0] is frame:
                        self._on_written = None
                        watched[1]()
                except asyncio.CancelledError:
                    if not self.closing:
                        raise  # stopped
                    # Too slow (``too_slow`` cancelled the send): close with 4408.
                    task = asyncio.current_task()
                    if task is not None:
                        task.uncancel()
                finally:
                    self.sending_since = None
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # client gone, dead socket: this connection only
            log.info("feed: connection gone: %r", exc)
            if not self.gone:
                self._gone()

    def overdue(self, now: float) -> None:
        """Called by the watchdog: a send in flight for longer than the bound is
        too slow, and so is a client that has acknowledged none of the bytes
        waiting for it for as long."""
        if self.sending_since is not None and now - self.sending_since > self.timeout:
            self.too_slow(f"a send took over {self.timeout} s", reason="send_timeout")
            return
        if self.progress is None or not self.open or not (self.wrote or self.unread_since is not None):
            return
        self.wrote = False
        found = self.progress()
        if found is None:
            self.unread_since = None
            return
        waiting, acknowledged = found
        self.owed = max(self.owed, waiting)
        if not waiting:
            self.unread_since = None
        elif self.unread_since is None or acknowledged - self.acknowledged >= self.owed:
            # Bytes wait, or the client took as much as ever waited since the bound began: it
            # begins (again). Not any progress: a client that reads nothing still takes a few
            # bytes now and then (its kernel compacts its full receive queue, opening the window).
            self.unread_since, self.acknowledged, self.owed = now, acknowledged, waiting
        elif now - self.unread_since > self.timeout:
            self.too_slow(f"its client did not take {self.owed} waiting bytes in {self.timeout} s",
                          reason="send_timeout")  # fmt: skip

    async def stop(self) -> None:
        """End the writer (the connection is closing); frames still queued are dropped."""
        if not self.gone:
            self._gone()
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self.task
