"""Operator malfunction handling over REST: pause, resume or void a house
table's round (a poker table's hand and a tournament: ``games.poker.api.operator_views``).

Thin: authorise, parse, call ``games.house.services.dealer.operator_round_control``
(the same use case as the admin site's controls: the operator's identity is the
actor, ``user:<id>``, and each change is also an ``operator.action`` event),
render. Only users allowed to change the table (``games.change_housetable``: the
``operator`` role and superusers, see ``compliance/roles.py``) may call these;
players and the read-only compliance role get ``permission_denied`` 403. A
refusal changes nothing (each use case is one transaction).
"""

from __future__ import annotations

from typing import Any

from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.api import request_user
from casino.errors import Conflict
from games.house.models import HouseTable
from games.house.services import dealer
from games.house.services.seats import TableNotFound
from games.tables.api import errors, result_json
from games.tables.operator_api import HasModelPermission, ReasonSchema, reason_of

OPERATOR_PERMISSION = "games.change_housetable"
ROUND_CONTROL_ERRORS = errors(
    r404="table_not_found",
    r409="no_round_in_play, round_not_current, round_paused, wrong_phase (the round cannot take this control now)",
)


class NoRoundInPlay(Conflict, code="no_round_in_play"):
    """The table has no round in play to pause, resume or void."""


class IsOperator(HasModelPermission):
    """The operator role (or a superuser): allowed to change tables."""

    message = "Only operators may pause, resume or void rounds."
    permission = OPERATOR_PERMISSION


class TickSchema(serializers.Serializer):
    table_id = serializers.IntegerField()
    round_id = serializers.CharField(allow_null=True)
    game_number = serializers.CharField(allow_null=True)
    phase = serializers.CharField()
    phase_seq = serializers.IntegerField()
    deadline = serializers.DateTimeField(allow_null=True)


def _table_in_play(table_id: int) -> None:
    row = HouseTable.objects.filter(pk=table_id).values("current_round_id").first()
    if row is None:
        raise TableNotFound(table_id=table_id)
    if not row["current_round_id"]:
        raise NoRoundInPlay(table_id=table_id)


class OperatorRoundView(APIView):
    """Common: authentication, the operator permission, the table check."""

    permission_classes = [IsAuthenticated, IsOperator]

    def control(self, request: Request, table_id: int, action: str, reason: str = "") -> Response:
        _table_in_play(table_id)
        tick = dealer.operator_round_control(
            table_id=table_id, operator=request_user(request), action=action, reason=reason
        )
        return Response(result_json(tick))


class PauseRoundView(OperatorRoundView):
    """Pause the table's round (malfunction): the clock stops, players see
    ``house_round.paused`` with the reason; resume or void follows."""

    @extend_schema(
        request=ReasonSchema, responses={200: TickSchema, **ROUND_CONTROL_ERRORS}, operation_id="operator_round_pause"
    )
    def post(self, request: Request, table_id: int) -> Response:
        return self.control(request, table_id, "pause", reason_of(request))


class ResumeRoundView(OperatorRoundView):
    """Resume a paused round with the time it had left on its deadline."""

    @extend_schema(
        request=None, responses={200: TickSchema, **ROUND_CONTROL_ERRORS}, operation_id="operator_round_resume"
    )
    def post(self, request: Request, table_id: int) -> Response:
        return self.control(request, table_id, "resume")


class VoidRoundView(OperatorRoundView):
    """Void the table's round: every wager returned, nothing paid, the reason
    recorded and sent to the players; the next round follows."""

    @extend_schema(
        request=ReasonSchema, responses={200: TickSchema, **ROUND_CONTROL_ERRORS}, operation_id="operator_round_void"
    )
    def post(self, request: Request, table_id: int) -> Response:
        return self.control(request, table_id, "void", reason_of(request))


urlpatterns: list[Any] = [
    path("tables/<id:table_id>/round/pause/", PauseRoundView.as_view(), name="operator-round-pause"),
    path("tables/<id:table_id>/round/resume/", ResumeRoundView.as_view(), name="operator-round-resume"),
    path("tables/<id:table_id>/round/void/", VoidRoundView.as_view(), name="operator-round-void"),
]
