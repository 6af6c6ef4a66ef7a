"""Players' commands over a table websocket, in both game families (interface
layer): where they run and the frame that answers them (docs/websocket.md).

Each command runs on a thread of one pool per process
(``CASINO_WS_COMMAND_THREADS``), not on Channels' ``database_sync_to_async``,
whose single shared thread also runs every consumer's snapshots, chat and
poker feed reads, so a slow read there would hold up every command in the
process (and the reverse). A pool thread treats a command as Django treats a
request: ``close_old_connections`` before and after, as ``request_started`` /
``request_finished`` do in ``casino.http``'s HTTP pool, so a connection past
``CONN_MAX_AGE`` or broken is replaced, and a pooled one goes back to the
pool. The threads live as long as the process, so their connections are reused.

The answer: ``{"type": "ack", "id", "request", "result"}`` with ``result``
exactly the REST answer body (rendered as DRF renders it), or ``{"type":
"error", "id", "request", "code", "message", "details"?}`` with the REST
refusal code (``DomainError.as_dict()``). ``id`` is the client's id as sent
(left out when it is not a string of at most 100 characters).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection
from rest_framework.utils.encoders import JSONEncoder

from casino import metrics
from casino.errors import DomainError
from games.tables.api import MAX_IDEMPOTENCY_KEY

log = logging.getLogger(__name__)

_pool: ThreadPoolExecutor | None = None


def command_pool() -> ThreadPoolExecutor:
    """This process's command threads (created on first use)."""
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=settings.CASINO_WS_COMMAND_THREADS, thread_name_prefix="ws-command")
    return _pool


def _as_request(function: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    close_old_connections()
    # Django's health check at the first cursor, made now: a command may start
    # with a raw psycopg statement (the lean paths), which skips it.
    connection.close_if_health_check_failed()
    try:
        return function(**kwargs)
    finally:
        close_old_connections()


# DRF's encoder: the REST answer's datetimes as DRF renders them (ISO-8601, "Z" for UTC).
_encoder = JSONEncoder()


def as_rendered(value: Any) -> Any:
    """``value`` as the REST API would render it, as plain JSON data."""
    if isinstance(value, dict):
        return {k: as_rendered(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [as_rendered(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return as_rendered(_encoder.default(value))


async def on_thread(function: Callable[..., Any], /, **kwargs: Any) -> Any:
    """``function(**kwargs)`` on a command thread, treated as a request (module docstring)."""
    loop = asyncio.get_running_loop()
    # In a copy of the frame's log context (request id, player): a pool thread keeps no context between commands.
    context = contextvars.copy_context()
    return await loop.run_in_executor(command_pool(), functools.partial(context.run, _as_request, function, kwargs))


async def answer_awaiting(request: str, client_id: object, command: Awaitable[Any], *, family: str) -> dict[str, Any]:
    """The ``ack`` or ``error`` frame for the command of type ``request`` with
    id ``client_id``, once ``command`` (its REST answer body, or a raised
    ``DomainError``) is done. An unexpected failure is logged and answered
    ``server_error`` (REST's 500): the connection stays, and a retry with the
    same id is safe. Counted and timed under ``family`` (``casino.metrics``,
    transport ``ws``; ``request`` is one of the family's command kinds)."""
    echo = {"id": client_id} if isinstance(client_id, str) and len(client_id) <= MAX_IDEMPOTENCY_KEY else {}
    try:
        with metrics.command_observed(family=family, command=request, transport="ws"):
            result = await command
    except DomainError as exc:
        return {"type": "error", **echo, "request": request, **exc.as_dict()}
    except Exception:
        log.exception("websocket command %s failed", request)
        return {"type": "error", **echo, "request": request, "code": "server_error", "message": "Retry the command."}
    return {"type": "ack", **echo, "request": request, "result": as_rendered(result)}


async def answer(
    request: str, client_id: object, function: Callable[..., Any], /, *, family: str, **kwargs: Any
) -> dict[str, Any]:
    """``answer_awaiting`` for ``function(**kwargs)`` run on a command thread."""
    return await answer_awaiting(request, client_id, on_thread(function, **kwargs), family=family)
