"""Operator malfunction handling over REST for poker: pause, resume or void a
poker table's hand; pause, resume and cancel a tournament
(``games.poker.tournament.services.pause_tournament``, ``resume_tournament``,
``cancel_tournament``: before the start every entry refunded, while running the
tournament's cancel policy).

Thin: authorise, parse, call ``games.poker.services.operator.operator_hand_control``
or the tournament services (the same use cases as the admin site's controls: the
operator's identity is the actor, ``user:<id>``, and each change is also an
``operator.action`` event), render. Only users allowed to change the poker table
(``games.change_pokertable``) or the tournament (``games.change_tournament``): the
``operator`` role and superusers, see ``compliance/roles.py``; players and the
read-only compliance role get ``permission_denied`` 403. A refusal changes nothing
(each use case is one transaction).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.urls import path
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.api import request_user
from games.poker import services as poker
from games.poker.tournament import services as tournament_services
from games.tables.api import errors
from games.tables.operator_api import (
    HasModelPermission,
    OptionalReasonSchema,
    ReasonSchema,
    optional_reason_of,
    reason_of,
)

POKER_OPERATOR_PERMISSION = "games.change_pokertable"
TOURNAMENT_OPERATOR_PERMISSION = "games.change_tournament"
HAND_CONTROL_ERRORS = errors(
    r404="poker_table_not_found",
    r409="poker_no_hand, poker_hand_complete, poker_hand_voided, poker_hand_paused, poker_hand_not_paused",
)
TOURNAMENT_CANCEL_ERRORS = errors(
    r400="reason_required",
    r403="permission_denied (not an operator)",
    r404="tournament_not_found",
    r409="tournament_not_cancellable (finished or already cancelled)",
)
TOURNAMENT_PAUSE_ERRORS = errors(
    r400="reason_required",
    r403="permission_denied (not an operator)",
    r404="tournament_not_found",
    r409="tournament_not_running (only a running tournament is paused)",
)
TOURNAMENT_RESUME_ERRORS = errors(
    r400="reason_required (a reason given that is not text of up to 500 characters)",
    r403="permission_denied (not an operator)",
    r404="tournament_not_found",
    r409="tournament_not_paused (only a paused tournament is resumed)",
)


class IsPokerOperator(HasModelPermission):
    """The operator role (or a superuser): allowed to change poker tables."""

    message = "Only operators may pause, resume or void hands."
    permission = POKER_OPERATOR_PERMISSION


class IsTournamentOperator(HasModelPermission):
    """The operator role (or a superuser): allowed to change tournaments."""

    message = "Only operators may pause, resume or cancel tournaments."
    permission = TOURNAMENT_OPERATOR_PERMISSION


# --- poker tables: the hand in play ------------------------------------------------------------


class HandControlSchema(serializers.Serializer):
    table_id = serializers.IntegerField()
    hand_id = serializers.CharField()
    phase = serializers.CharField(help_text="the table's phase: paused, hand, between")
    phase_seq = serializers.IntegerField()
    deadline = serializers.DateTimeField(allow_null=True)
    status = serializers.CharField(help_text="the hand's status: playing or voided")


class OperatorHandView(APIView):
    """Common: authentication and the poker table's change permission. The
    services lock the table and refuse ``poker_table_not_found``,
    ``poker_no_hand``, ``poker_hand_complete``, ``poker_hand_voided``."""

    permission_classes = [IsAuthenticated, IsPokerOperator]

    def control(self, request: Request, table_id: int, action: str, reason: str = "") -> Response:
        result = poker.operator_hand_control(
            table_id=table_id, operator=request_user(request), action=action, reason=reason
        )
        return Response(asdict(result))


class PauseHandView(OperatorHandView):
    """Pause the poker table's hand (malfunction): the actor's clock stops and
    every action is refused (``poker_hand_paused``); players see
    ``poker_hand.paused`` with the reason. Resume or void follows."""

    @extend_schema(
        request=ReasonSchema,
        responses={200: HandControlSchema, **HAND_CONTROL_ERRORS},
        operation_id="operator_poker_hand_pause",
    )
    def post(self, request: Request, table_id: int) -> Response:
        return self.control(request, table_id, "pause", reason_of(request))


class ResumeHandView(OperatorHandView):
    """Resume a paused hand: the actor's clock restarts with the time it had
    left (``poker_hand_not_paused`` if the hand is not paused)."""

    @extend_schema(
        request=None,
        responses={200: HandControlSchema, **HAND_CONTROL_ERRORS},
        operation_id="operator_poker_hand_resume",
    )
    def post(self, request: Request, table_id: int) -> Response:
        return self.control(request, table_id, "resume")


class VoidHandView(OperatorHandView):
    """Void the poker table's hand (in play or paused): every player gets back
    exactly the chips they put into it, no rake, no pot awarded; the reason is
    recorded and sent to the players; the next hand follows."""

    @extend_schema(
        request=ReasonSchema,
        responses={200: HandControlSchema, **HAND_CONTROL_ERRORS},
        operation_id="operator_poker_hand_void",
    )
    def post(self, request: Request, table_id: int) -> Response:
        return self.control(request, table_id, "void", reason_of(request))


# --- poker tournaments ---------------------------------------------------------------------------


class TournamentCancelSchema(serializers.Serializer):
    tournament_id = serializers.IntegerField()
    state = serializers.CharField(help_text="cancelled")
    refunded = serializers.IntegerField(help_text="entries refunded")
    buy_ins = serializers.IntegerField(help_text="returned from the prize pool (minor units)")
    fees = serializers.IntegerField(help_text="returned from the house's fee account (minor units)")


class TournamentControlSchema(serializers.Serializer):
    tournament_id = serializers.IntegerField()
    state = serializers.CharField(help_text="paused or running")
    tables = serializers.IntegerField(help_text="tables paused (a hand in play or between hands) or resumed")


class PauseTournamentView(APIView):
    """Pause a running tournament (malfunction): the level clock stops, every
    hand in play is paused (actions refused with ``poker_hand_paused``) and no
    table deals until it is resumed; the reason is recorded with the operator
    (``poker_tournament.paused``, ``operator.action`` ``tournament.pause``)."""

    permission_classes = [IsAuthenticated, IsTournamentOperator]

    @extend_schema(
        request=ReasonSchema,
        responses={200: TournamentControlSchema, **TOURNAMENT_PAUSE_ERRORS},
        operation_id="operator_poker_tournament_pause",
    )
    def post(self, request: Request, tournament_id: int) -> Response:
        result = tournament_services.pause_tournament(
            tournament_id=tournament_id, operator=request_user(request), reason=reason_of(request), now=timezone.now()
        )
        return Response(asdict(result))


class ResumeTournamentView(APIView):
    """Resume a paused tournament: the level clock runs on from where it stopped,
    paused hands resume with the time their actor had left, the other tables deal
    after the pause between hands (``poker_tournament.resumed``,
    ``operator.action`` ``tournament.resume``; an optional ``reason`` is recorded)."""

    permission_classes = [IsAuthenticated, IsTournamentOperator]

    @extend_schema(
        request=OptionalReasonSchema,
        responses={200: TournamentControlSchema, **TOURNAMENT_RESUME_ERRORS},
        operation_id="operator_poker_tournament_resume",
    )
    def post(self, request: Request, tournament_id: int) -> Response:
        result = tournament_services.resume_tournament(
            tournament_id=tournament_id,
            operator=request_user(request),
            reason=optional_reason_of(request),
            now=timezone.now(),
        )
        return Response(asdict(result))


class CancelTournamentView(APIView):
    """Cancel a tournament. Not started: every registered player gets their
    buy-in and fee back. Running or paused: by the tournament's ``cancel_policy``
    (``refund``: every buy-in and fee back; ``chip_count``: places already paid
    get their prize, the rest of the pool goes to the players left by chip
    count, fees kept). The prize pool ends at zero, the tournament is
    ``cancelled``; the reason is recorded with the operator
    (``poker_tournament.cancelled``, ``operator.action`` ``tournament.cancel``)."""

    permission_classes = [IsAuthenticated, IsTournamentOperator]

    @extend_schema(
        request=ReasonSchema,
        responses={200: TournamentCancelSchema, **TOURNAMENT_CANCEL_ERRORS},
        operation_id="operator_poker_tournament_cancel",
    )
    def post(self, request: Request, tournament_id: int) -> Response:
        result = tournament_services.cancel_tournament(
            tournament_id=tournament_id, operator=request_user(request), reason=reason_of(request), now=timezone.now()
        )
        return Response(asdict(result))


urlpatterns: list[Any] = [
    path("poker/tables/<id:table_id>/hand/pause/", PauseHandView.as_view(), name="operator-poker-hand-pause"),
    path("poker/tables/<id:table_id>/hand/resume/", ResumeHandView.as_view(), name="operator-poker-hand-resume"),
    path("poker/tables/<id:table_id>/hand/void/", VoidHandView.as_view(), name="operator-poker-hand-void"),
    path(
        "poker/tournaments/<id:tournament_id>/pause/",
        PauseTournamentView.as_view(),
        name="operator-poker-tournament-pause",
    ),
    path(
        "poker/tournaments/<id:tournament_id>/resume/",
        ResumeTournamentView.as_view(),
        name="operator-poker-tournament-resume",
    ),
    path(
        "poker/tournaments/<id:tournament_id>/cancel/",
        CancelTournamentView.as_view(),
        name="operator-poker-tournament-cancel",
    ),
]
