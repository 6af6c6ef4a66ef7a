"""The Celery application: the dealer worker and beat run tasks from here.

Logging: the worker and beat log as every other process does (Django's
``LOGGING``, ``casino.logs``), not with Celery's own handlers; a task published
while a request id is in the log context carries it in the message header
``casino.log_context.TASK_HEADER``, and the worker puts it back in the context
around the task, with the task's name and id (docs/live.md, "Logs")."""

from __future__ import annotations

import logging
import logging.config
import os
from typing import Any

from celery import Celery, signals

from casino import log_context

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")

app = Celery("casino")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def _configure_logging(**kwargs: Any) -> None:
    """Django's ``LOGGING`` in place of Celery's handlers (a receiver of
    ``setup_logging`` tells Celery to leave logging alone), and Python's
    warnings as log records: ``celeryd_init`` comes just before Celery's
    privilege check, whose warning then goes to the worker's log
    (``casino.logs.LOCAL_BROKER_WARNINGS``)."""
    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)
    logging.captureWarnings(True)


signals.celeryd_init.connect(_configure_logging, weak=False)
signals.setup_logging.connect(_configure_logging, weak=False)


@signals.before_task_publish.connect
def _carry_request_id(headers: dict[str, Any] | None = None, **kwargs: Any) -> None:
    """The request id in hand goes with the task."""
    request_id = log_context.current().get("request_id")
    if request_id is not None and headers is not None:
        headers[log_context.TASK_HEADER] = request_id


@signals.task_prerun.connect
def _task_context(task_id: str | None = None, task: Any = None, **kwargs: Any) -> None:
    """The task's lines name it, and the request that scheduled it."""
    log_context.clear()
    request = getattr(task, "request", None)
    request_id = getattr(request, log_context.TASK_HEADER, None)
    if request_id is None:
        request_id = (getattr(request, "headers", None) or {}).get(log_context.TASK_HEADER)
    log_context.bind(task=getattr(task, "name", None), task_id=task_id, request_id=request_id)


@signals.task_postrun.connect
def _task_context_done(**kwargs: Any) -> None:
    """Nothing of this task's context leaks into the worker's next lines."""
    log_context.clear()
