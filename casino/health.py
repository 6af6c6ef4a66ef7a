"""Health of the parts the game needs: database, Celery broker + worker, channel layer.

Two checks (docs/live.md, "Health"):

- *liveness* (``GET /api/health/live``, public): the process answers. It
  touches nothing and says nothing about the internals.
- *readiness* (``GET /api/health/``, staff or ``HEALTH_CHECK_TOKEN``): each
  component's ``ComponentHealth``, from ``check_readiness``. The broker check
  is a real round trip: a ``casino.ping`` task is published on its own queue
  (``HEALTH_CHECK_QUEUE``, never the dealer's) and must come back from a
  worker within ``HEALTH_CHECK_TIMEOUT``.

At most one readiness check runs at a time in a process (a non-blocking lock):
a caller that finds one running gets the last result if it is fresher than
``HEALTH_CHECK_CACHE_SECONDS``, else ``HealthCheckBusy`` at once, so the check
holds at most one HTTP thread however many callers there are. A failing
component's ``detail`` is a fixed phrase; the error itself (hosts, users,
driver messages) is logged server-side only.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connection, transaction

from casino.celery import app as celery_app
from casino.errors import DomainError
from casino.tasks import ping

logger = logging.getLogger(__name__)


class HealthCheckBusy(DomainError, code="health_check_busy", http_status=503):
    """A readiness check is already running in this process and no recent result is at hand; retry shortly."""


@dataclass(frozen=True)
class ComponentHealth:
    ok: bool
    detail: str
    latency_ms: float
    info: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        body = asdict(self)
        body["status"] = "ok" if self.ok else "error"
        del body["ok"]
        return body


@dataclass(frozen=True)
class Readiness:
    """One readiness check's result: its components and when it finished
    (``time.monotonic``); ``cached`` when it is an earlier check's result."""

    components: dict[str, ComponentHealth]
    finished: float
    cached: bool = False

    @property
    def failing(self) -> list[str]:
        return [name for name, health in self.components.items() if not health.ok]

    def age(self) -> float:
        return max(0.0, time.monotonic() - self.finished)


def check_database(*, timeout: float | None = None) -> ComponentHealth:
    """``SELECT 1`` on the default connection; on PostgreSQL under a
    ``statement_timeout`` of ``timeout`` (default ``HEALTH_CHECK_TIMEOUT``)."""
    limit = settings.HEALTH_CHECK_TIMEOUT if timeout is None else timeout
    started = time.perf_counter()
    try:
        connection.ensure_connection()
        if connection.vendor == "postgresql":
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("SELECT set_config('statement_timeout', %s, true)", [f"{max(1, int(limit * 1000))}ms"])
                cursor.execute("SELECT 1")
                cursor.fetchone()
        else:  # SQLite: no transaction (its IMMEDIATE transactions would take the write lock)
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
                cursor.fetchone()
    except Exception:  # any driver error means the database is down for us
        logger.warning("health: database check failed", exc_info=True)
        return ComponentHealth(False, "database unreachable", _ms(started), {"vendor": connection.vendor})
    return ComponentHealth(True, "SELECT 1 answered", _ms(started), {"vendor": connection.vendor})


def check_broker(*, timeout: float, broker_url: str | None = None, queue: str | None = None) -> ComponentHealth:
    """Publish ``casino.ping`` on the health queue (``HEALTH_CHECK_QUEUE``) and
    wait for a worker to echo it back. The message expires after ``timeout``,
    so a ping nobody took does not linger."""
    url = broker_url or settings.CELERY_BROKER_URL
    started = time.perf_counter()
    nonce = uuid.uuid4().hex
    try:
        with celery_app.connection_for_write(url) as conn:
            conn.ensure_connection(max_retries=1, timeout=max(1, math.ceil(timeout)))
            # celery-types omits apply_async's documented ``connection`` option.
            result = ping.apply_async(  # type: ignore[call-arg]
                (nonce,), connection=conn, retry=False, expires=timeout, queue=queue or settings.HEALTH_CHECK_QUEUE
            )
    except Exception:  # kombu raises several transport-specific errors
        logger.warning("health: broker check failed", exc_info=True)
        return ComponentHealth(False, "broker unreachable", _ms(started))
    try:
        echoed = result.get(timeout=timeout, propagate=True)
    except Exception as exc:
        logger.warning("health: no worker answered the ping within %ss (%s)", timeout, type(exc).__name__)
        return ComponentHealth(False, f"no worker answered within {timeout:g}s", _ms(started))
    finally:
        try:
            result.forget()
        except Exception:
            logger.warning("health: could not forget the ping's result", exc_info=True)
    if echoed != nonce:
        return ComponentHealth(False, "worker answered with the wrong nonce", _ms(started))
    return ComponentHealth(True, "worker answered the ping", _ms(started))


def check_channel_layer(*, timeout: float) -> ComponentHealth:
    """Send a message to a fresh channel and receive it back."""
    started = time.perf_counter()
    layer = get_channel_layer()
    if layer is None:
        return ComponentHealth(False, "no channel layer configured", _ms(started))

    async def round_trip() -> bool:
        channel = await layer.new_channel()
        nonce = uuid.uuid4().hex
        await asyncio.wait_for(layer.send(channel, {"type": "health.ping", "nonce": nonce}), timeout)
        message = await asyncio.wait_for(layer.receive(channel), timeout)
        return bool(message.get("nonce") == nonce)

    try:
        ok = async_to_sync(round_trip)()
    except Exception:
        logger.warning("health: channel layer check failed", exc_info=True)
        return ComponentHealth(False, "channel layer unreachable", _ms(started))
    return ComponentHealth(ok, "message sent and received" if ok else "wrong message received", _ms(started))


def check_health(*, timeout: float | None = None) -> dict[str, ComponentHealth]:
    """Every component's health, checked now (no lock: callers serving HTTP use
    ``check_readiness``); the caller decides the HTTP status."""
    limit = settings.HEALTH_CHECK_TIMEOUT if timeout is None else timeout
    return {
        "database": check_database(timeout=limit),
        "broker": check_broker(timeout=limit),
        "channel_layer": check_channel_layer(timeout=limit),
    }


_running = threading.Lock()
_last: Readiness | None = None


def check_readiness() -> Readiness:
    """The readiness of this process's dependencies, at most one check at a time.

    Whoever takes the (non-blocking) lock runs ``check_health`` and keeps its
    result. A caller that finds a check running gets the last result if it is
    younger than ``HEALTH_CHECK_CACHE_SECONDS`` (``cached``), else
    ``HealthCheckBusy`` (503) at once: it never waits for the running check.
    """
    global _last
    if not _running.acquire(blocking=False):
        last = _last
        if last is not None and last.age() <= settings.HEALTH_CHECK_CACHE_SECONDS:
            return Readiness(last.components, last.finished, cached=True)
        raise HealthCheckBusy()
    try:
        result = Readiness(check_health(), time.monotonic())
        _last = result
        return result
    finally:
        _running.release()


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
