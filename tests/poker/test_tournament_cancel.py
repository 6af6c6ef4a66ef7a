"""An operator cancels a tournament that has not started (docs/poker.md,
"Tournaments: cancel"), over the operator REST API and the admin action, on
PostgreSQL: every entry's buy-in and fee back to the wallet, caused by the one
``poker_tournament.cancelled`` event, the prize pool at zero, the operator's
action recorded with the actor and the reason; a tournament that cannot be
cancelled answers ``tournament_not_cancellable`` and nothing changes; players
get 403."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from compliance.roles import OPERATOR, setup_roles
from games.poker import event_types as et
from games.poker.tournament.models import Tournament, TournamentEntry
from ledger.models import Event, Transfer
from ledger.services import read_stream
from ledger.services.verify import verify_ledger
from tests.compliance.staff import staff
from tests.db import ledger_sums, rows
from tests.house.live.test_operator_api import client_for
from tests.poker.tables import BUY_IN, FEE, log_tournament_state, make_player, make_tournament, wallet
from tests.poker.test_tournament_registration import UNCHANGED, client, fees, pool, refused, register

pytestmark = pytest.mark.django_db

FUNDS = 5_000


def cancel(api: APIClient, tournament: Tournament, reason: Any = "dealer software fault") -> Any:
    body = {} if reason is None else {"reason": reason}
    return api.post(f"/api/poker/tournaments/{tournament.pk}/cancel/", body, format="json")


def registered_three() -> tuple[Tournament, list[int]]:
    tournament = make_tournament()
    players = [make_player(funds=FUNDS) for _ in range(3)]
    for player in players:
        assert register(player, tournament).status_code == 201
    assert (pool(tournament), fees(tournament)) == (3 * BUY_IN, 3 * FEE)
    return tournament, players


def everything(tournament: Tournament, players: list[int]) -> Any:
    tournament.refresh_from_db()
    tables = (*UNCHANGED, "games_tournament")
    return rows(*tables), [wallet(p) for p in players], ledger_sums(), pool(tournament), fees(tournament)


def test_operator_cancels_and_every_player_gets_buy_in_and_fee_back() -> None:
    tournament, players = registered_three()
    operator = client_for("tourney-op", OPERATOR)
    operator_id = get_user_model().objects.get(username="tourney-op").pk

    response = cancel(operator, tournament, "  power cut in the data centre ")
    assert response.status_code == 200, response.content
    assert response.json() == {"tournament_id": tournament.pk, "state": "cancelled", "refunded": 3,
                               "buy_ins": 3 * BUY_IN, "fees": 3 * FEE}  # fmt: skip
    assert [wallet(p) for p in players] == [FUNDS] * 3
    assert (pool(tournament), fees(tournament)) == (0, 0)
    assert ledger_sums() == {"EUR": 0}
    tournament.refresh_from_db()
    assert tournament.state == "cancelled"
    entries = TournamentEntry.objects.filter(tournament=tournament)
    assert sorted(entries.values_list("state", flat=True)) == ["unregistered"] * 3
    assert all(e.unregistered_at is not None for e in entries)

    # One cancelled event on the tournament's stream; it caused every refund.
    stream = read_stream(stream_id=et.tournament_stream(tournament.pk))
    assert [e.type for e in stream] == [et.TOURNAMENT_REGISTERED] * 3 + [et.TOURNAMENT_CANCELLED]
    cancelled = stream[-1]
    assert cancelled.data["reason"] == "power cut in the data centre"
    assert cancelled.data["actor"] == f"user:{operator_id}"
    assert cancelled.metadata["actor"] == f"user:{operator_id}"
    assert sorted((r["player_id"], r["buy_in"], r["fee"]) for r in cancelled.data["refunds"]) == sorted(
        (p, BUY_IN, FEE) for p in players
    )
    caused = Transfer.objects.filter(event_id=cancelled.position)
    assert (
        sorted((t.amount, t.kind) for t in caused) == [(FEE, "tourney_refund")] * 3 + [(BUY_IN, "tourney_refund")] * 3
    )
    # The operator's action, with the actor and the reason.
    [action] = Event.objects.filter(type="operator.action", stream_id=f"operator-{operator_id}")
    assert (action.data["action"], action.data["target"], action.data["reason"]) == (
        "tournament.cancel", f"poker-tournament:{tournament.pk}", "power cut in the data centre",
    )  # fmt: skip
    assert action.data["details"]["refunded"] == 3
    assert action.metadata["actor"] == f"user:{operator_id}"
    # The lobby shows it cancelled; registering is closed.
    [summary] = [t for t in client(players[0]).get("/api/poker/tournaments/").json() if t["id"] == tournament.pk]
    assert (summary["state"], summary["registered"]) == ("cancelled", 0)
    refused(register(players[0], tournament), 409, "tournament_registration_closed")


def test_cancel_twice_is_refused_and_changes_nothing() -> None:
    tournament, players = registered_three()
    operator = client_for("tourney-op", OPERATOR)
    assert cancel(operator, tournament).status_code == 200
    before = everything(tournament, players)
    refused(cancel(operator, tournament, "again"), 409, "tournament_not_cancellable")
    assert everything(tournament, players) == before
    assert Event.objects.filter(type="operator.action").count() == 1


def test_a_player_may_not_cancel() -> None:
    tournament, players = registered_three()
    before = everything(tournament, players)
    refused(cancel(client(players[0]), tournament), 403, "permission_denied")
    assert everything(tournament, players) == before


@pytest.mark.parametrize("state", ["finished", "cancelled"])
def test_a_finished_or_cancelled_tournament_is_not_cancellable(state: str) -> None:
    """Issue #23: "An operator cancelling a finished tournament" is refused (a running one
    is cancelled under its policy: tests/poker/test_tournament_operator.py)."""
    tournament, players = registered_three()
    log_tournament_state(tournament, state=state)
    operator = client_for("tourney-op", OPERATOR)
    before = everything(tournament, players)
    refused(cancel(operator, tournament), 409, "tournament_not_cancellable")
    assert everything(tournament, players) == before


def test_a_reason_is_required_and_an_unknown_tournament_is_not_found() -> None:
    tournament, players = registered_three()
    operator = client_for("tourney-op", OPERATOR)
    before = everything(tournament, players)
    refused(cancel(operator, tournament, None), 400, "reason_required")
    refused(cancel(operator, tournament, "   "), 400, "reason_required")
    assert everything(tournament, players) == before
    missing = operator.post("/api/poker/tournaments/999999/cancel/", {"reason": "x"}, format="json")
    refused(missing, 404, "tournament_not_found")


def test_cancel_with_nobody_registered_records_the_event() -> None:
    tournament = make_tournament()
    operator = client_for("tourney-op", OPERATOR)
    response = cancel(operator, tournament)
    assert response.status_code == 200, response.content
    assert response.json()["refunded"] == 0
    assert [e.type for e in read_stream(stream_id=et.tournament_stream(tournament.pk))] == [et.TOURNAMENT_CANCELLED]
    assert pool(tournament) == 0


# --- the admin ------------------------------------------------------------------------------------

ADMIN = "/admin/games/tournament/"


def test_admin_lists_creates_and_cancels_with_a_reason() -> None:
    setup_roles()
    operator, web = staff("tourney-admin", OPERATOR)
    tournament, players = registered_three()

    listing = web.get(ADMIN)
    assert listing.status_code == 200
    assert b"SNG 6" in listing.content
    assert b"registering" in listing.content.lower()

    # The create form validates the level schedule and the payouts through the domain.
    form = {"kind": "sit_and_go", "name": "Bad SNG", "currency": "EUR", "buy_in": "500", "fee": "50",
            "starting_chips": "1500", "max_players": "6", "table_seats": "6", "guarantee": "0",
            "cancel_policy": "refund", "turn_seconds": "20", "time_bank_seconds": "30", "between_hands_seconds": "3",
            "hand_for_hand_margin": "0",
            "levels": '[{"small_blind": 10, "big_blind": 20, "ante": 0, "duration_seconds": 600}]',
            "payouts": '[{"max_entrants": null, "shares_bp": [6000, 3000]}]'}  # fmt: skip
    bad = web.post(f"{ADMIN}add/", form)
    assert bad.status_code == 200
    assert "payouts" in bad.context["adminform"].form.errors
    assert not Tournament.objects.filter(name="Bad SNG").exists()
    one_place = '[{"max_entrants": null, "shares_bp": [10000]}]'
    good = web.post(f"{ADMIN}add/", form | {"name": "Good SNG", "payouts": one_place})
    assert good.status_code == 302, good.content
    assert Tournament.objects.get(name="Good SNG").state == "registering"

    # The action asks for a reason first; nothing changes until it is given.
    selected = {"action": "cancel_and_refund", "_selected_action": [str(tournament.pk)]}
    ask = web.post(ADMIN, selected)
    assert ask.status_code == 200
    assert b"reason" in ask.content
    tournament.refresh_from_db()
    assert tournament.state == "registering"
    done = web.post(ADMIN, selected | {"apply": "1", "reason": "server migration"})
    assert done.status_code == 302
    tournament.refresh_from_db()
    assert tournament.state == "cancelled"
    assert [wallet(p) for p in players] == [FUNDS] * 3
    assert (pool(tournament), ledger_sums()) == (0, {"EUR": 0})
    actions = Event.objects.filter(type="operator.action", stream_id=f"operator-{operator.pk}")
    [action] = [a for a in actions if a.data["action"] == "tournament.cancel"]
    assert (action.data["reason"], action.metadata["actor"]) == ("server migration", f"user:{operator.pk}")
    # Again: refused with the code, shown to the operator, nothing changes.
    before = everything(tournament, players)
    again = web.post(ADMIN, selected | {"apply": "1", "reason": "again"}, follow=True)
    assert b"tournament_not_cancellable" in again.content
    assert everything(tournament, players) == before


def test_admin_cancel_needs_the_change_permission() -> None:
    setup_roles()
    tournament, players = registered_three()
    _viewer, web = staff("tourney-viewer", "compliance")
    before = everything(tournament, players)
    response = web.post(ADMIN, {"action": "cancel_and_refund", "_selected_action": [str(tournament.pk)],
                                "apply": "1", "reason": "no"})  # fmt: skip
    assert response.status_code == 200  # the action is not offered: the list again, nothing done
    assert everything(tournament, players) == before
    assert b"cancel_and_refund" not in web.get(ADMIN).content


def test_verify_ledger_is_clean_after_a_cancel() -> None:
    tournament, _players = registered_three()
    assert cancel(client_for("tourney-op", OPERATOR), tournament).status_code == 200
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []
