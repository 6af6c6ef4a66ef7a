"""Poker table API (thin: parse, authorise, call a service, render), mounted
under ``/api/poker/``. Refusals are ``DomainError`` codes rendered by
``casino.api.exception_handler``; money commands need an ``Idempotency-Key``."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime
from typing import Any, TypeVar

from django.urls import path
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

import casino.converters  # noqa: F401 (registers the <text:...> route converter)
from casino import log_context, metrics
from casino.api import request_user
from casino.throttling import PlayThrottle
from games.poker import event_types as et
from games.poker import services
from games.poker.errors import HandNotFound, InvalidSeat
from games.poker.models import PokerTable
from games.poker.realtime import presenters
from games.poker.tournament import services as tournament_services
from games.tables.api import (
    IDEMPOTENCY_HEADER,
    AnyObject,
    MalformedAmount,
    body,
    errors,
    idempotency_key,
    player_key,
    positive_int,
    query_int,
    query_offset,
    text_field,
)

ViewT = TypeVar("ViewT", bound=Callable[..., Any])
RESPONSIBLE_GAMING = "self_excluded, deposit_limit_exceeded, loss_limit_exceeded, session_time_limit_reached"

log = logging.getLogger(__name__)


class SitBody(serializers.Serializer):
    seat = serializers.IntegerField(min_value=1, max_value=10)
    buy_in = serializers.IntegerField(min_value=1)


class TopUpBody(serializers.Serializer):
    amount = serializers.IntegerField(min_value=1)


class ActBody(serializers.Serializer):
    action = serializers.ChoiceField(choices=["fold", "check", "call", "bet", "raise", "all_in"])
    amount = serializers.IntegerField(
        min_value=1, required=False, help_text="bet and raise: the total bet for the round (raise to)"
    )


class SeatEventSchema(serializers.Serializer):
    """One of the caller's own seat events at a table (docs/events.md, "Poker table")."""

    version = serializers.IntegerField(help_text="The event's version in the table's stream (its order).")
    recorded_at = serializers.DateTimeField()
    type = serializers.ChoiceField(choices=list(et.TABLE_EVENT_TYPES))
    seat = serializers.IntegerField()
    at = serializers.DateTimeField(allow_null=True)
    buy_in = serializers.IntegerField(required=False, help_text="sat_down: chips bought in from the wallet.")
    amount = serializers.IntegerField(
        required=False, help_text="topped_up: chips added; stood_up: chips returned to the wallet."
    )
    reason = serializers.CharField(
        required=False,
        allow_null=True,
        help_text="sat_out: player, timeout, no_chips, disconnected, responsible_gaming; "
        "stood_up: left, reservation_expired.",
    )
    code = serializers.CharField(
        required=False, allow_null=True, help_text="sat_out for responsible_gaming: the refusal's code; else null."
    )
    reserved_until = serializers.DateTimeField(
        required=False, allow_null=True, help_text="sat_out: the seat is freed after this."
    )
    rejoined = serializers.BooleanField(
        required=False, help_text="sat_in: true when back after a disconnection (seed 001)."
    )


class SeatHistoryPage(serializers.Serializer):
    count = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()
    results = SeatEventSchema(many=True)


def keyed_command(
    request: type[serializers.Serializer] | None, *, status: int = 200, **refusals: str
) -> Callable[[ViewT], ViewT]:
    """The OpenAPI schema of a command that takes an ``Idempotency-Key``: its
    ``request`` body (``None``: none), any object answered with ``status``, and
    its refusals by status (``errors``: ``r403=``, ``r404=``, ``r409=``)."""
    return extend_schema(
        request=request, parameters=[IDEMPOTENCY_HEADER], responses={status: AnyObject, **errors(**refusals)}
    )


class PokerView(APIView):
    permission_classes = [IsAuthenticated]
    throttle_classes = [PlayThrottle]


class PokerTableListView(PokerView):
    """Every poker table: stakes, buy-in range, timers, seats taken, phase."""

    @extend_schema(responses={200: AnyObject(many=True)})
    def get(self, request: Request) -> Response:
        return Response([presenters.table_summary(t) for t in PokerTable.objects.order_by("code")])


class PokerTableView(PokerView):
    """The table, its seats and the current hand as this player may see them
    (others' hole cards hidden until shown at showdown; ``legal`` when it is your turn)."""

    @extend_schema(responses={200: AnyObject})
    def get(self, request: Request, table_id: int) -> Response:
        services.get_table(table_id=table_id)
        return Response(presenters.table_view(table_id=table_id, viewer_id=request_user(request).pk))


class SitView(PokerView):
    """Sit down in a free seat with a buy-in from the wallet (dealt in from the next hand)."""

    @keyed_command(
        SitBody,
        status=201,
        r403=RESPONSIBLE_GAMING,
        r409="poker_table_closed, poker_seat_taken, poker_already_seated, insufficient_funds, "
        "idempotency_key_reused, poker_currency_in_use",
    )
    @metrics.rest_command("poker", "sit")
    def post(self, request: Request, table_id: int) -> Response:
        data = body(request)
        seat = data.get("seat")
        if isinstance(seat, bool) or not isinstance(seat, int):
            raise InvalidSeat(seat=str(seat))
        result = services.sit_down(
            table_id=table_id, player_id=request_user(request).pk, seat_number=seat,
            buy_in=positive_int(data.get("buy_in")), idempotency_key=idempotency_key(request), now=timezone.now(),
        )  # fmt: skip
        return Response(asdict(result), status=201)


class TopUpView(PokerView):
    """Add money to the table between hands (up to the maximum buy-in)."""

    @keyed_command(
        TopUpBody,
        r403=RESPONSIBLE_GAMING,
        r409="poker_not_seated, poker_in_hand, insufficient_funds, idempotency_key_reused",
    )
    @metrics.rest_command("poker", "top_up")
    def post(self, request: Request, table_id: int) -> Response:
        result = services.top_up(
            table_id=table_id, player_id=request_user(request).pk, amount=positive_int(body(request).get("amount")),
            idempotency_key=idempotency_key(request), now=timezone.now(),
        )  # fmt: skip
        return Response(asdict(result))


class LeaveView(PokerView):
    """Stand up: every chip back to the wallet (not while still in the hand being played)."""

    @keyed_command(None, r409="poker_not_seated, poker_in_hand, idempotency_key_reused")
    @metrics.rest_command("poker", "leave")
    def post(self, request: Request, table_id: int) -> Response:
        result = services.stand_up(
            table_id=table_id, player_id=request_user(request).pk, idempotency_key=idempotency_key(request),
            now=timezone.now(),
        )  # fmt: skip
        return Response(asdict(result))


class SitOutView(PokerView):
    """Sit out from the next hand; the seat is reserved for the table's reservation time."""

    @extend_schema(request=None, responses={200: AnyObject, **errors(r409="poker_not_seated")})
    @metrics.rest_command("poker", "sit_out")
    def post(self, request: Request, table_id: int) -> Response:
        result = services.sit_out(table_id=table_id, player_id=request_user(request).pk, now=timezone.now())
        return Response(asdict(result))


class SitInView(PokerView):
    """Be dealt in again from the next hand."""

    @extend_schema(request=None, responses={200: AnyObject, **errors(r409="poker_not_seated, poker_no_chips")})
    @metrics.rest_command("poker", "sit_in")
    def post(self, request: Request, table_id: int) -> Response:
        result = services.sit_in(table_id=table_id, player_id=request_user(request).pk, now=timezone.now())
        return Response(asdict(result))


def act_command(
    *, table_id: int, player_id: int, raw_key: object, fields: Callable[[], dict[str, Any]], now: datetime
) -> dict[str, Any]:
    """The act command, for REST (``ActView``: the body, the ``Idempotency-Key``
    header) and the websocket (``act`` frame, its ``id``): ``action``, then
    ``amount`` (absent or a positive whole number), then the key
    (``games.tables.api.player_key``), then the service; the REST answer body."""
    data = fields()
    action = text_field(data, "action")
    amount: Any = data.get("amount")
    if amount is not None and (isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0):
        raise MalformedAmount(amount=str(amount))
    result = services.act(
        table_id=table_id, player_id=player_id, action=action, amount=amount,
        idempotency_key=player_key(player_id, raw_key), now=now,
    )  # fmt: skip
    log_context.bind(table=table_id, hand_id=result.hand_id)
    log.info("poker action accepted", extra={"action": result.action, "amount": result.amount})
    return asdict(result)


class ActView(PokerView):
    """Fold, check, call, bet, raise (``amount`` = total bet for the round) or all_in."""

    @keyed_command(
        ActBody,
        r409="poker_not_seated, poker_no_hand, poker_not_in_hand, poker_hand_paused, poker_hand_voided, "
        "poker_hand_complete, poker_not_your_turn, poker_player_folded, poker_player_all_in, "
        "tournament_player_eliminated, idempotency_key_reused",
    )
    @metrics.rest_command("poker", "act")
    def post(self, request: Request, table_id: int) -> Response:
        return Response(
            act_command(
                table_id=table_id, player_id=request_user(request).pk,
                raw_key=request.headers.get("Idempotency-Key", ""), fields=lambda: body(request), now=timezone.now(),
            )
        )  # fmt: skip


class HandListView(PokerView):
    """The caller's hands, newest first (``?limit=&offset=``)."""

    @extend_schema(
        parameters=[
            OpenApiParameter("limit", int, OpenApiParameter.QUERY, required=False),
            OpenApiParameter("offset", int, OpenApiParameter.QUERY, required=False),
        ],
        responses={200: AnyObject},
        operation_id="poker_hands_list",
    )
    def get(self, request: Request) -> Response:
        limit = query_int(request, "limit", 50, maximum=200)
        offset = query_offset(request)
        return Response(presenters.hand_list_page(player_id=request_user(request).pk, limit=limit, offset=offset))


class SeatHistoryView(PokerView):
    """The caller's own seat history at the table, oldest first (``?limit=&offset=``):
    sat down, topped up, sat out (with why), sat in (rejoined), stood up (chips
    returned, why). Only the caller's events: nobody reads another player's."""

    @extend_schema(
        parameters=[
            OpenApiParameter("limit", int, OpenApiParameter.QUERY, required=False, description="0 to 200, default 50"),
            OpenApiParameter("offset", int, OpenApiParameter.QUERY, required=False),
        ],
        responses={200: SeatHistoryPage, **errors(r400="invalid_query", r404="poker_table_not_found")},
    )
    def get(self, request: Request, table_id: int) -> Response:
        services.get_table(table_id=table_id)
        limit = query_int(request, "limit", 50, maximum=200)
        offset = query_offset(request)
        return Response(
            presenters.seat_history(table_id=table_id, player_id=request_user(request).pk, limit=limit, offset=offset)
        )


def _check_played(request: Request, hand_id: str) -> int:
    player_id = int(request_user(request).pk)
    # A player recalls only hands they were dealt into or sat out of (presenters.may_recall_hand).
    if not presenters.may_recall_hand(hand_id=hand_id, viewer_id=player_id):
        raise HandNotFound(hand_id=hand_id)
    return player_id


class HandView(PokerView):
    """One hand's full history for one of its players (others' hole cards only if shown), or for a
    player whose seat sat out at its deal; ``at_the_deal``: the seats dealt in and those sitting
    out (the reason for the caller's own seat only)."""

    @extend_schema(responses={200: AnyObject})
    def get(self, request: Request, hand_id: str) -> Response:
        player_id = _check_played(request, hand_id)
        return Response(presenters.hand_history(hand_id=hand_id, viewer_id=player_id))


class HandReplayView(PokerView):
    """The "Replay" button: the hand's state after each event, step by step; ``at_the_deal`` as
    in the hand's history (why a seated player was not in it: their own reason only)."""

    @extend_schema(responses={200: AnyObject})
    def get(self, request: Request, hand_id: str) -> Response:
        player_id = _check_played(request, hand_id)
        return Response(presenters.hand_replay(hand_id=hand_id, viewer_id=player_id))


class RevealedLeaf(serializers.Serializer):
    """One deck position proven against the commitment (docs/fairness.md)."""

    position = serializers.IntegerField(min_value=0, max_value=51, help_text="The deck position (0 = top).")
    card = serializers.CharField(help_text="The card at that position.")
    salt = serializers.CharField(help_text="That position's own salt (64 hex digits).")
    proof = serializers.ListField(child=serializers.CharField(), help_text="Sibling hashes from the leaf to the root.")
    to = serializers.CharField(help_text="Where it went: board, or seat:<n>.")
    slot = serializers.IntegerField(min_value=0, help_text="Its place on the board or in that hand.")


class PokerFairnessAnswer(serializers.Serializer):
    """A poker hand's fairness answer (docs/fairness.md, "Poker hands"): the
    commitment always; once the hand has ended ``revealed`` (board, shown
    hands) and, for a player dealt into it, ``yours`` (their own hole cards).
    Hands recorded before sealed decks answer in the legacy shape (algorithm
    ``sha256``: salt, deck, deal order)."""

    game_number = serializers.CharField()
    algorithm = serializers.ChoiceField(choices=["merkle-sha256", "sha256"])
    commitment = serializers.CharField(help_text="The Merkle root over the 52 leaves (legacy: SHA-256 of salt:deck).")
    deck_size = serializers.IntegerField(required=False, help_text="52.")
    revealed = RevealedLeaf(many=True, required=False, help_text="What the table saw (once ended).")
    yours = RevealedLeaf(many=True, required=False, help_text="Your own hole cards (once ended; dealt-in players).")


class HandFairnessView(PokerView):
    """A hand's provably-fair deal (docs/fairness.md), for any player: the
    commitment published before the blinds; once the hand is over (or voided)
    the leaves the table saw (board, shown hands) with their proofs, and to a
    player dealt into it their own hole cards' leaves. Folded and mucked hands,
    burn cards and the undealt rest are never revealed (seed 001)."""

    @extend_schema(
        responses={
            200: PokerFairnessAnswer,
            **errors(r404="poker_hand_not_found", r409="deal_not_committed (dealt before commitments)"),
        }
    )
    def get(self, request: Request, hand_id: str) -> Response:
        return Response(presenters.hand_fairness(hand_id=hand_id, viewer_id=int(request_user(request).pk)))


class TournamentListView(PokerView):
    """The tournament lobby: every tournament with its buy-in, fee, registered count and state,
    and the caller's own entry state there (``your_entry``, null without one)."""

    @extend_schema(responses={200: AnyObject(many=True)})
    def get(self, request: Request) -> Response:
        return Response(presenters.tournament_lobby(viewer_id=request_user(request).pk))


class TournamentView(PokerView):
    """One tournament: the lobby summary, levels, payouts and the caller's own registration."""

    @extend_schema(responses={200: AnyObject, **errors(r404="tournament_not_found")})
    def get(self, request: Request, tournament_id: int) -> Response:
        return Response(presenters.tournament_view(tournament_id=tournament_id, viewer_id=request_user(request).pk))


class TournamentStateView(PokerView):
    """The tournament as it stands (docs/poker.md, "Tournaments: state"): the
    level the clock is in with its blinds and the seconds to the next one,
    players left, entrants, the average stack, the prize pool and the payouts
    by place, hand-for-hand, the final table, the open tables (players per
    table) and the caller's own ``me`` (entry state, place and prize once out,
    table, seat and stack while playing). Public information only; the same
    body as the websocket's snapshot (``ws/poker/tournaments/<id>/``)."""

    @extend_schema(responses={200: AnyObject, **errors(r404="tournament_not_found")})
    def get(self, request: Request, tournament_id: int) -> Response:
        return Response(presenters.tournament_state(tournament_id=tournament_id, viewer_id=request_user(request).pk))


class TournamentStandingsView(PokerView):
    """The standings: the players still in by chips, then those out by place with their prize
    (docs/poker.md, "Tournaments: state"); the caller's own row has ``you``."""

    @extend_schema(responses={200: AnyObject(many=True), **errors(r404="tournament_not_found")})
    def get(self, request: Request, tournament_id: int) -> Response:
        return Response(
            presenters.tournament_standings(tournament_id=tournament_id, viewer_id=request_user(request).pk)
        )


class TournamentRegisterView(PokerView):
    """Register: the buy-in from the wallet into the prize pool, the fee to the house."""

    @keyed_command(
        None,
        status=201,
        r403=RESPONSIBLE_GAMING,
        r404="tournament_not_found",
        r409="tournament_already_registered, tournament_registration_closed, tournament_full, "
        "insufficient_funds, idempotency_key_reused",
    )
    def post(self, request: Request, tournament_id: int) -> Response:
        result = tournament_services.register(
            tournament_id=tournament_id, player_id=request_user(request).pk,
            idempotency_key=idempotency_key(request), now=timezone.now(),
        )  # fmt: skip
        return Response(asdict(result), status=201)


class TournamentUnregisterView(PokerView):
    """Unregister before the start: the buy-in and the fee back to the wallet."""

    @keyed_command(
        None,
        r404="tournament_not_found",
        r409="tournament_not_registered, tournament_already_started, idempotency_key_reused",
    )
    def post(self, request: Request, tournament_id: int) -> Response:
        result = tournament_services.unregister(
            tournament_id=tournament_id, player_id=request_user(request).pk,
            idempotency_key=idempotency_key(request), now=timezone.now(),
        )  # fmt: skip
        return Response(asdict(result))


urlpatterns: list[Any] = [
    path("poker/tables/", PokerTableListView.as_view(), name="poker-tables"),
    path("poker/tables/<id:table_id>/", PokerTableView.as_view(), name="poker-table"),
    path("poker/tables/<id:table_id>/sit/", SitView.as_view(), name="poker-sit"),
    path("poker/tables/<id:table_id>/top-up/", TopUpView.as_view(), name="poker-top-up"),
    path("poker/tables/<id:table_id>/leave/", LeaveView.as_view(), name="poker-leave"),
    path("poker/tables/<id:table_id>/sit-out/", SitOutView.as_view(), name="poker-sit-out"),
    path("poker/tables/<id:table_id>/sit-in/", SitInView.as_view(), name="poker-sit-in"),
    path("poker/tables/<id:table_id>/act/", ActView.as_view(), name="poker-act"),
    path("poker/tables/<id:table_id>/seat-history/", SeatHistoryView.as_view(), name="poker-seat-history"),
    path("poker/tournaments/", TournamentListView.as_view(), name="poker-tournaments"),
    path("poker/tournaments/<id:tournament_id>/", TournamentView.as_view(), name="poker-tournament"),
    path("poker/tournaments/<id:tournament_id>/state/", TournamentStateView.as_view(), name="poker-tournament-state"),
    path(
        "poker/tournaments/<id:tournament_id>/standings/",
        TournamentStandingsView.as_view(),
        name="poker-tournament-standings",
    ),
    path(
        "poker/tournaments/<id:tournament_id>/register/",
        TournamentRegisterView.as_view(),
        name="poker-tournament-register",
    ),
    path(
        "poker/tournaments/<id:tournament_id>/unregister/",
        TournamentUnregisterView.as_view(),
        name="poker-tournament-unregister",
    ),
    path("poker/hands/", HandListView.as_view(), name="poker-hands"),
    path("poker/hands/<text:hand_id>/", HandView.as_view(), name="poker-hand"),
    path("poker/hands/<text:hand_id>/replay/", HandReplayView.as_view(), name="poker-hand-replay"),
    path("poker/hands/<text:hand_id>/fairness/", HandFairnessView.as_view(), name="poker-hand-fairness"),
]
