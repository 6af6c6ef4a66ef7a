"""Tournament state over REST (docs/poker.md, "Tournaments: state"):
``GET /api/poker/tournaments/<id>/state/`` while registering, running (moved
players, eliminations), paused and finished, asserted from the rules: the level
shown is the one the level clock is in, the average stack is the chips in play
over the players left, the chips on the tables are the chips in play, the
payouts are the payout table's with the current entrants, the caller's own
table, seat and stack are their seat's. And an action by an eliminated player
is refused ``tournament_player_eliminated`` with nothing changed."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient

from games.poker.models import PokerHand, PokerSeat, PokerTable
from games.poker.tournament import services as tournament_services
from games.poker.tournament.driver import TournamentDriver
from games.poker.tournament.models import EntryState, Tournament, TournamentEntry
from games.poker.tournament.services.finish import current_payouts
from ledger.services import balance_of
from tests.db import ledger_sums, rows
from tests.poker.tables import CHANGED_BY_ACT, LEVELS, key, make_player, make_tournament

pytestmark = pytest.mark.django_db

# A tournament act may also move its table, its tournament and its entries.
CHANGED_BY_A_TOURNAMENT_ACT = (*CHANGED_BY_ACT, "games_pokertable", "games_tournament", "games_tournamententry")


def client(player: int) -> APIClient:
    api = APIClient()
    api.force_authenticate(get_user_model().objects.get(pk=player))
    return api


def state_of(tournament: Tournament, player: int) -> dict[str, Any]:
    response = client(player).get(f"/api/poker/tournaments/{tournament.pk}/state/")
    assert response.status_code == 200, response.content
    body: dict[str, Any] = response.json()
    return body


def sit_and_go(players: int = 6, table_seats: int = 3, **changes: Any) -> tuple[Tournament, list[int]]:
    """A Sit & Go filled (and so started) through registration."""
    tournament = make_tournament(max_players=players, table_seats=table_seats, **changes)
    ids = [make_player() for _ in range(players)]
    now = timezone.now()
    for player in ids:
        tournament_services.register(tournament_id=tournament.pk, player_id=player, idempotency_key=key("reg"), now=now)
    tournament.refresh_from_db()
    assert tournament.state == "running"
    return tournament, ids


def drive_until(tournament: Tournament, done: Any, *, rounds: int = 3000, seed: int = 3) -> TournamentDriver:
    driver = TournamentDriver(tournament.pk, start=timezone.now(), seed=seed)
    for _ in range(rounds):
        if done():
            return driver
        driver.run(max_rounds=1)
    raise AssertionError("the condition was never reached")


def eliminated() -> TournamentEntry | None:
    return TournamentEntry.objects.filter(state=EntryState.ELIMINATED).order_by("eliminated_at", "id").first()


def assert_public_rules(body: dict[str, Any], tournament: Tournament) -> None:
    """What every state answer satisfies while the tournament runs."""
    tournament.refresh_from_db()
    playing = TournamentEntry.objects.filter(tournament=tournament, state=EntryState.PLAYING).count()
    assert body["players_left"] == tournament.players_left == playing
    assert body["entrants"] == tournament.entrants
    assert body["chips_in_play"] == tournament.entrants * tournament.starting_chips
    assert body["average_stack"] == body["chips_in_play"] // body["players_left"]
    # The chips in play are the chips the tournament's bank issued (on the seats and in the pots).
    assert -balance_of(account_id=tournament_services.chip_bank(tournament_id=tournament.pk)) == body["chips_in_play"]
    seats = PokerSeat.objects.filter(table__tournament=tournament, table__is_open=True)
    assert sum(seat.stack for seat in seats) <= body["chips_in_play"]
    # The tables: the open ones, with their seated players.
    open_tables = PokerTable.objects.filter(tournament=tournament, is_open=True).order_by("table_number")
    assert body["tables"] == [{"id": t.pk, "number": t.table_number, "players": t.seats.count()} for t in open_tables]
    assert sum(t["players"] for t in body["tables"]) == body["players_left"]
    # The payouts: the payout table with the entrants and the collected buy-ins (the service's own computation).
    payouts = current_payouts(tournament)
    assert [row["amount"] for row in body["payouts"]] == list(payouts.by_place)
    assert [row["place"] for row in body["payouts"]] == list(range(1, payouts.paid_places + 1))
    assert body["prize_pool"]["amount"] == payouts.pool.amount == sum(payouts.by_place)
    assert body["hand_for_hand"] == tournament.hand_for_hand
    assert body["final_table_id"] == tournament.final_table_id
    # Only public information: no cards of anyone.
    assert "cards" not in json.dumps(body)


def test_registering_shows_the_registered_players_and_the_pool_so_far() -> None:
    tournament = make_tournament(max_players=6)
    players = [make_player() for _ in range(2)]
    for player in players:
        tournament_services.register(tournament_id=tournament.pk, player_id=player, idempotency_key=key("reg"),
                          now=timezone.now())  # fmt: skip
    outsider = make_player()
    body = state_of(tournament, outsider)
    assert (body["state"], body["level"], body["next_level_in"]) == ("registering", None, None)
    assert (body["entrants"], body["players_left"], body["chips_in_play"]) == (2, 2, 3000)
    assert body["average_stack"] == tournament.starting_chips
    # Two entrants, 65/35 of 2 x 1000 collected.
    assert body["prize_pool"] == {"amount": 2000, "collected": 2000, "guarantee": 0, "overlay": 0}
    assert body["payouts"] == [{"place": 1, "amount": 1300}, {"place": 2, "amount": 700}]
    assert body["tables"] == []
    assert body["me"] is None
    own = state_of(tournament, players[0])["me"]
    assert own is not None
    assert (own["state"], own["table_id"], own["place"]) == ("registered", None, None)


def test_running_state_from_the_rules_and_the_callers_own_seat() -> None:
    tournament, players = sit_and_go()
    # Play until someone is out and someone has been moved to another table.
    drive_until(tournament, lambda: eliminated() is not None)
    body = state_of(tournament, players[0])
    assert body["state"] == "running"
    assert_public_rules(body, tournament)
    for player in players:
        me = state_of(tournament, player)["me"]
        entry = TournamentEntry.objects.get(tournament=tournament, player_id=player)
        assert (me["entry_id"], me["state"]) == (entry.pk, entry.state)
        if entry.state == EntryState.PLAYING:
            seat = PokerSeat.objects.get(table__tournament=tournament, player_id=player)
            assert (me["table_id"], me["seat"], me["stack"]) == (seat.table_id, seat.seat_number, seat.stack)
            assert me["prize"] is None
        else:
            assert entry.state == EntryState.ELIMINATED
            assert (me["table_id"], me["seat"], me["stack"]) == (None, None, None)
            assert (me["place"], me["tied"]) == (entry.place, entry.tied)
            assert me["place"] is not None
            assert me["place"] > body["players_left"]
    # The standings: the players in by their chips (their seats' stacks), most first, then those out by place.
    response = client(players[0]).get(f"/api/poker/tournaments/{tournament.pk}/standings/")
    assert response.status_code == 200
    standings = response.json()
    names = dict(get_user_model().objects.filter(pk__in=players).values_list("username", "pk"))
    assert sorted(names[row["username"]] for row in standings) == sorted(players)
    assert [row["you"] for row in standings].count(True) == 1
    assert (
        next(row for row in standings if row["you"])["username"] == get_user_model().objects.get(pk=players[0]).username
    )
    left = body["players_left"]
    in_play, out = standings[:left], standings[left:]
    stacks = {s.player_id: s.stack for s in PokerSeat.objects.filter(table__tournament=tournament)}
    assert [row["chips"] for row in in_play] == sorted(
        (stacks[names[row["username"]]] for row in in_play), reverse=True
    )
    assert {row["state"] for row in in_play} == {"playing"}
    assert [row["place"] for row in out] == sorted(row["place"] for row in out)
    assert all(row["state"] == "eliminated" and row["chips"] is None for row in out)
    assert "cards" not in json.dumps(standings)


def test_the_level_shown_is_the_level_the_clock_is_in() -> None:
    tournament, players = sit_and_go()
    # 650 s on the clock: level 2 (levels of 600 s) although no step has recorded it yet.
    Tournament.objects.filter(pk=tournament.pk).update(clock_started_at=timezone.now() - timedelta(seconds=650))
    assert Tournament.objects.get(pk=tournament.pk).current_level == 1
    body = state_of(tournament, players[0])
    level = LEVELS[1]
    assert body["level"] == {"number": 2, **level}
    assert 650 <= body["clock_seconds"] <= 655
    assert body["next_level_in"] == 1200 - body["clock_seconds"]
    # At the last level there is no next level.
    Tournament.objects.filter(pk=tournament.pk).update(clock_started_at=timezone.now() - timedelta(seconds=5000))
    body = state_of(tournament, players[0])
    assert (body["level"]["number"], body["next_level_in"]) == (3, None)


def test_paused_the_clock_stops_and_there_is_no_next_level_time() -> None:
    tournament, players = sit_and_go()
    Tournament.objects.filter(pk=tournament.pk).update(clock_started_at=timezone.now() - timedelta(seconds=30))
    operator = get_user_model().objects.create(username=key("op"), is_staff=True)
    tournament_services.pause_tournament(
        tournament_id=tournament.pk, operator=operator, reason="test", now=timezone.now()
    )
    first = state_of(tournament, players[0])
    assert (first["state"], first["next_level_in"], first["level"]["number"]) == ("paused", None, 1)
    assert 30 <= first["clock_seconds"] <= 32
    again = state_of(tournament, players[0])
    assert again["clock_seconds"] == first["clock_seconds"]  # stopped
    tournament_services.resume_tournament(tournament_id=tournament.pk, operator=operator, now=timezone.now())
    resumed = state_of(tournament, players[0])
    assert resumed["state"] == "running"
    assert resumed["next_level_in"] == 600 - resumed["clock_seconds"]


def test_finished_state_shows_the_places_and_prizes() -> None:
    tournament, players = sit_and_go()
    report = TournamentDriver(tournament.pk, start=timezone.now(), seed=3).run(max_rounds=5000)
    assert report.finished, report
    body = state_of(tournament, players[0])
    assert (body["state"], body["players_left"], body["tables"], body["next_level_in"]) == ("finished", 1, [], None)
    assert body["finished_at"] is not None
    paid = {row["place"]: row["amount"] for row in body["payouts"]}
    assert sum(paid.values()) == body["prize_pool"]["amount"] == 6 * 1000
    places = []
    for player in players:
        me = state_of(tournament, player)["me"]
        entry = TournamentEntry.objects.get(tournament=tournament, player_id=player)
        assert (me["state"], me["place"], me["prize"], me["table_id"]) == (entry.state, entry.place, entry.prize, None)
        if entry.tied == 1:
            assert me["prize"] == paid.get(me["place"], 0)
        places.append(me["place"])
    winner = TournamentEntry.objects.get(tournament=tournament, state=EntryState.WINNER)
    assert winner.place == 1
    assert winner.prize is not None
    assert winner.prize >= paid[1]
    assert sorted(places)[0] == 1


def test_unknown_tournament_is_404() -> None:
    for path in ("state", "standings"):
        response = client(make_player()).get(f"/api/poker/tournaments/999999/{path}/")
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "tournament_not_found"


def test_an_eliminated_player_acting_is_refused_and_nothing_changes() -> None:
    tournament, _ = sit_and_go()
    drive_until(tournament, lambda: eliminated() is not None)
    out = eliminated()
    assert out is not None
    table_id = PokerHand.objects.get(hand_id=out.bust_hand_id).table_id
    before = rows(*CHANGED_BY_A_TOURNAMENT_ACT), ledger_sums()
    for action in ({"action": "fold"}, {"action": "check"}, {"action": "raise", "amount": 100}):
        response = client(out.player_id).post(
            f"/api/poker/tables/{table_id}/act/", action, format="json", HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex
        )
        assert response.status_code == 409, response.content
        assert response.json()["error"]["code"] == "tournament_player_eliminated"
    assert (rows(*CHANGED_BY_A_TOURNAMENT_ACT), ledger_sums()) == before
