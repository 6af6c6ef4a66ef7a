"""Player play API (thin: parse, authorise, call a service, render).

Every refusal is a ``DomainError`` with a stable code rendered by
``casino.api.exception_handler``; a refused command changes nothing (each
service runs in one transaction). A player only ever sees their own bets,
balance and history: every query is keyed by the authenticated user, never by
an id from the request.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import Count
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino import metrics
from casino.api import request_user
from casino.errors import NotFound
from casino.throttling import PlayThrottle
from games.house.api import play, schemas
from games.house.models import HouseTable, PlayerRound, TableSeat
from games.house.realtime import presenters
from games.house.services import chat
from games.house.services import seats as seating
from games.house.store.reads import pool_balances
from games.tables.api import (
    IDEMPOTENCY_HEADER,
    AnyObject,
    body,
    errors,
    query_int,
    query_offset,
)
from ledger.currencies import check_currency
from ledger.services.money import player_balances

_COMMAND_400 = (
    "invalid_json (malformed JSON), too_deep, invalid_text, invalid_field, invalid_amount, idempotency_key_required"
)
_PLAYER_403 = "self_excluded, cooling_off, loss_limit_exceeded, session_time_limit_reached (responsible gaming)"
BET_ERRORS = errors(
    r400=f"{_COMMAND_400}, below_minimum, spot_not_offered, ante_required, invalid_chip (not one of the table's "
    "chips), mandatory_wager_missing (repeat without the table's mandatory side wagers)",
    r403=_PLAYER_403,
    r404="table_not_found",
    r409="not_seated, wrong_phase (no round in play), betting_closed, round_paused, insufficient_balance, "
    "nothing_to_undo, nothing_to_repeat, already_doubled, round_full (per-seat), idempotency_key_reused",
    r429="throttled",
)
DECISION_ERRORS = errors(
    r400=f"{_COMMAND_400}, option_not_offered, decision_after_call",
    r403=_PLAYER_403,
    r404="table_not_found",
    r409="not_seated, not_in_round, no_decision_window, already_decided, decision_not_covered, wrong_phase, "
    "round_paused, idempotency_key_reused",
    r429="throttled",
)


# --- helpers ---------------------------------------------------------------------------------


def table_summaries(tables: list[HouseTable], now: datetime) -> list[dict[str, Any]]:
    """Lobby rows: the presenter's table summary with the light by the server clock
    and the players seated (every table's jackpot meter and seat count from one query each)."""
    warnings = presenters.round_warning_seconds(tables)
    pools = pool_balances(tables)
    seated = dict(
        TableSeat.objects.filter(table__in=tables).values("table").annotate(n=Count("id")).values_list("table", "n")
    )
    return [
        {
            **presenters.table_summary(table, pools),
            **presenters.clock_fields(table, now, warnings.get(table.pk)),
            "players": seated.get(table.pk, 0),
        }
        for table in tables
    ]


# --- serializers (schema only: bodies are parsed by hand for exact error codes) ----------


class ChipBody(serializers.Serializer):
    spot = serializers.CharField()
    amount = serializers.IntegerField(min_value=1)


class DecisionBody(serializers.Serializer):
    option = serializers.CharField()


class ChatBody(serializers.Serializer):
    text = serializers.CharField(max_length=chat.MAX_CHAT_LENGTH)


# --- tables ------------------------------------------------------------------------------


class TableListView(APIView):
    """Every table with its game, limits, phase, deadline and traffic light."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: schemas.TableRow(many=True), **errors()})
    def get(self, request: Request) -> Response:
        now = timezone.now()
        return Response(table_summaries(list(HouseTable.objects.order_by("code")), now))


class TableDetailView(APIView):
    """The table's state as this player may see it (face-down cards redacted)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: schemas.TableState, **errors(r404="table_not_found")})
    def get(self, request: Request, table_id: int) -> Response:
        table = seating.get_table(table_id=table_id)
        return Response(
            presenters.table_view(table_id=table.pk, viewer_id=request_user(request).pk, now=timezone.now())
        )


class HintView(APIView):
    """The perfect-strategy hint for the caller's pending decision (docs/game-math.md,
    "Exact strategies"): ``street``, the ``options`` offered now, ``optimal`` and ``hint``."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: AnyObject, **errors(r404="table_not_found")})
    def get(self, request: Request, table_id: int) -> Response:
        table = seating.get_table(table_id=table_id)
        return Response(presenters.decision_hint(table_id=table.pk, viewer_id=request_user(request).pk,
                                                 now=timezone.now()))  # fmt: skip


class JoinView(APIView):
    """Take a seat (one per table, at most ``CASINO_MAX_TABLES_PER_PLAYER`` tables)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=None,
        responses={
            201: schemas.Seat,
            **errors(
                r404="table_not_found",
                r409="already_seated, too_many_tables, multi_play_not_allowed, table_full, table_closed",
            ),
        },
    )
    def post(self, request: Request, table_id: int) -> Response:
        return play_command(request, "join", table_id)


class LeaveView(APIView):
    """Give up the seat: bets of a round whose betting has not closed are
    returned; after betting closed the wagers stay in play."""

    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={204: None, **errors(r404="table_not_found", r409="not_seated")})
    def post(self, request: Request, table_id: int) -> Response:
        return play_command(request, "leave", table_id)


# --- bets and decisions ----------------------------------------------------------------------


def play_command(request: Request, kind: str, table_id: int) -> Response:
    """``games.house.api.play.run_command`` (shared with the websocket) with the
    ``Idempotency-Key`` header, the JSON body and the server's clock; counted and
    timed (``casino_commands_total``, ``casino_command_duration_seconds``)."""
    with metrics.command_observed(family="house", command=kind, transport="rest"):
        answer = play.run_command(
            kind=kind,
            table_id=table_id,
            player_id=request_user(request).pk,
            raw_key=request.headers.get("Idempotency-Key", ""),
            fields=lambda: body(request),
            now=timezone.now(),
        )
    return Response(answer, status=play.STATUS[kind])


class BetCommandView(APIView):
    """Base of the bet commands (``kind``: a ``games.house.api.play`` command):
    idempotency key, the server's clock; the seat is checked by the service in
    the same query that reads the round (one transaction, the service's own)."""

    permission_classes = [IsAuthenticated]
    throttle_classes = [PlayThrottle]
    kind = ""

    def post(self, request: Request, table_id: int) -> Response:
        return play_command(request, self.kind, table_id)


def _bet_schema(body: Any, result: Any, refusals: dict[int, Any]) -> Any:
    """A bet command's schema: its ``body`` (``None``: none), its 200 ``result``
    and refusals, and the ``Idempotency-Key`` header (on ``BetCommandView.post``)."""
    return extend_schema_view(
        post=extend_schema(request=body, responses={200: result, **refusals}, parameters=[IDEMPOTENCY_HEADER])
    )


@_bet_schema(ChipBody, schemas.BetResult, BET_ERRORS)
class ChipView(BetCommandView):
    """Add a chip to a betting spot (capped at the spot's maximum; the cap is reported)."""

    kind = "bet"


@_bet_schema(None, schemas.BetResult, BET_ERRORS)
class UndoView(BetCommandView):
    """Remove the last chip placed."""

    kind = "undo"


@_bet_schema(None, schemas.BetResult, BET_ERRORS)
class ClearView(BetCommandView):
    """Remove every chip of this round."""

    kind = "clear"


@_bet_schema(None, schemas.BetResult, BET_ERRORS)
class RepeatView(BetCommandView):
    """Place all of the player's bets of their previous round."""

    kind = "repeat"


@_bet_schema(None, schemas.BetResult, BET_ERRORS)
class DoubleView(BetCommandView):
    """Double every current bet, once per round, in placing order while the balance lasts."""

    kind = "double"


@_bet_schema(DecisionBody, schemas.DecisionResult, DECISION_ERRORS)
class DecisionView(BetCommandView):
    """Take one of the options offered right now (refused when not offered or not covered).
    When it was the last decision outstanding the dealer moves on at once."""

    kind = "decision"


# --- money and history ---------------------------------------------------------------------------


class WalletView(APIView):
    """The caller's wallet balance and stakes in play, per currency."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        parameters=[OpenApiParameter("currency", str, OpenApiParameter.QUERY, required=False)],
        responses={200: schemas.Wallet, **errors(r400="unknown_currency")},
    )
    def get(self, request: Request) -> Response:
        currency = request.query_params.get("currency") or settings.CASINO_DEFAULT_CURRENCY
        check_currency(currency)
        # A read creates nothing: a player who never had money reads 0.
        balance, in_play = player_balances(player_id=request_user(request).pk, currency=currency)
        return Response({"currency": currency, "balance": balance, "in_play": in_play})


#: ``?limit=&offset=`` of a paged list (``query_int`` / ``query_offset``).
PAGE_PARAMETERS = [
    OpenApiParameter("limit", int, OpenApiParameter.QUERY, required=False),
    OpenApiParameter("offset", int, OpenApiParameter.QUERY, required=False),
]


class WalletStatementView(APIView):
    """The caller's account statement: every movement of their wallet in one currency
    (``?currency=``, default the casino's), newest first, with the balance after each
    (``?limit=&offset=``)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        parameters=[OpenApiParameter("currency", str, OpenApiParameter.QUERY, required=False), *PAGE_PARAMETERS],
        responses={200: schemas.StatementPage, **errors(r400="unknown_currency, invalid_query")},
    )
    def get(self, request: Request) -> Response:
        currency = request.query_params.get("currency") or settings.CASINO_DEFAULT_CURRENCY
        check_currency(currency)
        limit = query_int(request, "limit", 50, maximum=200)
        offset = query_offset(request)
        player_id = request_user(request).pk
        return Response(presenters.statement_page(player_id=player_id, currency=currency, limit=limit, offset=offset))


class AccountHistoryView(APIView):
    """The caller's rounds, newest first: date, game, game number, bets and payouts
    (``?limit=&offset=``)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(parameters=PAGE_PARAMETERS, responses={200: schemas.HistoryPage, **errors(r400="invalid_query")})
    def get(self, request: Request) -> Response:
        limit = query_int(request, "limit", 50, maximum=200)
        offset = query_offset(request)
        return Response(presenters.account_history_page(player_id=request_user(request).pk, limit=limit, offset=offset))


class GameHistoryView(APIView):
    """Full recall of one game number for the caller: every card, wager, decision,
    result, balance before and after, and the pay tables in force."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: schemas.GameRecall, **errors(r404="game_not_found")})
    def get(self, request: Request, game_number: str) -> Response:
        player_id = request_user(request).pk
        # A player recalls only games they played: others' stakes are not theirs to see.
        if not PlayerRound.objects.filter(game_number=game_number, player_id=player_id).exists():
            raise GameNotFound(game_number=game_number)
        return Response(presenters.game_history(game_number=game_number, player_id=player_id))


class GameNotFound(NotFound, code="game_not_found"):
    """No game with this number in the caller's history."""


class RoundFairnessView(APIView):
    """A round's provably-fair deal (docs/fairness.md), for any player: the
    commitment published when it opened; once it has ended (or was voided) also
    every leaf of the deck (card and salt) and which deck position went to whom."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        responses={
            200: schemas.HouseFairnessAnswer,
            **errors(r404="round_not_found", r409="deal_not_committed (dealt before commitments)"),
        }
    )
    def get(self, request: Request, game_number: str) -> Response:
        return Response(presenters.round_fairness(game_number=game_number))


# --- chat -------------------------------------------------------------------------------------------


class ChatView(APIView):
    """The table's recent chat (only the caller's own lines when they hide chat) and posting a line
    (seated players; rate-limited). Lines also reach the websocket."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: schemas.ChatLine(many=True), **errors(r404="table_not_found")})
    def get(self, request: Request, table_id: int) -> Response:
        seating.get_table(table_id=table_id)
        return Response(chat.recent_chat(table_id=table_id, viewer_id=request_user(request).pk))

    @extend_schema(
        request=ChatBody,
        responses={
            201: schemas.ChatLine,
            **errors(
                r400="invalid_json, too_deep, invalid_text, invalid_field, invalid_chat_message",
                r404="table_not_found",
                r409="not_seated",
                r429="chat_rate_limited",
            ),
        },
    )
    def post(self, request: Request, table_id: int) -> Response:
        from asgiref.sync import async_to_sync
        from channels.layers import get_channel_layer

        from games.house.realtime.relay import chat_group

        user = request_user(request)
        line = chat.post_chat(
            table_id=table_id, player_id=user.pk, username=user.get_username(), text=body(request).get("text")
        )
        layer = get_channel_layer()
        if layer is not None:
            async_to_sync(layer.group_send)(chat_group(table_id), {"type": "chat.message", "line": line})
        return Response(line, status=201)
