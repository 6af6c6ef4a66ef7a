"""Platform endpoints: health and the API root."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from casino.health import check_health


class HealthView(APIView):
    """Database, Celery broker (round trip through a worker) and channel layer.

    200 when all answer; 503 with ``failing`` naming the parts that did not.
    """

    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []

    @extend_schema(
        responses={
            200: inline_serializer(
                "Health",
                {
                    "status": serializers.ChoiceField(choices=["ok", "error"]),
                    "failing": serializers.ListField(child=serializers.CharField()),
                    "components": serializers.DictField(),
                },
            ),
            503: None,
        }
    )
    def get(self, request: Request) -> Response:
        components = check_health()
        failing = [name for name, health in components.items() if not health.ok]
        body = {
            "status": "error" if failing else "ok",
            "failing": failing,
            "components": {name: health.as_dict() for name, health in components.items()},
        }
        return Response(body, status=503 if failing else 200)


class ApiRootView(APIView):
    """Entry points of the API."""

    permission_classes = [AllowAny]

    @extend_schema(exclude=True)
    def get(self, request: Request) -> Response:
        return Response(
            {
                "health": reverse("health", request=request),
                "schema": reverse("schema", request=request),
                "docs": reverse("docs", request=request),
                "admin": request.build_absolute_uri("/admin/"),
            }
        )
