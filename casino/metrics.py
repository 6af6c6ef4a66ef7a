"""The process's Prometheus series (docs/live.md, "Metrics"). Interface-level
instrumentation: each helper is a counter increment or a histogram
observation (a few microseconds: a write to a memory-mapped file), never a
database query, so the hot paths (a chip, a websocket frame) can call them.

Multi-process: every process of the system (the ASGI servers, Celery's
workers and their pool children, beat, ``manage.py`` commands) writes its
values into ``PROMETHEUS_MULTIPROC_DIR`` (``settings.METRICS_MULTIPROC_DIR``,
exported by the settings), and ``GET /metrics`` (``casino.metrics_view``)
adds them up, so one scrape of any ASGI process sees them all. prometheus_client
picks its multi-process storage when it is first imported, from that
variable: this module loads the settings before importing it.

Labels are small, fixed sets (a command's kind, an error code, a family, a
close code from a known list): never a player, table, round or request id.
"""

from __future__ import annotations

import functools
import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar, cast

from django.conf import settings

# The settings export PROMETHEUS_MULTIPROC_DIR; prometheus_client reads it once, on import.
_MULTIPROC_DIR = settings.METRICS_MULTIPROC_DIR

from prometheus_client import Counter, Gauge, Histogram  # noqa: E402 (after the settings: see above)

from casino.errors import DomainError  # noqa: E402

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])

NAMESPACE = "casino"
#: Seconds: from a fast command (a chip in a group commit) to a slow one (a settlement on a busy database).
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
#: Seconds late: a dealer or a queue is healthy under a second and in trouble past the sweeper's grace.
LAG_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
#: Commands per group commit (up to ``CASINO_GROUP_COMMIT_MAX``, 256 by default).
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)

COMMANDS = Counter(
    "commands",
    "Player commands answered, by game family, command, transport (rest, ws) and outcome "
    "(ok, or the refusal's error code; server_error for an unexpected failure).",
    ["family", "command", "transport", "outcome"],
    namespace=NAMESPACE,
)
COMMAND_SECONDS = Histogram(
    "command_duration_seconds",
    "Time to answer a player command (parsing, service, group commit), by family, command and transport.",
    ["family", "command", "transport"],
    namespace=NAMESPACE,
    buckets=LATENCY_BUCKETS,
)
GROUP_COMMIT_BATCH = Histogram(
    "group_commit_batch_size",
    "Commands written together in one group commit of a house table, by interface "
    "(rest: the request threads' leader; ws: the event loop's batcher).",
    ["interface"],
    namespace=NAMESPACE,
    buckets=BATCH_BUCKETS,
)
PHASE_LAG = Histogram(
    "dealer_phase_lag_seconds",
    "How long after its deadline a table's phase was ended by the dealer (its task or the sweeper), "
    "by family and phase.",
    ["family", "phase"],
    namespace=NAMESPACE,
    buckets=LAG_BUCKETS,
)
TASK_QUEUE_LAG = Histogram(
    "task_queue_lag_seconds",
    "From when a Celery task was due (published, or its ETA if later) to when a worker started it, by task.",
    ["task"],
    namespace=NAMESPACE,
    buckets=LAG_BUCKETS,
)
FEED_LAG = Histogram(
    "feed_lag_seconds",
    "Age of the oldest event in each batch the websocket feed reads from the log (recorded to handed out).",
    namespace=NAMESPACE,
    buckets=LAG_BUCKETS,
)
FEED_EVENTS = Counter("feed_events", "Events the websocket feeds read from the global log.", namespace=NAMESPACE)
WS_CONNECTIONS = Gauge(
    "ws_connections",
    "Open websocket connections (accepted, not yet closed), by family, over the live ASGI processes.",
    ["family"],
    namespace=NAMESPACE,
    multiprocess_mode="livesum",
)
WS_CLOSES = Counter(
    "ws_closes",
    "Websocket connections ended, by family and close code (the server's when it closed, else the client's; "
    "codes outside the protocol's list count as 'other').",
    ["family", "code"],
    namespace=NAMESPACE,
)
WS_TOO_SLOW = Counter(
    "ws_too_slow",
    "Connections the feed closed with 4408 (too slow), by reason: outbox_full, send_timeout, snapshot_backlog.",
    ["reason"],
    namespace=NAMESPACE,
)
RG_REFUSALS = Counter(
    "rg_refusals",
    "Bets and deposits refused by a player's responsible-gaming settings, by limit "
    "(self_exclusion, cool_off, session_time, loss_<window>, deposit_<window>).",
    ["limit"],
    namespace=NAMESPACE,
)


# Gauges without labels are made on first use, in the processes that set them: made at import, every
# process (a worker, a shell) would report a 0 that the multi-process modes below would take as a value.


@functools.cache
def _feed_position() -> Gauge:
    return Gauge(
        "feed_read_position",
        "Global log position (event id) the websocket feed has read up to; the lowest of the live ASGI processes.",
        namespace=NAMESPACE,
        multiprocess_mode="livemin",
    )


@functools.cache
def _verify_gauges() -> tuple[Gauge, Gauge, Gauge]:
    return (
        Gauge(
            "ledger_verify_ok",
            "1 when the last verify_ledger run found no problem, 0 when it found some (absent: no run yet).",
            namespace=NAMESPACE,
            multiprocess_mode="mostrecent",
        ),
        Gauge(
            "ledger_verify_problems",
            "Problems the last verify_ledger run found.",
            namespace=NAMESPACE,
            multiprocess_mode="mostrecent",
        ),
        Gauge(
            "ledger_verify_last_run_timestamp_seconds",
            "When the last verify_ledger run finished (Unix time).",
            namespace=NAMESPACE,
            multiprocess_mode="mostrecent",
        ),
    )


#: Close codes counted by their number; any other code a client sends counts as "other".
KNOWN_CLOSE_CODES = frozenset({1000, 1001, 1005, 1006, 1008, 1009, 1011, 1012, 4401, 4404, 4408, 4409, 4410, 4429})
TRANSPORTS = ("rest", "ws")


@contextmanager
def command_observed(*, family: str, command: str, transport: str) -> Iterator[None]:
    """Count and time the player command run inside the block: outcome ``ok``
    when it returns, the refusal's ``code`` when a ``DomainError`` leaves it,
    ``server_error`` for anything else (which is raised on, as is the refusal).
    ``command`` must come from a fixed list (the caller's command kinds)."""
    started = time.perf_counter()
    outcome = "ok"
    try:
        yield
    except DomainError as refusal:
        outcome = refusal.code
        raise
    except BaseException:
        outcome = "server_error"
        raise
    finally:
        COMMANDS.labels(family, command, transport, outcome).inc()
        COMMAND_SECONDS.labels(family, command, transport).observe(time.perf_counter() - started)


def rest_command(family: str, command: str) -> Callable[[F], F]:
    """Decorate a REST view method answering a player command: ``command_observed``
    around it, transport ``rest``."""

    def decorate(method: F) -> F:
        @functools.wraps(method)
        def observed(*args: Any, **kwargs: Any) -> Any:
            with command_observed(family=family, command=command, transport="rest"):
                return method(*args, **kwargs)

        return cast(F, observed)

    return decorate


def group_commit(*, interface: str, size: int) -> None:
    """A group commit wrote ``size`` commands in one batch."""
    GROUP_COMMIT_BATCH.labels(interface).observe(size)


def phase_ended(*, family: str, phase: str, deadline: datetime | None, now: datetime) -> None:
    """The dealer ended ``phase`` at ``now``, its deadline ``deadline`` (nothing
    recorded without one, or when it ended early: everyone had acted)."""
    if deadline is not None and deadline <= now:
        PHASE_LAG.labels(family, phase or "none").observe((now - deadline).total_seconds())


def feed_batch(*, oldest: datetime, count: int, position: int, now: datetime) -> None:
    """The feed read ``count`` events up to ``position``; the oldest was recorded at ``oldest``."""
    FEED_LAG.observe(max(0.0, (now - oldest).total_seconds()))
    FEED_EVENTS.inc(count)
    _feed_position().set(position)


def ws_opened(family: str) -> None:
    WS_CONNECTIONS.labels(family).inc()


def ws_closed(family: str, code: int | None) -> None:
    """A connection ``ws_opened`` counted has ended with ``code`` (None: none known, counted as 1006)."""
    WS_CONNECTIONS.labels(family).dec()
    number = 1006 if code is None else code
    WS_CLOSES.labels(family, str(number) if number in KNOWN_CLOSE_CODES else "other").inc()


def ws_too_slow(reason: str) -> None:
    WS_TOO_SLOW.labels(reason).inc()


def rg_refused(limit: str) -> None:
    """A responsible-gaming limit (a fixed kind, never a player) refused a bet or a deposit."""
    RG_REFUSALS.labels(limit).inc()


def ledger_verified(*, problems: int) -> None:
    """A verify_ledger run finished with ``problems`` problems."""
    ok, count, finished = _verify_gauges()
    ok.set(0 if problems else 1)
    count.set(problems)
    finished.set(time.time())


# --- Celery: how long tasks wait in the queue ----------------------------------------------------

#: The message header carrying when a task was published (Unix time), set by ``_stamp_published``.
PUBLISHED_HEADER = "casino_published_at"


def _stamp_published(headers: dict[str, Any] | None = None, **kwargs: Any) -> None:
    """``before_task_publish``: note when the message left the publisher."""
    if headers is not None:
        headers[PUBLISHED_HEADER] = time.time()


def _observe_queue_lag(task: Any = None, **kwargs: Any) -> None:
    """``task_prerun``: how long the task waited past when it was due (its
    publish time, or its ETA when it has a later one)."""
    request = getattr(task, "request", None)
    published = request.get(PUBLISHED_HEADER) if request is not None else None
    if not isinstance(published, int | float):
        return
    due = float(published)
    eta = request.get("eta") if request is not None else None
    if eta:
        with suppress(TypeError, ValueError):  # an ETA the worker could not read either: the publish time
            due = max(due, (datetime.fromisoformat(eta) if isinstance(eta, str) else eta).timestamp())
    TASK_QUEUE_LAG.labels(getattr(task, "name", "unknown")).observe(max(0.0, time.time() - due))


def _child_exiting(**kwargs: Any) -> None:
    """``worker_process_shutdown``: a pool child's live gauges leave the sums."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(os.getpid())


def connect_celery_signals() -> None:
    """Connect the queue-lag signals (every process: publishers stamp, workers
    observe) and the pool child's exit bookkeeping. Idempotent."""
    from celery.signals import before_task_publish, task_prerun, worker_process_shutdown

    before_task_publish.connect(_stamp_published, weak=False, dispatch_uid="casino.metrics.stamp")
    task_prerun.connect(_observe_queue_lag, weak=False, dispatch_uid="casino.metrics.queue_lag")
    worker_process_shutdown.connect(_child_exiting, weak=False, dispatch_uid="casino.metrics.child_exit")


# --- the multi-process directory's bookkeeping (the supervisors: ``serve``, the tests) ------------


def reset_multiprocess_dir(path: str | None = None) -> None:
    """Empty the multi-process directory (``serve`` at start, the tests for each run):
    the files of an earlier run's processes would otherwise be summed with this run's."""
    directory = Path(path or settings.METRICS_MULTIPROC_DIR)
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.db"):
        stale.unlink(missing_ok=True)


def process_dead(pid: int) -> None:
    """A child process ``pid`` has exited: its live gauges (connections, feed position) leave the sums."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(pid, settings.METRICS_MULTIPROC_DIR)
