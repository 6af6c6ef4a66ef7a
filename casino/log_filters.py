"""Logging filters that keep credentials out of log lines (docs/auth.md, "Logs"),
and a client's malformed frame from reading as a server fault.

No model or DRF import here: logging may be set up before Django's apps are ready."""

from __future__ import annotations

import logging
import re


def _without_query(value: object) -> object:
    if isinstance(value, str) and value.startswith("/") and "?" in value:
        return value.split("?", 1)[0] + "?…"
    return value


class StripQueryStrings(logging.Filter):
    """Cut the query string off every path argument of a record (uvicorn logs
    ``"WebSocket /ws/tables/1/?ticket=..." [accepted]`` at INFO, and the full
    path in its access log). The path stays; what followed ``?`` becomes ``…``."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(_without_query(arg) for arg in record.args)
        elif isinstance(record.msg, str) and "?" in record.msg and not record.args:
            record.msg = " ".join(str(_without_query(word)) for word in record.msg.split(" "))
        return True


#: uvicorn's line for a text frame that is not UTF-8 (its sans-I/O websocket
#: implementation closes the connection 1007, as RFC 6455 says, and logs the
#: decoding error at ERROR with its traceback).
CLIENT_FAULTS = ("Invalid UTF-8 sequence received from client",)


class ClientFaultsAsWarnings(logging.Filter):
    """A client's malformed input that uvicorn refuses itself (``CLIENT_FAULTS``)
    is logged as one WARNING line, without a traceback: the server did nothing
    wrong, and a client could otherwise fill the error log with tracebacks
    (issue 35: no traceback in the server log for any frame)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and record.msg.startswith(CLIENT_FAULTS):
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


# uvicorn's websocket handshake lines and its access log.
UVICORN_LOGGERS = ("uvicorn.error", "uvicorn.access")


def install() -> None:
    """Put ``StripQueryStrings`` on uvicorn's loggers and ``ClientFaultsAsWarnings``
    on its error logger, leaving their handlers and levels as uvicorn set them
    (idempotent; ``casino.apps`` calls it in every process, after uvicorn has
    configured its logging)."""
    for name in UVICORN_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, StripQueryStrings) for f in logger.filters):
            logger.addFilter(StripQueryStrings())
    errors = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, ClientFaultsAsWarnings) for f in errors.filters):
        errors.addFilter(ClientFaultsAsWarnings())


#: Names of values a log line never shows (case-insensitive, anywhere in the
#: name): credentials, and the cards a player holds face down. A record's
#: ``extra`` field or a key of a dict in it with such a name is written as
#: ``REDACTED`` (``redacted``); ``password=...`` and the like in a message too.
SECRET_NAMES = (
    "password", "passwd", "token", "ticket", "secret", "authorization", "cookie", "session", "csrf",
    "api_key", "apikey", "signature", "private", "hole", "face_down", "hidden", "card_key", "seal_key", "mac_key",
)  # fmt: skip
REDACTED = "[redacted]"
_SECRET_IN_TEXT = re.compile(
    r"(?i)(\b[\w-]*(?:" + "|".join(re.escape(n) for n in SECRET_NAMES) + r")[\w-]*)"
    r"(\"?\s*[=:]\s*\"?)(?:Token\s+|Bearer\s+)?([^\s&\"',;}]+)"
)


def is_secret_name(name: str) -> bool:
    """Whether a field called ``name`` holds something a log line never shows (``SECRET_NAMES``)."""
    lowered = name.lower()
    return any(part in lowered for part in SECRET_NAMES)


def redacted(value: object, depth: int = 0) -> object:
    """``value`` with every dict entry under a secret name (``is_secret_name``)
    replaced by ``REDACTED``, through nested dicts and lists (8 levels; deeper is cut),
    and every text as ``redacted_text`` leaves it."""
    if depth > 8:
        return REDACTED
    if isinstance(value, dict):
        return {k: REDACTED if is_secret_name(str(k)) else redacted(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redacted(v, depth + 1) for v in value]
    if isinstance(value, str):
        return redacted_text(value)
    return value


def redacted_text(text: str) -> str:
    """``text`` with the value after ``password=``, ``"token": ``, ``ticket=``...
    (any ``SECRET_NAMES`` name followed by ``=`` or ``:``) replaced by ``REDACTED``."""
    return _SECRET_IN_TEXT.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
