"""Logging filters that keep credentials out of log lines (docs/auth.md).

Imported by the logging configuration, before Django's apps are ready: no
model or DRF import here."""

from __future__ import annotations

import logging


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
