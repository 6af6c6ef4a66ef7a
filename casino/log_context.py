"""What a log line is about: the request, player, table, game and Celery task
in hand, kept in context variables and added to every log record
(docs/live.md, "Logs").

Who sets them: ``RequestContextMiddleware`` (an HTTP request: its request id,
from a valid ``X-Request-ID`` header or new, echoed in the response; the
authenticated player), the table websockets per command frame
(``games.tables.realtime``: a request id of its own per command), the
services and interfaces where a table and a round or hand become known
(``bind``), and Celery's signals (``casino.celery``): a task published while a
request id is set carries it in a message header, and the worker restores it
around the task (with the task's name and id), so the task's lines read the
request's id.

Context variables follow asyncio tasks and ``contextvars.copy_context().run``;
a pool thread (``casino.http``, the websocket command pool) keeps its own
context between jobs, so every setter here either runs inside ``scope`` (which
puts back what was there on exit) or in a context copied for the one job.

No Django import at module level: logging is configured before the apps are ready.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponseBase

#: The context a log record may carry, in the order a JSON line lists them.
FIELDS = ("request_id", "player", "table", "game_number", "hand_id", "task", "task_id")

_vars: dict[str, ContextVar[Any]] = {name: ContextVar(f"casino_log_{name}", default=None) for name in FIELDS}

#: The header a client (or a proxy) names its request with, and the one the answer echoes.
REQUEST_ID_HEADER = "X-Request-ID"
#: The ``HttpRequest`` attribute that keeps its request id (for the lines logged after the middleware).
REQUEST_ID_ATTRIBUTE = "casino_request_id"
#: The Celery message header that carries the request id to the task.
TASK_HEADER = "casino_request_id"
#: A request id a client may choose: 1 to 128 letters, digits and ``._:-`` (a UUID fits);
#: anything else is replaced by a new id, so a header can never forge a log line's layout.
_VALID_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def new_request_id() -> str:
    """A fresh request id (a UUID4's 32 hex digits)."""
    return uuid.uuid4().hex


def request_id_from(header: str | None) -> str:
    """``header`` if it is a valid request id (``_VALID_REQUEST_ID``), else a new one."""
    if header is not None and _VALID_REQUEST_ID.fullmatch(header):
        return header
    return new_request_id()


def current() -> dict[str, Any]:
    """The context fields set now (those that are not ``None``)."""
    return {name: value for name, var in _vars.items() if (value := var.get()) is not None}


def bind(**fields: Any) -> None:
    """Set context fields (names from ``FIELDS``) for the rest of the enclosing
    ``scope``, request or task: a service that learns its table and round says so."""
    for name, value in fields.items():
        _vars[name].set(value)


@contextmanager
def scope(**fields: Any) -> Iterator[None]:
    """Set ``fields`` for the block; on exit every field is back to what it was
    before the block, including those ``bind`` set inside it."""
    saved = {name: var.get() for name, var in _vars.items()}
    try:
        bind(**fields)
        yield
    finally:
        for name, var in _vars.items():
            var.set(saved[name])


def clear() -> None:
    """Unset every field (a worker's task is over)."""
    for var in _vars.values():
        var.set(None)


class ContextFilter(logging.Filter):
    """Adds the context fields set now to each record (as attributes the
    formatters read); a field the call passed in ``extra`` wins. Django's line
    for an answer 4xx or 5xx (``django.request``, logged once the middleware is
    done) takes the request id from its ``request``."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, value in current().items():
            if not hasattr(record, name):
                setattr(record, name, value)
        if not hasattr(record, "request_id"):
            request_id = getattr(getattr(record, "request", None), REQUEST_ID_ATTRIBUTE, None)
            if request_id is not None:
                record.request_id = request_id
        return True


class RequestContextMiddleware:
    """An HTTP request's log context: its request id (a valid ``X-Request-ID``
    header's, else a new one; echoed in the answer's ``X-Request-ID``) and,
    once authenticated, its player. Django runs each request on one thread
    (``casino.http``): the context is set for the request and put back after."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        request_id = request_id_from(request.headers.get(REQUEST_ID_HEADER))
        setattr(request, REQUEST_ID_ATTRIBUTE, request_id)
        with scope(request_id=request_id):
            response = self.get_response(request)
        response[REQUEST_ID_HEADER] = request_id
        return response

    def process_view(self, request: HttpRequest, view: Any, args: Any, kwargs: Any) -> None:
        """The session's user is known here (``AuthenticationMiddleware`` ran); an API
        token's user only once DRF authenticates it (``casino.auth.TokenAuthentication``
        binds it then)."""
        try:
            user = getattr(request, "user", None)
            authenticated = user is not None and user.is_authenticated
        except Exception:  # the session store failed: the view meets that error itself, unmasked
            return None
        if authenticated and user is not None:
            bind(player=user.pk)
