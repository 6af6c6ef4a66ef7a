"""The player's tournament results in their history (issue #23): ``GET
/api/history/tournaments/?limit=&offset=`` (docs/live.md, "History"). Like the
account history, every query is keyed by the authenticated user, never by an id
from the request: a player sees only their own entries. Money amounts are minor
units of the tournament's ``currency``; chips never appear here."""

from __future__ import annotations

from typing import Any

from django.urls import path
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.api import request_user
from games.poker.tournament.models import TournamentEntry
from games.tables.api import AnyObject, errors, query_int, query_offset


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def tournament_results(*, player_id: int, limit: int, offset: int) -> list[dict[str, Any]]:
    """The player's tournament entries, newest registration first: the tournament,
    what the entry paid (buy-in + fee), its state (registered, unregistered:
    refunded, playing, eliminated, winner), place (``tied``: players sharing it),
    prize, and the tournament's state and start/finish times. An unregistered
    entry stays (refunded); a tournament cancelled before its start shows its
    entries unregistered, one cancelled while running by chip count shows the
    prize paid."""
    rows = (
        TournamentEntry.objects.filter(player_id=player_id)
        .select_related("tournament")
        .order_by("-registered_at", "-id")[offset : offset + limit]
    )
    return [
        {
            "entry_id": entry.pk,
            "tournament": entry.tournament_id,
            "name": entry.tournament.name,
            "kind": entry.tournament.kind,
            "currency": entry.tournament.currency,
            "buy_in": entry.buy_in,
            "fee": entry.fee,
            "state": entry.state,
            "tournament_state": entry.tournament.state,
            "place": entry.place,
            "tied": entry.tied,
            "prize": entry.prize,
            "entrants": entry.tournament.entrants,
            "registered_at": _iso(entry.registered_at),
            "unregistered_at": _iso(entry.unregistered_at),
            "eliminated_at": _iso(entry.eliminated_at),
            "started_at": _iso(entry.tournament.started_at),
            "finished_at": _iso(entry.tournament.finished_at),
        }
        for entry in rows
    ]


class TournamentHistoryView(APIView):
    """The caller's tournament results, newest first (``?limit=&offset=``)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        parameters=[
            OpenApiParameter("limit", int, OpenApiParameter.QUERY, required=False, description="0 to 200, default 50"),
            OpenApiParameter("offset", int, OpenApiParameter.QUERY, required=False),
        ],
        responses={200: AnyObject, **errors(r400="invalid_query")},
        operation_id="tournament_history_list",
    )
    def get(self, request: Request) -> Response:
        limit = query_int(request, "limit", 50, maximum=200)
        offset = query_offset(request)
        player_id = request_user(request).pk
        rows = tournament_results(player_id=player_id, limit=limit, offset=offset)
        total = TournamentEntry.objects.filter(player_id=player_id).count()
        return Response({"count": total, "limit": limit, "offset": offset, "results": rows})


urlpatterns: list[Any] = [
    path("history/tournaments/", TournamentHistoryView.as_view(), name="tournament-history"),
]
