"""``GET /metrics``: the Prometheus scrape (docs/live.md, "Metrics"). Interface layer.

For staff (session or API token) or a caller sending ``Authorization: Bearer
<METRICS_TOKEN>`` (compared in constant time; no token configured: staff
only). Anyone else gets JSON: 401 ``metrics_unauthenticated`` without
credentials or with a wrong bearer token, 403 ``metrics_refused`` for a
logged-in player who is not staff.

The answer adds up every process's series from the multi-process directory
(``prometheus_client.multiprocess.MultiProcessCollector``), plus the ledger's
figures read at scrape time (``LedgerCollector``: two indexed reads, once per
scrape, never per command).
"""

from __future__ import annotations

import hmac
import logging
import time
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import Max
from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector
from rest_framework.permissions import AllowAny
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.views import APIView

from casino.api import errors
from casino.errors import DomainError
from casino.metrics import NAMESPACE
from ledger.models import Event, Seal

logger = logging.getLogger(__name__)


class MetricsUnauthenticated(DomainError, code="metrics_unauthenticated", http_status=401):
    """The metrics are for staff or a caller sending ``Authorization: Bearer <METRICS_TOKEN>``."""


class MetricsRefused(DomainError, code="metrics_refused", http_status=403):
    """The metrics are for staff only."""


class LedgerCollector(Collector):
    """The ledger's health, read from the database at each scrape: the seal's
    age and what it does not cover yet, and the log's head position (compare
    ``casino_feed_read_position``)."""

    FAMILIES = {
        "scrape_ok": "1 when the ledger's figures could be read (0: the database did not answer).",
        "head_position": "The global log's last event id.",
        "seal_age_seconds": "Seconds since the last ledger seal was taken (absent before the first seal).",
        "unsealed_events": "Events above the last seal's last event id (not yet covered by a seal).",
    }

    def describe(self) -> Iterator[Metric]:
        """Every family ``collect`` may yield (without values)."""
        for name, documentation in self.FAMILIES.items():
            yield GaugeMetricFamily(f"{NAMESPACE}_ledger_{name}", documentation)

    def collect(self) -> Iterator[Metric]:
        try:
            seal = Seal.objects.order_by("-id").values("created_at", "last_event_id").first()
            head = Event.objects.aggregate(head=Max("id"))["head"] or 0
        except DatabaseError:
            logger.warning("metrics: could not read the ledger's seal and head", exc_info=True)
            yield self._gauge("scrape_ok", 0)
            return
        yield self._gauge("scrape_ok", 1)
        yield self._gauge("head_position", head)
        if seal is None:
            return  # no seal yet: no age (alert on absence)
        yield self._gauge("seal_age_seconds", max(0.0, time.time() - seal["created_at"].timestamp()))
        yield self._gauge("unsealed_events", max(0, head - (seal["last_event_id"] or 0)))

    def _gauge(self, name: str, value: float) -> GaugeMetricFamily:
        return GaugeMetricFamily(f"{NAMESPACE}_ledger_{name}", self.FAMILIES[name], value)


def scrape(accept: str) -> tuple[bytes, str]:
    """Every process's series and the ledger's, encoded for ``accept`` (text 0.0.4 or OpenMetrics)."""
    registry = CollectorRegistry(auto_describe=False)
    MultiProcessCollector(registry, path=settings.METRICS_MULTIPROC_DIR)
    registry.register(LedgerCollector())
    encoder, content_type = choose_encoder(accept)
    return encoder(registry), content_type


class MetricsView(APIView):
    """Prometheus scrape (module docstring)."""

    permission_classes = [AllowAny]
    throttle_classes: list[Any] = []

    def perform_authentication(self, request: Request) -> None:
        """Deferred to ``_check_caller``: a token caller must not need the database."""

    def perform_content_negotiation(self, request: Request, force: bool = False) -> tuple[BaseRenderer, str]:
        """Refusals are JSON whatever ``Accept`` says (Prometheus asks for text)."""
        renderer = JSONRenderer()
        return renderer, renderer.media_type

    @extend_schema(
        description="Prometheus' scrape: every process's series in the text format (OpenMetrics when asked "
        'for), for staff or a caller sending `Authorization: Bearer <METRICS_TOKEN>` (docs/live.md, "Metrics").',
        responses={
            (200, "text/plain"): str,
            **errors(
                r401="metrics_unauthenticated (no credentials, or a wrong bearer token), authentication_failed "
                "(an unknown API token)",
                r403="metrics_refused (a player who is not staff)",
            ),
        },
    )
    def get(self, request: Request) -> HttpResponse:
        _check_caller(request)
        body, content_type = scrape(request.headers.get("Accept", ""))
        return HttpResponse(body, content_type=content_type)


def _check_caller(request: Request) -> None:
    """Let through the metrics token or a staff user (module docstring); raise the refusal otherwise."""
    header = request.headers.get("Authorization", "")
    scheme, _, given = header.partition(" ")
    if scheme.lower() == "bearer":
        expected = settings.METRICS_TOKEN
        if expected and hmac.compare_digest(given.strip().encode("utf-8", "surrogateescape"), expected.encode()):
            return
        raise MetricsUnauthenticated()
    try:
        user = request.user
        authenticated = bool(user and user.is_authenticated)
        staff = authenticated and bool(user.is_staff)
    except DatabaseError:
        logger.warning("metrics: could not authenticate the caller", exc_info=True)
        connection.close_if_unusable_or_obsolete()
        raise MetricsUnauthenticated() from None
    if not authenticated:
        raise MetricsUnauthenticated()
    if not staff:
        raise MetricsRefused()
