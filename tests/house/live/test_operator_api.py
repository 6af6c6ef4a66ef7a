"""Operator malfunction handling over REST (issue 6, RULES.md "Malfunction voids all
pays and play"): an operator pauses a round (players are told why), then resumes
or voids it (every wager returned, nothing paid, the reason recorded). Players
and the read-only compliance role are refused with 403 and change nothing."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.utils import timezone
from rest_framework.test import APIClient

from casino.errors import DomainError
from compliance.roles import COMPLIANCE, OPERATOR, setup_roles
from games.house.models import HouseTable
from games.house.services import place_chip, start_table
from ledger.models import Event
from ledger.services.events import read_stream
from ledger.services.verify import verify_ledger
from tests.house.live.conftest import fast_table
from tests.house.services.conftest import key, make_player, wallet

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
FUNDS = 100_000


def client_for(username: str, group: str | None = None) -> APIClient:
    user = get_user_model().objects.create(username=username, is_staff=group is not None)
    if group:
        setup_roles()
        user.groups.add(Group.objects.get(name=group))
    client = APIClient()
    client.force_authenticate(user)
    return client


def snapshot(table: HouseTable) -> tuple[Any, ...]:
    table.refresh_from_db()
    return table.phase, table.phase_seq, table.deadline, table.public_seq, Event.objects.count()


def round_events(round_id: str, kind: str) -> list[Any]:
    return [e for e in read_stream(stream_id=f"round-{round_id}") if e.type == kind]


@pytest.fixture
def table_in_play() -> tuple[HouseTable, int, str]:
    """A UTH table in its betting window with one player's Ante (+ Ante Plus) held."""
    table = fast_table("uth", betting_seconds=60)
    alice = make_player(table, funds=FUNDS)
    tick = start_table(table_id=table.pk, now=timezone.now())
    place_chip(table_id=table.pk, player_id=alice, spot="ante", amount=500, idempotency_key=key(), now=timezone.now())
    assert wallet(alice) == FUNDS - 1000
    return table, alice, tick.round_id


def test_operator_pauses_resumes_and_voids_a_round(table_in_play: tuple[HouseTable, int, str]) -> None:
    table, alice, round_id = table_in_play
    operator = client_for("op", OPERATOR)

    paused = operator.post(f"/api/tables/{table.pk}/round/pause/", {"reason": "shuffler jammed"}, format="json")
    assert paused.status_code == 200, paused.content
    assert paused.json()["phase"] == "paused"
    table.refresh_from_db()
    assert (table.phase, table.deadline) == ("paused", None)
    [pause] = round_events(round_id, "house_round.paused")
    assert pause.data["reason"] == "shuffler jammed"
    with pytest.raises(DomainError) as refused, transaction.atomic():
        place_chip(
            table_id=table.pk, player_id=alice, spot="ante", amount=100, idempotency_key=key(), now=timezone.now()
        )
    assert refused.value.code == "round_paused"

    resumed = operator.post(f"/api/tables/{table.pk}/round/resume/")
    assert resumed.status_code == 200, resumed.content
    table.refresh_from_db()
    assert table.phase == "betting"
    assert table.deadline is not None
    assert table.deadline > timezone.now()
    assert len(round_events(round_id, "house_round.resumed")) == 1

    voided = operator.post(f"/api/tables/{table.pk}/round/void/", {"reason": "card misdealt"}, format="json")
    assert voided.status_code == 200, voided.content
    assert wallet(alice) == FUNDS  # every wager returned, nothing paid
    [void] = round_events(round_id, "house_round.voided")
    assert "card misdealt" in void.data["reason"]
    [player_void] = [
        e for e in read_stream(stream_id=f"round-{round_id}-player-{alice}") if e.type == "house_player.voided"
    ]
    assert "card misdealt" in player_void.data["reason"]
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []
    # #8: every operator change is also an event with the operator's identity,
    # the same actor as on the round's own events (as from the admin site).
    op = get_user_model().objects.get(username="op")
    assert {pause.data["actor"], void.data["actor"]} == {f"user:{op.pk}"}
    actions = [e.data for e in Event.objects.filter(type="operator.action").order_by("id")]
    assert [(a["action"], a["target"], a["reason"], a["operator_id"]) for a in actions] == [
        ("round.pause", f"round:{round_id}", "shuffler jammed", op.pk),
        ("round.resume", f"round:{round_id}", "", op.pk),
        ("round.void", f"round:{round_id}", "card misdealt", op.pk),
    ]


@pytest.mark.parametrize("who", ["player", "compliance"])
@pytest.mark.parametrize("action", ["pause", "resume", "void"])
def test_players_and_compliance_are_refused(table_in_play: tuple[HouseTable, int, str], who: str, action: str) -> None:
    table, alice, _ = table_in_play
    client = client_for(f"{who}-{action}", COMPLIANCE if who == "compliance" else None)
    before = snapshot(table), wallet(alice)
    response = client.post(f"/api/tables/{table.pk}/round/{action}/", {"reason": "because"}, format="json")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "permission_denied"
    assert (snapshot(table), wallet(alice)) == before


def test_unauthenticated_is_refused(table_in_play: tuple[HouseTable, int, str]) -> None:
    table, _, _ = table_in_play
    before = snapshot(table)
    response = APIClient().post(f"/api/tables/{table.pk}/round/void/", {"reason": "x"}, format="json")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
    assert snapshot(table) == before


@pytest.mark.parametrize("action", ["pause", "void"])
@pytest.mark.parametrize("body", [{}, {"reason": ""}, {"reason": "   "}, {"reason": 7}, {"reason": "x" * 501}])
def test_pause_and_void_need_a_reason(
    table_in_play: tuple[HouseTable, int, str], action: str, body: dict[str, Any]
) -> None:
    table, alice, _ = table_in_play
    operator = client_for(f"op-{action}", OPERATOR)
    before = snapshot(table), wallet(alice)
    response = operator.post(f"/api/tables/{table.pk}/round/{action}/", body, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "reason_required"
    assert (snapshot(table), wallet(alice)) == before


def test_refusals_of_the_round_state(table_in_play: tuple[HouseTable, int, str]) -> None:
    table, alice, _ = table_in_play
    operator = client_for("op", OPERATOR)
    before = snapshot(table), wallet(alice)
    # Resuming a round that is not paused.
    response = operator.post(f"/api/tables/{table.pk}/round/resume/")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "wrong_phase"
    # No such table.
    response = operator.post("/api/tables/999999/round/pause/", {"reason": "x"}, format="json")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "table_not_found"
    # A table with no round in play.
    idle = fast_table("uth")
    response = operator.post(f"/api/tables/{idle.pk}/round/void/", {"reason": "x"}, format="json")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "no_round_in_play"
    assert (snapshot(table), wallet(alice)) == before


def test_operator_endpoints_are_in_the_openapi_schema(client: Any) -> None:
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    paths = schema["paths"]
    for action in ("pause", "resume", "void"):
        operation = paths[f"/api/tables/{{table_id}}/round/{action}/"]["post"]
        assert operation["operationId"] == f"operator_round_{action}"
        assert "200" in operation["responses"]
    body = paths["/api/tables/{table_id}/round/void/"]["post"]["requestBody"]["content"]["application/json"]
    reason = schema["components"]["schemas"][body["schema"]["$ref"].rsplit("/", 1)[1]]
    assert reason["required"] == ["reason"]
