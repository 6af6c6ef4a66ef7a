"""Issue #23: tournament results in the player's history (``GET
/api/history/tournaments/``, docs/live.md): the caller's entries only, with
buy-in + fee, state, place, tie, prize and the tournament's times; paged like
the account history."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient

from compliance.roles import COMPLIANCE, OPERATOR
from games.poker.tournament import services as tournament_services
from games.poker.tournament.models import TournamentEntry
from tests.house.live.test_operator_api import client_for
from tests.poker.tables import BUY_IN, FEE, key, make_player, make_tournament
from tests.poker.test_tournament_reports import played_sit_and_go

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

URL = "/api/history/tournaments/"


def as_player(player: int) -> APIClient:
    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(pk=player))
    return client


def results(client: APIClient, **params: Any) -> Any:
    response = client.get(URL, params)
    assert response.status_code == 200, response.content
    return response.json()


def test_a_player_sees_their_own_results_and_nobody_else_s() -> None:
    tournament = played_sit_and_go()
    entries = {
        e.player_id: e for e in TournamentEntry.objects.filter(tournament=tournament).exclude(state="unregistered")
    }
    winner = next(e for e in entries.values() if e.state == "winner")
    assert tournament.started_at is not None
    assert tournament.finished_at is not None
    body = results(as_player(winner.player_id))
    assert body["count"] == TournamentEntry.objects.filter(player_id=winner.player_id).count()  # 2 if they came back
    assert {r["tournament"] for r in body["results"]} == {tournament.pk}
    [row] = [r for r in body["results"] if r["entry_id"] == winner.pk]
    assert row == {
        "entry_id": winner.pk, "tournament": tournament.pk, "name": tournament.name, "kind": "sit_and_go",
        "currency": "EUR", "buy_in": BUY_IN, "fee": FEE, "state": "winner", "tournament_state": "finished",
        "place": 1, "tied": 1, "prize": winner.prize, "entrants": 6,
        "registered_at": winner.registered_at.isoformat(), "unregistered_at": None, "eliminated_at": None,
        "started_at": tournament.started_at.isoformat(), "finished_at": tournament.finished_at.isoformat(),
    }  # fmt: skip
    # The player who unregistered and came back: both entries, the newest first.
    comeback = next(
        p for p in entries if TournamentEntry.objects.filter(tournament=tournament, player_id=p).count() > 1
    )
    body = results(as_player(comeback))
    assert body["count"] == 2
    assert [r["state"] for r in body["results"]][1] == "unregistered"
    assert body["results"][1]["unregistered_at"] is not None
    assert body["results"][0]["place"] == entries[comeback].place
    # A busted player: eliminated, with their place.
    loser = next(e for e in entries.values() if e.state == "eliminated")
    [row] = results(as_player(loser.player_id))["results"]
    assert (row["state"], row["place"], row["tied"], row["prize"]) == (
        "eliminated",
        loser.place,
        loser.tied,
        loser.prize,
    )
    assert loser.eliminated_at is not None
    assert row["eliminated_at"] == loser.eliminated_at.isoformat()
    # Another player (never registered) sees nothing of it; there is no player parameter.
    stranger = make_player()
    assert results(as_player(stranger))["count"] == 0
    assert results(as_player(stranger), player=winner.player_id)["results"] == []
    assert APIClient().get(URL).status_code in (401, 403)


def test_staff_see_only_their_own_entries_as_in_the_account_history() -> None:
    tournament = make_tournament()
    player = make_player()
    tournament_services.register(
        tournament_id=tournament.pk, player_id=player, idempotency_key=key("reg"), now=timezone.now()
    )
    for username, role in (("hist-op", OPERATOR), ("hist-compliance", COMPLIANCE)):
        assert results(client_for(username, role))["results"] == []


def test_paging_and_refusals() -> None:
    player = make_player()
    tournaments = [make_tournament(name=f"T{n}") for n in range(3)]
    for tournament in tournaments:
        tournament_services.register(
            tournament_id=tournament.pk, player_id=player, idempotency_key=key("reg"), now=timezone.now()
        )
    client = as_player(player)
    page = results(client, limit=2)
    assert (page["count"], page["limit"], page["offset"]) == (3, 2, 0)
    assert [r["name"] for r in page["results"]] == ["T2", "T1"]
    assert [r["state"] for r in page["results"]] == ["registered", "registered"]
    assert [r["name"] for r in results(client, limit=2, offset=2)["results"]] == ["T0"]
    refused = client.get(URL, {"limit": "201"})
    assert (refused.status_code, refused.json()["error"]["code"]) == (400, "invalid_query")
