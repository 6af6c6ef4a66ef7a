"""Compliance API: audit exports (zip) and reports, for the compliance role."""

from __future__ import annotations

import io
import re
import tempfile
import zipfile
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.errors import DomainError
from compliance.exports import ExportFilters, export_audit, public_key_hex
from compliance.reports import REPORTS, UnknownReport
from games.tables.api import errors
from ledger.services.events import aware_datetime


def has_perm(perm: str) -> type[BasePermission]:
    class HasPerm(BasePermission):
        def has_permission(self, request: Request, view: Any) -> bool:
            return bool(request.user and request.user.is_authenticated and request.user.has_perm(perm))

    HasPerm.__name__ = f"Has_{perm.replace('.', '_')}"
    return HasPerm


class ExportSerializer(serializers.Serializer[Any]):
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    table = serializers.CharField(required=False, allow_null=True, default=None)
    player = serializers.CharField(required=False, allow_null=True, default=None)
    format = serializers.ChoiceField(choices=["jsonl", "csv"], default="jsonl")


class ExportView(APIView):
    """Export a period (``start``, ``end``, optional ``table``/``player``, ``format``)
    as a zip of the export directory: manifest.json and the signed files."""

    permission_classes = [IsAuthenticated, has_perm("compliance.export_audit")]

    @extend_schema(
        request=ExportSerializer,
        responses={
            (200, "application/zip"): OpenApiTypes.BINARY,
            **errors(r409="period_not_sealed (events of the period are not sealed yet; export again shortly)"),
        },
    )
    def post(self, request: Request) -> HttpResponse:
        body = ExportSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "export"
            export_audit(
                start=data["start"], end=data["end"], filters=ExportFilters(table=data["table"], player=data["player"]),
                file_format=data["format"], out=out,
            )  # fmt: skip
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
                for path in sorted(out.iterdir()):
                    archive.write(path, path.name)
        response = HttpResponse(buffer.getvalue(), content_type="application/zip")
        response["Content-Disposition"] = 'attachment; filename="audit-export.zip"'
        return response


class ExportKeyView(APIView):
    """The Ed25519 public key (hex) export manifests are signed with: pin it when verifying."""

    permission_classes = [IsAuthenticated, has_perm("compliance.export_audit")]

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request) -> Response:
        return Response({"algorithm": "Ed25519", "public_key": public_key_hex()})


MAX_REPORT_DAYS = 366


class InvalidReportParameter(DomainError, code="invalid_report_parameter"):
    """A report parameter is missing or out of range (``details.parameter``)."""


def report_arguments(name: str, params: Any) -> dict[str, Any]:
    """Arguments of a report from query parameters (``day``; ``from``/``to``;
    ``days`` from 1 to ``MAX_REPORT_DAYS``; filters: ``player`` a player id,
    ``currency`` three capital letters). Anything missing, not a date or time,
    out of range, running past the calendar's last day, or a filter of another
    shape: ``invalid_report_parameter``."""
    args: dict[str, Any] = {}
    parameter = ""
    try:
        if name == "player-account-summary":
            parameter = "day"
            args["day"] = date.fromisoformat(params["day"])
            args["day"] + timedelta(days=1)  # the day's end exists
            if params.get("player"):
                parameter = "player"
                args["player"] = _matching(PLAYER_ID, params["player"], "a player id")
        elif name == "house-days":
            parameter = "from"
            args["start"] = date.fromisoformat(params["from"])
            parameter = "days"
            raw_days = params.get("days", "30")
            days = int(raw_days) if len(raw_days) <= 4 else 0
            if not 1 <= days <= MAX_REPORT_DAYS:
                raise ValueError(f"days must be 1 to {MAX_REPORT_DAYS}")
            args["days"] = days
            args["start"] + timedelta(days=days + 1)  # the period's end exists
        else:
            parameter = "from"
            args["start"] = aware_datetime(params["from"])
            parameter = "to"
            args["end"] = aware_datetime(params["to"])
        if params.get("currency"):
            parameter = "currency"
            args["currency"] = _matching(CURRENCY_CODE, params["currency"], "a three-letter currency code")
    except (KeyError, ValueError, OverflowError) as exc:
        raise InvalidReportParameter(f"missing or bad parameter {parameter}: {exc}", parameter=parameter) from None
    return args


PLAYER_ID = re.compile(r"[0-9]{1,18}")
CURRENCY_CODE = re.compile(r"[A-Z]{3}")


def _matching(pattern: re.Pattern[str], value: str, what: str) -> str:
    """``value`` if it is wholly ``pattern`` (a NUL or stray character never reaches the database), else ValueError."""
    if not pattern.fullmatch(value):
        raise ValueError(f"not {what}")
    return value


class ReportView(APIView):
    """A regulator report as JSON (default) or CSV (``?output=csv``; ``format`` is DRF's own)."""

    permission_classes = [IsAuthenticated, has_perm("compliance.view_reports")]

    @extend_schema(
        responses={
            200: OpenApiTypes.OBJECT,
            (200, "text/csv"): OpenApiTypes.STR,
            **errors(r400="invalid_report_parameter", r404="unknown_report"),
        }
    )
    def get(self, request: Request, name: str) -> HttpResponse:
        if name not in REPORTS:
            raise UnknownReport(f"no report {name!r}", known=sorted(REPORTS))
        params = request.query_params
        report = REPORTS[name](**report_arguments(name, params))
        if params.get("output") == "csv":
            response = HttpResponse(report.as_csv(), content_type="text/csv")
            response["Content-Disposition"] = f'attachment; filename="{name}.csv"'
            return response
        return Response(report.as_json())


class GameRecallView(APIView):
    """Support's game recall: a round as the player saw it plus every card dealt."""

    permission_classes = [IsAuthenticated, has_perm("games.view_houseround")]

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, game_number: str) -> Response:
        from compliance.recall import recall

        player = request.query_params.get("player")
        if player is not None and not player.isdigit():
            raise serializers.ValidationError({"player": "a player id"})
        return Response(recall(game_number=game_number, player_id=int(player) if player else None))
