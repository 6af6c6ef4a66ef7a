"""The log format and where lines go (docs/live.md, "Logs").

``logging_config`` builds the ``LOGGING`` setting. Every record gets the
context fields of ``casino.log_context`` (request id, player, table, game
number or hand id, task name and id) and goes through ``casino.log_filters``'
redaction. Two formats: ``json`` (python-json-logger, one object per line:
``timestamp``, ``level``, ``logger``, ``message``, the context fields set,
any ``extra``, ``exc_info``) and ``plain`` (one human-readable line, the
context appended as ``key=value``).

Without a log file every record at ``LOG_LEVEL`` goes to standard error in
``LOG_FORMAT``. With one (``CASINO_LOG_FILE``, which ``manage.py serve`` sets
for each of its processes) every record goes to that file as JSON lines and
the terminal gets only ``CASINO_LOG_CONSOLE_LEVEL`` and above (``WARNING``):
routine lines stay out of sight, problems do not. ``CASINO_BOTS_LOG_FILE``
takes the demo bots' lines out of the worker's file into their own.

No model or DRF import here: logging is configured before the apps are ready.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from pythonjsonlogger.json import JsonFormatter as _JsonFormatter

from casino import log_context
from casino.log_filters import REDACTED, is_secret_name, redacted, redacted_text

#: A JSON line's own fields, before the context and the ``extra`` ones.
JSON_FIELDS = ("timestamp", "level", "logger", "message")


class JsonFormatter(_JsonFormatter):
    """One JSON object per record: ``timestamp`` (ISO 8601, UTC), ``level``,
    ``logger``, ``message`` (secrets cut: ``log_filters.redacted_text``), the
    context fields set (``log_context.FIELDS``), the record's ``extra`` fields
    (a field with a secret name is ``[redacted]``, in nested dicts too) and
    ``exc_info`` (the traceback) when there is one."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("timestamp", True)
        kwargs.setdefault("rename_fields", {"levelname": "level", "name": "logger"})
        kwargs.setdefault("fmt", "%(levelname)s %(name)s %(message)s")
        super().__init__(**kwargs)

    def add_fields(self, log_data: dict[str, Any], record: logging.LogRecord, message_dict: dict[str, Any]) -> None:
        super().add_fields(log_data, record, message_dict)
        log_data.pop("color_message", None)  # uvicorn's copy of the message with terminal colours
        for key in list(log_data):
            if key in JSON_FIELDS or key in log_context.FIELDS:
                continue
            log_data[key] = REDACTED if is_secret_name(key) else redacted(log_data[key])
        if isinstance(log_data.get("message"), str):
            log_data["message"] = redacted_text(log_data["message"])
        # The fixed fields first, then the context, then the rest, as a reader scans a line.
        first = [key for key in (*JSON_FIELDS, *log_context.FIELDS) if key in log_data]
        ordered = {key: log_data.pop(key) for key in first}
        ordered.update(log_data)
        log_data.clear()
        log_data.update(ordered)

    def formatException(self, ei: Any) -> str:
        text = super().formatException(ei)
        return redacted_text(text if isinstance(text, str) else "\n".join(text))


class PlainFormatter(logging.Formatter):
    """``time level logger message`` and the context fields set, as
    ``key=value``; secrets cut as in the JSON lines."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = redacted_text(super().format(record))
        context = [f"{name}={getattr(record, name)}" for name in log_context.FIELDS if hasattr(record, name)]
        if not context:
            return line
        first, _, rest = line.partition("\n")
        return f"{first} [{' '.join(context)}]" + (f"\n{rest}" if rest else "")


# --- which lines go where ------------------------------------------------------------------------

#: Celery's routine lines: beat's "Sending due task <entry> (<task>)" and the
#: worker's "Task <name>[<id>] received" / "... succeeded in ...: <result>".
_CELERY_ROUTINE_LOGGERS = ("celery.beat", "celery.worker.strategy", "celery.app.trace")
_COUNT_ABOVE_ZERO = re.compile(r"[:=]\s*[1-9]")


def _task_name_of(record: logging.LogRecord) -> str | None:
    """The Celery task a routine line is about (its ``args``), if any."""
    args = record.args
    if isinstance(args, dict):
        name = args.get("name")
        return name if isinstance(name, str) else None
    if isinstance(args, tuple) and len(args) == 2 and all(isinstance(a, str) for a in args):
        return str(args[1])  # beat: (entry name, task name)
    return getattr(record, "task", None)


class QuietRoutineTasks(logging.Filter):
    """Drops Celery's INFO lines about ``tasks`` (the sweeps beat sends every
    second, the demo bots' every two) when they say nothing: beat sending one,
    the worker receiving one, and its success when the result counts nothing
    done (no count above zero). A sweep that advanced, voided or started
    something is still logged; at ``LOG_LEVEL=DEBUG`` everything is."""

    def __init__(self, tasks: list[str] | tuple[str, ...] = (), keep_all: bool = False) -> None:
        super().__init__()
        self.tasks = frozenset(tasks)
        self.keep_all = keep_all

    def filter(self, record: logging.LogRecord) -> bool:
        if self.keep_all or record.levelno != logging.INFO or not record.name.startswith(_CELERY_ROUTINE_LOGGERS):
            return True
        if _task_name_of(record) not in self.tasks:
            return True
        if record.name == "celery.app.trace":
            result = record.args.get("return_value") if isinstance(record.args, dict) else None
            return bool(_COUNT_ABOVE_ZERO.search(str(result)))
        return False


class OnlyTasks(logging.Filter):
    """Passes the records about ``tasks`` (``want=True``; Celery's lines about
    them and every line logged while one runs, or by ``loggers``), or all others
    (``want=False``): the demo bots' lines go to their own file."""

    def __init__(self, tasks: list[str] | tuple[str, ...] = (), loggers: list[str] | tuple[str, ...] = (),
                 want: bool = True) -> None:  # fmt: skip
        super().__init__()
        self.tasks = frozenset(tasks)
        self.loggers = tuple(loggers)
        self.want = want

    def filter(self, record: logging.LogRecord) -> bool:
        about = (
            getattr(record, "task", None) in self.tasks
            or _task_name_of(record) in self.tasks
            or (bool(self.loggers) and record.name.startswith(self.loggers))
        )
        return about == self.want


#: Warnings that are not for the terminal of the embedded default: Celery's
#: "running the worker with superuser privileges" (``celery.platforms.check_privileges``)
#: warns of a broker anyone on the network may write pickles to, run as root; the
#: embedded default's broker is a folder under var/ and accepts JSON only (pickle would
#: make Celery refuse to start as root). The warning stays in the worker's log file.
LOCAL_BROKER_WARNINGS = ("running the worker with superuser privileges",)


class NotForTerminal(logging.Filter):
    """On the terminal's handler when there is a log file: drops Django's line for
    each answer 4xx (``django.request`` at WARNING: a client's refused request is
    not a problem of the system; it stays in the file) and, with the local
    filesystem broker (``local_broker``), ``LOCAL_BROKER_WARNINGS``."""

    def __init__(self, local_broker: bool = False) -> None:
        super().__init__()
        self.local_broker = local_broker

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "django.request" and getattr(record, "status_code", 500) < 500:
            return False
        return not (self.local_broker and any(text in record.getMessage() for text in LOCAL_BROKER_WARNINGS))


# --- the LOGGING setting -------------------------------------------------------------------------


def logging_config(
    *, level: str, console_format: str, log_file: str = "", console_level: str = "", bots_log_file: str = "",
    routine_tasks: list[str] | tuple[str, ...] = (), bot_tasks: list[str] | tuple[str, ...] = (),
    bot_loggers: list[str] | tuple[str, ...] = (), local_broker: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """The ``LOGGING`` dict (module docstring): ``level`` for every logger,
    ``console_format`` (``json`` or ``plain``) on standard error, at
    ``console_level`` (default: ``level``, or ``WARNING`` with a ``log_file``).
    ``bots_log_file``: the records of ``bot_tasks`` and ``bot_loggers`` there,
    not in ``log_file``. ``routine_tasks``: ``QuietRoutineTasks``' tasks.
    With a ``log_file`` the terminal skips what ``NotForTerminal`` drops (``local_broker``:
    ``LOCAL_BROKER_WARNINGS`` too)."""
    if console_format not in {"json", "plain"}:
        raise ValueError(f"LOG_FORMAT must be json or plain, not {console_format!r}")
    common = ["context", "routine"]
    handlers: dict[str, dict[str, Any]] = {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": console_format,
            "level": console_level or ("WARNING" if log_file else level),
            "filters": [*common, *(["not_for_terminal"] if log_file else [])],
        }
    }
    files = {"file": (log_file, ["not_bots"] if bots_log_file else []), "bots": (bots_log_file, ["bots"])}
    for name, (filename, only) in files.items():
        if filename:  # JSON lines, appended (a log rotator may move the file: WatchedFileHandler reopens it)
            handlers[name] = {"class": "logging.handlers.WatchedFileHandler", "filename": filename,
                              "formatter": "json", "filters": [*common, *only]}  # fmt: skip
    everywhere = list(handlers)
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": JsonFormatter}, "plain": {"()": PlainFormatter}},
        "filters": {
            "context": {"()": log_context.ContextFilter},
            "routine": {"()": QuietRoutineTasks, "tasks": list(routine_tasks), "keep_all": level.upper() == "DEBUG"},
            "bots": {"()": OnlyTasks, "tasks": list(bot_tasks), "loggers": list(bot_loggers), "want": True},
            "not_bots": {"()": OnlyTasks, "tasks": list(bot_tasks), "loggers": list(bot_loggers), "want": False},
            "not_for_terminal": {"()": NotForTerminal, "local_broker": local_broker},
        },
        "handlers": handlers,
        "root": {"handlers": everywhere, "level": level},
        "loggers": {
            "django.db.backends": {"level": "INFO"},
            # uvicorn's own lines ("Started server process", websocket handshakes, its errors) in
            # the same format and places, at the level uvicorn's --log-level gave the logger. Not
            # "uvicorn" itself: configuring it would reset its children, and its access log
            # ("uvicorn.access") stays as --no-access-log left it.
            "uvicorn.error": {"handlers": everywhere, "propagate": False},
        },
    }
