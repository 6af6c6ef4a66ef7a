"""Health of the parts the game needs: database, Celery broker + worker, channel layer.

Each check returns a ``ComponentHealth``; ``check_health`` runs them all. The
broker check is a real round trip: a ``casino.ping`` task is published and
must come back from a worker within the timeout.
"""

from __future__ import annotations

import asyncio
import math
import time
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connection

from casino.celery import app as celery_app
from casino.tasks import ping


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


def _redact(url: str) -> str:
    """A broker URL without its password, for display."""
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        return f"{scheme}://***@{rest.split('@', 1)[1]}"
    return url


def check_database() -> ComponentHealth:
    started = time.perf_counter()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any driver error means the database is down for us
        return ComponentHealth(False, f"database unreachable: {exc}", _ms(started), {"vendor": connection.vendor})
    return ComponentHealth(True, "SELECT 1 answered", _ms(started), {"vendor": connection.vendor})


def check_broker(*, timeout: float, broker_url: str | None = None) -> ComponentHealth:
    """Publish ``casino.ping`` and wait for a worker to echo it back."""
    url = broker_url or settings.CELERY_BROKER_URL
    started = time.perf_counter()
    info = {"broker": _redact(url)}
    nonce = uuid.uuid4().hex
    try:
        with celery_app.connection_for_write(url) as conn:
            conn.ensure_connection(max_retries=1, timeout=max(1, math.ceil(timeout)))
            # celery-types omits apply_async's documented ``connection`` option.
            result = ping.apply_async((nonce,), connection=conn, retry=False, expires=timeout)  # type: ignore[call-arg]
    except Exception as exc:  # kombu raises several transport-specific errors
        return ComponentHealth(False, f"broker unreachable: {exc}", _ms(started), info)
    try:
        echoed = result.get(timeout=timeout, propagate=True)
    except Exception as exc:
        kind = type(exc).__name__
        return ComponentHealth(False, f"no worker answered within {timeout:g}s ({kind})", _ms(started), info)
    finally:
        result.forget()
    if echoed != nonce:
        return ComponentHealth(False, "worker answered with the wrong nonce", _ms(started), info)
    return ComponentHealth(True, "worker answered the ping", _ms(started), info)


def check_channel_layer(*, timeout: float) -> ComponentHealth:
    """Send a message to a fresh channel and receive it back."""
    started = time.perf_counter()
    layer = get_channel_layer()
    if layer is None:
        return ComponentHealth(False, "no channel layer configured", _ms(started))
    info = {"backend": f"{type(layer).__module__}.{type(layer).__name__}"}

    async def round_trip() -> bool:
        channel = await layer.new_channel()
        nonce = uuid.uuid4().hex
        await layer.send(channel, {"type": "health.ping", "nonce": nonce})
        message = await asyncio.wait_for(layer.receive(channel), timeout)
        return bool(message.get("nonce") == nonce)

    try:
        ok = async_to_sync(round_trip)()
    except Exception as exc:
        return ComponentHealth(False, f"channel layer unreachable: {exc!r}", _ms(started), info)
    return ComponentHealth(ok, "message sent and received" if ok else "wrong message received", _ms(started), info)


def check_health(*, timeout: float | None = None) -> dict[str, ComponentHealth]:
    """Every component's health; the caller decides the HTTP status."""
    limit = settings.HEALTH_CHECK_TIMEOUT if timeout is None else timeout
    return {
        "database": check_database(),
        "broker": check_broker(timeout=limit),
        "channel_layer": check_channel_layer(timeout=limit),
    }


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
