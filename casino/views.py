"""Platform endpoints: health and the API root."""

from __future__ import annotations

import hmac
import logging
from typing import Any

from django.conf import settings
from django.db import DatabaseError
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from casino.errors import DomainError
from casino.health import check_readiness

logger = logging.getLogger(__name__)
TOKEN_HEADER = "X-Health-Check-Token"


class HealthCheckRefused(DomainError, code="health_check_refused", http_status=403):
    """The readiness check is for staff (logged in) or a caller sending the health-check token."""


class LivenessView(APIView):
    """Liveness: the process answers HTTP. Public and cheap: it reads nothing
    (no database, broker or channel layer) and names nothing inside."""

    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []

    @extend_schema(responses={200: inline_serializer("Liveness", {"status": serializers.CharField()})})
    def get(self, request: Request) -> Response:
        return Response({"status": "ok"})


class HealthView(APIView):
    """Readiness: database, Celery broker (a round trip through a worker on
    the health queue) and channel layer. For staff (session or API token) or
    a caller sending ``HEALTH_CHECK_TOKEN`` in the ``X-Health-Check-Token``
    header (compared in constant time); anyone else: ``health_check_refused`` (403).

    200 when all answer; 503 with ``failing`` naming the parts that did not.
    One check runs at a time per process: a concurrent caller gets the last
    result (``cached``: true) while it is fresh, else 503 ``health_check_busy``
    at once. Failure details are fixed phrases (the errors are logged).
    """

    permission_classes = [AllowAny]

    def perform_authentication(self, request: Request) -> None:
        """Deferred to ``_allowed``: a token caller must not need the database."""

    @extend_schema(
        parameters=[OpenApiParameter(TOKEN_HEADER, str, OpenApiParameter.HEADER, required=False)],
        responses={
            200: inline_serializer(
                "Health",
                {
                    "status": serializers.ChoiceField(choices=["ok", "error"]),
                    "failing": serializers.ListField(child=serializers.CharField()),
                    "components": serializers.DictField(),
                    "cached": serializers.BooleanField(),
                    "age_seconds": serializers.FloatField(),
                },
            ),
            403: None,
            503: None,
        },
    )
    def get(self, request: Request) -> Response:
        if not _allowed(request):
            raise HealthCheckRefused()
        readiness = check_readiness()
        failing = readiness.failing
        body = {
            "status": "error" if failing else "ok",
            "failing": failing,
            "components": {name: health.as_dict() for name, health in readiness.components.items()},
            "cached": readiness.cached,
            "age_seconds": round(readiness.age(), 3),
        }
        return Response(body, status=503 if failing else 200)


def _allowed(request: Request) -> bool:
    """The health-check token (when one is configured) or a staff user; a
    database that cannot authenticate the caller refuses them."""
    given = request.headers.get(TOKEN_HEADER)
    if given is not None:
        expected = settings.HEALTH_CHECK_TOKEN
        return bool(expected) and hmac.compare_digest(
            given.encode("utf-8", "surrogateescape"), expected.encode("utf-8")
        )
    try:
        return bool(request.user and request.user.is_authenticated and request.user.is_staff)
    except DatabaseError:
        logger.warning("health: could not authenticate the caller", exc_info=True)
        return False


class ApiRootView(APIView):
    """Entry points of the API."""

    permission_classes = [AllowAny]

    @extend_schema(exclude=True)
    def get(self, request: Request) -> Response:
        return Response(
            {
                "health": reverse("health-live", request=request),
                "readiness": reverse("health", request=request),
                "schema": reverse("schema", request=request),
                "docs": reverse("docs", request=request),
                "admin": request.build_absolute_uri("/admin/"),
            }
        )
