"""Operator malfunction handling over REST: pause, resume or void a table's round.

Thin: authorise, parse, call ``games.dealer.operator_pause/resume/void`` (the
same use cases as the admin site's actions), render. Only users allowed to
change tables (``games.change_housetable``: the ``operator`` role and
superusers, see ``compliance/roles.py``) may call these; players and the
read-only compliance role get ``permission_denied`` 403. A refusal changes
nothing (each use case is one transaction).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.api import request_user
from casino.errors import Conflict, DomainError
from games import dealer
from games.api.views import result_json
from games.models import HouseTable
from games.seating import TableNotFound

MAX_REASON = 500
OPERATOR_PERMISSION = "games.change_housetable"


class ReasonRequired(DomainError):
    """A pause or void needs a ``reason`` (1 to 500 characters): players are told it and it is recorded."""

    code = "reason_required"


class NoRoundInPlay(Conflict):
    """The table has no round in play to pause, resume or void."""

    code = "no_round_in_play"


class IsOperator(BasePermission):
    """The operator role (or a superuser): allowed to change tables."""

    message = "Only operators may pause, resume or void rounds."

    def has_permission(self, request: Request, view: Any) -> bool:
        return bool(request.user and request.user.has_perm(OPERATOR_PERMISSION))


class ReasonSchema(serializers.Serializer):
    reason = serializers.CharField(max_length=MAX_REASON)


class TickSchema(serializers.Serializer):
    table_id = serializers.IntegerField()
    round_id = serializers.CharField(allow_null=True)
    game_number = serializers.CharField(allow_null=True)
    phase = serializers.CharField()
    phase_seq = serializers.IntegerField()
    deadline = serializers.DateTimeField(allow_null=True)


def _reason(request: Request) -> str:
    data = request.data
    reason = data.get("reason") if isinstance(data, dict) else None
    if not isinstance(reason, str) or not reason.strip() or len(reason) > MAX_REASON:
        raise ReasonRequired(field="reason")
    return reason.strip()


def _table_in_play(table_id: int) -> None:
    row = HouseTable.objects.filter(pk=table_id).values("current_round_id").first()
    if row is None:
        raise TableNotFound(table_id=table_id)
    if not row["current_round_id"]:
        raise NoRoundInPlay(table_id=table_id)


class OperatorRoundView(APIView):
    """Common: authentication, the operator permission, the table check."""

    permission_classes = [IsAuthenticated, IsOperator]

    def actor(self, request: Request) -> str:
        return f"operator:{request_user(request).pk}"

    def run(self, table_id: int, command: Any) -> Response:
        _table_in_play(table_id)
        with transaction.atomic():
            tick = command()
        return Response(result_json(tick))


class PauseRoundView(OperatorRoundView):
    """Pause the table's round (malfunction): the clock stops, players see
    ``house_round.paused`` with the reason; resume or void follows."""

    @extend_schema(request=ReasonSchema, responses={200: TickSchema}, operation_id="operator_round_pause")
    def post(self, request: Request, table_id: int) -> Response:
        reason = _reason(request)
        actor = self.actor(request)
        return self.run(table_id, lambda: dealer.operator_pause(table_id=table_id, actor=actor, reason=reason))


class ResumeRoundView(OperatorRoundView):
    """Resume a paused round with the time it had left on its deadline."""

    @extend_schema(request=None, responses={200: TickSchema}, operation_id="operator_round_resume")
    def post(self, request: Request, table_id: int) -> Response:
        actor = self.actor(request)
        return self.run(table_id, lambda: dealer.operator_resume(table_id=table_id, actor=actor))


class VoidRoundView(OperatorRoundView):
    """Void the table's round: every wager returned, nothing paid, the reason
    recorded and sent to the players; the next round follows."""

    @extend_schema(request=ReasonSchema, responses={200: TickSchema}, operation_id="operator_round_void")
    def post(self, request: Request, table_id: int) -> Response:
        reason = _reason(request)
        actor = self.actor(request)
        return self.run(table_id, lambda: dealer.operator_void(table_id=table_id, actor=actor, reason=reason))


urlpatterns: list[Any] = [
    path("tables/<int:table_id>/round/pause/", PauseRoundView.as_view(), name="operator-round-pause"),
    path("tables/<int:table_id>/round/resume/", ResumeRoundView.as_view(), name="operator-round-resume"),
    path("tables/<int:table_id>/round/void/", VoidRoundView.as_view(), name="operator-round-void"),
]
