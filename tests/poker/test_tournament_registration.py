"""Tournament registration over the REST API (docs/poker.md, "Tournaments:
registration"): the buy-in into the tournament's prize pool, the fee to the
house, both refunded exactly on unregistering before the start; every refusal
answers its code and changes nothing; racing registrations make one entry."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.utils import timezone
from rest_framework.test import APIClient

from casino.responsible_gaming import exclude, set_limit
from compliance.reports import player_account_summary
from games.poker import event_types as et
from games.poker.tournament import services as tournament_services
from games.poker.tournament.models import Tournament, TournamentEntry
from ledger.models import Transfer
from ledger.services import balance_of, read_stream
from tests.db import ledger_sums, race, rows
from tests.poker.tables import BUY_IN, FEE, LEVELS, log_tournament_state, make_player, make_tournament, wallet

pytestmark = pytest.mark.django_db

UNCHANGED = ("games_tournamententry", "ledger_account", "ledger_transfer", "ledger_event", "ledger_idempotency")


def client(player: int) -> APIClient:
    api = APIClient()
    api.force_authenticate(get_user_model().objects.get(pk=player))
    return api


def post(player: int, path: str, *, key: str | None = None) -> Any:
    return client(player).post(f"/api/poker/{path}", {}, format="json", HTTP_IDEMPOTENCY_KEY=key or uuid.uuid4().hex)


def register(player: int, tournament: Tournament, *, key: str | None = None) -> Any:
    return post(player, f"tournaments/{tournament.pk}/register/", key=key)


def unregister(player: int, tournament: Tournament, *, key: str | None = None) -> Any:
    return post(player, f"tournaments/{tournament.pk}/unregister/", key=key)


def pool(tournament: Tournament) -> int:
    return balance_of(account_id=tournament_services.pool_account(tournament_id=tournament.pk, currency="EUR"))


def fees(tournament: Tournament) -> int:
    return balance_of(account_id=tournament_services.fee_account(tournament_id=tournament.pk, currency="EUR"))


def refused(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code


def assert_refusal_changes_nothing(call: Callable[[], Any], status: int, code: str, player: int) -> None:
    before = rows(*UNCHANGED), wallet(player), ledger_sums()
    refused(call(), status, code)
    assert (rows(*UNCHANGED), wallet(player), ledger_sums()) == before


def test_register_moves_the_buy_in_to_the_pool_and_the_fee_to_the_house() -> None:
    tournament = make_tournament()
    player = make_player(funds=5_000)
    response = register(player, tournament, key="reg-1")
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["state"], body["buy_in"], body["fee"], body["registered"]) == ("registered", BUY_IN, FEE, 1)
    assert wallet(player) == 5_000 - BUY_IN - FEE
    assert (pool(tournament), fees(tournament)) == (BUY_IN, FEE)
    assert ledger_sums() == {"EUR": 0}
    # A retry with the same key is the same command: nothing more moves.
    again = register(player, tournament, key="reg-1")
    assert again.status_code == 201
    assert again.json() == body
    assert wallet(player) == 5_000 - BUY_IN - FEE
    assert TournamentEntry.objects.filter(tournament=tournament).count() == 1
    # The event on the tournament's stream caused both transfers.
    [event] = read_stream(stream_id=et.tournament_stream(tournament.pk))
    assert event.type == et.TOURNAMENT_REGISTERED
    assert (event.data["player_id"], event.data["buy_in"], event.data["fee"]) == (player, BUY_IN, FEE)
    caused = Transfer.objects.filter(event_id=event.position)
    assert sorted((t.amount, t.kind) for t in caused) == [(FEE, "tourney_fee"), (BUY_IN, "tourney_buy_in")]
    # The lobby and the detail view show it.
    lobby = client(player).get("/api/poker/tournaments/").json()
    [summary] = [t for t in lobby if t["id"] == tournament.pk]
    assert (summary["registered"], summary["max_players"], summary["buy_in"], summary["fee"]) == (1, 6, BUY_IN, FEE)
    assert (summary["kind"], summary["state"], summary["currency"]) == ("sit_and_go", "registering", "EUR")
    assert summary["your_entry"] == "registered"
    detail = client(player).get(f"/api/poker/tournaments/{tournament.pk}/").json()
    assert detail["registration"]["state"] == "registered"
    assert detail["levels"] == LEVELS
    other = make_player()
    assert client(other).get(f"/api/poker/tournaments/{tournament.pk}/").json()["registration"] is None
    # Each player reads their own entry in the lobby, never another's.
    [seen_by_other] = [t for t in client(other).get("/api/poker/tournaments/").json() if t["id"] == tournament.pk]
    assert seen_by_other["your_entry"] is None
    assert seen_by_other["registered"] == 1


def test_unregister_refunds_both_exactly_and_the_player_may_register_again() -> None:
    tournament = make_tournament()
    player = make_player(funds=5_000)
    assert register(player, tournament).status_code == 201
    response = unregister(player, tournament, key="unreg-1")
    assert response.status_code == 200, response.content
    assert (response.json()["state"], response.json()["registered"]) == ("unregistered", 0)
    assert wallet(player) == 5_000
    assert (pool(tournament), fees(tournament)) == (0, 0)
    assert ledger_sums() == {"EUR": 0}
    assert unregister(player, tournament, key="unreg-1").json() == response.json()
    assert wallet(player) == 5_000
    types = [e.type for e in read_stream(stream_id=et.tournament_stream(tournament.pk))]
    assert types == [et.TOURNAMENT_REGISTERED, et.TOURNAMENT_UNREGISTERED]
    [summary] = [t for t in client(player).get("/api/poker/tournaments/").json() if t["id"] == tournament.pk]
    assert summary["your_entry"] is None  # unregistered is no entry that counts
    # Registering again is a new entry; the unregistered one stays as history.
    assert register(player, tournament).status_code == 201
    assert list(TournamentEntry.objects.filter(tournament=tournament).values_list("state", flat=True)) == [
        "unregistered",
        "registered",
    ]
    assert wallet(player) == 5_000 - BUY_IN - FEE


def test_a_free_fee_moves_only_the_buy_in() -> None:
    tournament = make_tournament(fee=0)
    player = make_player(funds=5_000)
    assert register(player, tournament).status_code == 201
    assert (wallet(player), pool(tournament), fees(tournament)) == (4_000, BUY_IN, 0)
    assert unregister(player, tournament).status_code == 200
    assert wallet(player) == 5_000


def test_registering_twice_is_refused() -> None:
    tournament = make_tournament()
    player = make_player()
    assert register(player, tournament).status_code == 201
    assert_refusal_changes_nothing(lambda: register(player, tournament), 409, "tournament_already_registered", player)


def test_registering_a_started_sit_and_go_or_a_finished_tournament_is_refused() -> None:
    player = make_player()
    for state in ("running", "finished", "cancelled"):
        tournament = make_tournament(state=state)
        assert_refusal_changes_nothing(
            functools.partial(register, player, tournament), 409, "tournament_registration_closed", player
        )


def test_late_registration_runs_through_its_level_then_closes() -> None:
    start = timezone.now() - timedelta(minutes=5)
    tournament = make_tournament(kind="scheduled", name="MTT", start_at=start, max_players=100,
                                 late_registration_level=2)  # fmt: skip
    log_tournament_state(tournament, state="running", level=2)
    early, late = make_player(), make_player()
    assert register(early, tournament).status_code == 201
    log_tournament_state(tournament, state="running", level=3)
    assert_refusal_changes_nothing(lambda: register(late, tournament), 409, "tournament_registration_closed", late)
    # Without late registration a running tournament is closed from level 1.
    closed = make_tournament(kind="scheduled", name="MTT", start_at=start, max_players=100)
    log_tournament_state(closed, state="running")
    assert_refusal_changes_nothing(lambda: register(late, closed), 409, "tournament_registration_closed", late)


def test_a_full_tournament_is_refused() -> None:
    start = timezone.now() + timedelta(hours=1)
    tournament = make_tournament(kind="scheduled", name="MTT", start_at=start, max_players=2)
    first, second, third = make_player(), make_player(), make_player()
    assert register(first, tournament).status_code == 201
    assert register(second, tournament).json()["registered"] == 2
    assert_refusal_changes_nothing(lambda: register(third, tournament), 409, "tournament_full", third)


def test_the_registration_that_fills_a_sit_and_go_starts_it_and_closes_registration() -> None:
    tournament = make_tournament(max_players=2)
    first, second, third = make_player(), make_player(), make_player()
    assert register(first, tournament).json()["state"] == "registered"
    filled = register(second, tournament).json()
    assert filled["registered"] == 2
    assert filled["state"] == "playing"
    tournament.refresh_from_db()
    assert tournament.state == "running"
    assert tournament.entrants == 2
    assert_refusal_changes_nothing(lambda: register(third, tournament), 409, "tournament_registration_closed", third)


def test_an_excluded_player_or_one_over_a_loss_limit_is_refused() -> None:
    tournament = make_tournament()
    excluded, limited = make_player(), make_player()
    exclude(player_id=excluded, currency="EUR", kind="cool_off", days=1, now=timezone.now())
    response = register(excluded, tournament)
    assert response.status_code == 403
    assert_refusal_changes_nothing(lambda: register(excluded, tournament), 403, response.json()["error"]["code"],
                                   excluded)  # fmt: skip
    assert response.json()["error"]["code"] in ("cooling_off", "self_excluded")
    set_limit(player_id=limited, kind="loss_day", amount=BUY_IN + FEE - 1, currency="EUR", now=timezone.now())
    assert_refusal_changes_nothing(lambda: register(limited, tournament), 403, "loss_limit_exceeded", limited)


def test_insufficient_funds_is_refused() -> None:
    tournament = make_tournament()
    poor = make_player(funds=BUY_IN + FEE - 1)
    assert_refusal_changes_nothing(lambda: register(poor, tournament), 409, "insufficient_funds", poor)


def test_unregistering_after_the_start_or_without_a_registration_is_refused() -> None:
    tournament = make_tournament()
    player, stranger = make_player(), make_player()
    assert register(player, tournament).status_code == 201
    assert_refusal_changes_nothing(lambda: unregister(stranger, tournament), 409, "tournament_not_registered",
                                   stranger)  # fmt: skip
    log_tournament_state(tournament, state="running")
    assert_refusal_changes_nothing(lambda: unregister(player, tournament), 409, "tournament_already_started", player)
    assert pool(tournament) == BUY_IN


def test_an_unknown_tournament_is_404() -> None:
    player = make_player()
    assert client(player).get("/api/poker/tournaments/999999/").status_code == 404
    assert_refusal_changes_nothing(lambda: post(player, "tournaments/999999/register/"), 404, "tournament_not_found",
                                   player)  # fmt: skip
    assert_refusal_changes_nothing(lambda: post(player, "tournaments/999999/unregister/"), 404,
                                   "tournament_not_found", player)  # fmt: skip


def test_register_needs_an_idempotency_key() -> None:
    tournament = make_tournament()
    player = make_player()
    response = client(player).post(f"/api/poker/tournaments/{tournament.pk}/register/", {}, format="json")
    refused(response, 400, "idempotency_key_required")


def test_the_schedule_and_payouts_are_validated_by_the_domain() -> None:
    with pytest.raises(ValidationError) as bad_payouts:
        make_tournament(payouts=[{"max_entrants": None, "shares_bp": [5000, 4999]}])
    assert "tournament_payouts_not_100" in str(bad_payouts.value)
    with pytest.raises(ValidationError) as bad_levels:
        make_tournament(levels=[{"small_blind": 20, "big_blind": 10, "ante": 0, "duration_seconds": 60}])
    assert "tournament_level_invalid_blinds" in str(bad_levels.value)
    with pytest.raises(ValidationError) as no_start:
        make_tournament(kind="scheduled")
    assert "start_at" in no_start.value.message_dict
    with pytest.raises(ValidationError) as late:
        make_tournament(kind="scheduled", start_at=timezone.now(), late_registration_level=9)
    assert "tournament_unknown_level" in str(late.value)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_registrations_of_one_player_make_one_entry() -> None:
    tournament = make_tournament()
    player = make_player(funds=5_000)
    results = race(4, lambda i: register(player, tournament, key=f"race-{i}").status_code, atomic=False)
    assert sorted(results) == [201, 409, 409, 409]
    assert TournamentEntry.objects.filter(tournament=tournament, player_id=player).count() == 1
    assert wallet(player) == 5_000 - BUY_IN - FEE
    assert (pool(tournament), fees(tournament)) == (BUY_IN, FEE)
    assert ledger_sums() == {"EUR": 0}


def test_the_daily_player_summary_counts_buy_in_and_fee_as_stakes_and_the_refund_as_returns() -> None:
    tournament = make_tournament()
    player = make_player(funds=5_000)
    assert register(player, tournament).status_code == 201
    assert unregister(player, tournament).status_code == 200
    assert register(player, tournament).status_code == 201
    [row] = player_account_summary(day=timezone.now().date(), player=str(player)).rows
    assert (row["stakes"], row["returns"], row["adjustments"]) == (2 * (BUY_IN + FEE), BUY_IN + FEE, 0)
    assert row["reconciled"] is True
