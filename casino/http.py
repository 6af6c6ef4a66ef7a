"""Django's HTTP handling under ASGI, one request per thread of a fixed pool.

Every view of this project is synchronous (DRF, the admin), and so is most of
Django's middleware. Django's own ``ASGIHandler`` runs such a stack by hopping
between the event loop and a thread for each middleware's request and response
halves, and starts a new thread (with a new database connection) per request:
on the bet path that bookkeeping cost more CPU than the bet.

``ThreadPoolHTTPHandler`` does what a threaded WSGI server does instead: the
event loop reads the body, one pool thread runs the whole synchronous chain
(``request_started``, middleware, view, ``request_finished``), and the event
loop sends the response. Pool threads live as long as the process, so their
database connections are reused (``CONN_MAX_AGE`` or the psycopg pool).
Websockets stay with Channels; ``casino.asgi`` routes by scope type.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncIterator, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import SyncToAsync
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers import base
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.db import connections
from django.http import FileResponse, HttpResponseBase, StreamingHttpResponse
from django.urls import set_script_prefix

DEFAULT_THREADS = 8


def http_threads() -> int:
    """Pool threads per process: ``HTTP_THREADS``, else the database pool's size, else 8.

    One thread holds at most one database connection, so more threads than
    pooled connections would only queue on the pool."""
    configured = os.environ.get("HTTP_THREADS") or os.environ.get("DB_POOL_MAX_SIZE")
    threads = int(configured) if configured else DEFAULT_THREADS
    return threads if threads > 0 else DEFAULT_THREADS


def close_pool(executor: ThreadPoolExecutor, threads: int) -> None:
    """Close the database connections of each of the ``threads`` threads of
    ``executor`` (a thread's connections can only be closed by that thread),
    then stop it: for any pool whose threads keep their connections."""
    everyone = threading.Barrier(threads)

    def close_own() -> None:
        everyone.wait(timeout=30)  # one task per thread: all wait until all run
        connections.close_all()

    for future in [executor.submit(close_own) for _ in range(threads)]:
        future.result()
    executor.shutdown()


class ThreadPoolHTTPHandler(ASGIHandler):
    """An ASGI callable for ``http`` scopes; the middleware chain is loaded synchronously."""

    def __init__(self, threads: int | None = None) -> None:
        base.BaseHandler.__init__(self)
        self.load_middleware(is_async=False)
        self.threads = threads or http_threads()
        self.executor = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="http")

    def close(self) -> None:
        """Close every pool thread's database connections and stop the pool."""
        close_pool(self.executor, self.threads)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        await self.handle(scope, receive, send)

    async def handle(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        loop = asyncio.get_running_loop()
        try:
            response = await loop.run_in_executor(self.executor, self._respond, scope, body_file, loop)
            if isinstance(response, StreamingHttpResponse | FileResponse) and not response.is_async:
                if isinstance(response, FileResponse):
                    response.block_size = self.chunk_size
                # Read each chunk on a pool thread (a file read may block).
                response.streaming_content = self._pulled(response.streaming_content)  # type: ignore[arg-type]
            try:
                await self.send_response(response, send)
            except asyncio.CancelledError:
                pass  # the client went away while the response was sent
            finally:
                if response.streaming:
                    # A streamed body was produced while it was sent: release
                    # its resources (and the request's connection) only now.
                    await loop.run_in_executor(self.executor, response.close)
        finally:
            body_file.close()

    async def _pulled(self, chunks: Iterable[bytes]) -> AsyncIterator[bytes]:
        loop = asyncio.get_running_loop()
        iterator = iter(chunks)
        while (chunk := await loop.run_in_executor(self.executor, next, iterator, None)) is not None:
            yield chunk

    def _respond(self, scope: dict[str, Any], body_file: Any, loop: asyncio.AbstractEventLoop) -> HttpResponseBase:
        """The synchronous part, on a pool thread: what ``WSGIHandler.__call__`` does."""
        # ``async_to_sync`` in a view (a channel-layer send, the health check's
        # round trip) runs on the server's event loop, as it does under
        # Django's handler: the layers are bound to that loop (the in-memory
        # one entirely, channels_redis for receiving).
        SyncToAsync.threadlocal.main_event_loop = loop
        SyncToAsync.threadlocal.main_event_loop_pid = os.getpid()
        set_script_prefix(get_script_prefix(scope))
        signals.request_started.send(sender=self.__class__, scope=scope)
        request, error_response = self.create_request(scope, body_file)
        if request is None:
            assert error_response is not None  # Django returns one or the other
            response: HttpResponseBase = error_response
        else:
            response = self.get_response(request)
            response._handler_class = self.__class__  # type: ignore[attr-defined]
        if not response.streaming:
            # The body is rendered already: closing now fires request_finished
            # on this thread, which returns its database connection.
            response.close()
        return response
