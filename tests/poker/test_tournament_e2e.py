"""A Sit & Go and a multi-table tournament played end to end over the API
(issue #23, "Done when"): players register, read the tournament's state and
act through REST; the dealer's steps (dealing, timeouts, the tournament's step
between hands, the scheduled start) are the services the Celery tasks call.
Bots choose the actions; every one is a player's REST command."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient

from games.poker.models import PokerTable
from games.poker.tournament import services as tournament_services
from games.poker.tournament.driver import TournamentDriver
from games.poker.tournament.models import Tournament
from ledger.services import balance_of
from tests.db import ledger_sums
from tests.poker.tables import BUY_IN, FEE, make_player, make_tournament, wallet

pytestmark = pytest.mark.django_db

PAID = [{"max_entrants": None, "shares_bp": [5000, 3000, 2000]}]
FAST = {"between_hands_seconds": 0, "turn_seconds": 30, "time_bank_seconds": 0}


class Api:
    """One player's REST client."""

    def __init__(self, player: int) -> None:
        self.player = player
        self.client = APIClient()
        self.client.force_authenticate(get_user_model().objects.get(pk=player))

    def post(self, path: str, data: dict[str, Any] | None = None) -> Any:
        return self.client.post(f"/api/{path}", data or {}, format="json", HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex)

    def get(self, path: str) -> Any:
        return self.client.get(f"/api/{path}")


class ApiDriver(TournamentDriver):
    """The driver, with every bot action sent as the player's REST command."""

    def __init__(self, tournament_id: int, players: dict[int, Api], **options: Any) -> None:
        super().__init__(tournament_id, start=timezone.now(), clock=timezone.now, **options)
        self.players = players
        self.answers: list[int] = []

    def submit(self, table: PokerTable, player: int, action: str, key: str) -> None:
        response = self.players[player].post(f"poker/tables/{table.pk}/act/", {"action": action})
        self.answers.append(response.status_code)
        assert response.status_code == 200, response.json()


def play_over_the_api(tournament: Tournament, players: dict[int, Api]) -> ApiDriver:
    driver = ApiDriver(tournament.pk, players, seed=3)
    report = driver.run(max_rounds=20_000)
    assert report.finished, report
    assert report.actions == len(driver.answers) > 0
    return driver


def assert_finished_over_the_api(tournament: Tournament, players: dict[int, Api]) -> None:
    entrants = len(players)
    pool = entrants * BUY_IN
    someone = next(iter(players.values()))
    state = someone.get(f"poker/tournaments/{tournament.pk}/state/").json()
    assert state["state"] == "finished"
    assert state["players_left"] == 1
    prizes = []
    places = []
    for api in players.values():
        mine = api.get("history/tournaments/").json()
        entry = next(row for row in mine["results"] if row["tournament"] == tournament.pk)
        places.append(entry["place"])
        prizes.append(entry["prize"])
        me = api.get(f"poker/tournaments/{tournament.pk}/state/").json()["me"]
        assert me["place"] == entry["place"]
        assert wallet(api.player) == 100_000 - BUY_IN - FEE + entry["prize"]
    assert sum(prizes) == pool
    assert places.count(1) == 1
    winner_prize = prizes[places.index(1)]
    assert winner_prize == pool * 5000 // 10000  # the winner is never tied: place 1's 50 %
    assert balance_of(account_id=tournament_services.pool_account(tournament_id=tournament.pk, currency="EUR")) == 0
    assert all(total == 0 for total in ledger_sums().values())


def test_a_sit_and_go_over_the_api() -> None:
    tournament = make_tournament(max_players=6, table_seats=6, payouts=PAID, **FAST)
    players = {player: Api(player) for player in (make_player() for _ in range(6))}
    for api in players.values():
        assert api.post(f"poker/tournaments/{tournament.pk}/register/").status_code == 201
    state = next(iter(players.values())).get(f"poker/tournaments/{tournament.pk}/state/").json()
    assert state["state"] == "running"
    assert state["players_left"] == 6
    assert state["average_stack"] == 1_500
    play_over_the_api(tournament, players)
    assert_finished_over_the_api(tournament, players)


def test_a_multi_table_tournament_over_the_api() -> None:
    start = timezone.now() + timedelta(seconds=1)
    tournament = make_tournament(kind="scheduled", name="MTT", start_at=start, max_players=40, table_seats=4,
                                 payouts=PAID, **FAST)  # fmt: skip
    players = {player: Api(player) for player in (make_player() for _ in range(10))}
    for api in players.values():
        assert api.post(f"poker/tournaments/{tournament.pk}/register/").status_code == 201
    tournament_services.sweep_tournaments(now=start)  # beat's tournament sweep at the start time
    state = next(iter(players.values())).get(f"poker/tournaments/{tournament.pk}/state/").json()
    assert state["state"] == "running"
    assert len(state["tables"]) == 3  # 10 players, 4-seat tables
    for api in players.values():  # every player sees their own table and seat
        me = api.get(f"poker/tournaments/{tournament.pk}/state/").json()["me"]
        assert me["table_id"] in {t["id"] for t in state["tables"]}
        assert me["stack"] == 1_500
    play_over_the_api(tournament, players)
    assert_finished_over_the_api(tournament, players)
