"""Operator malfunction handling of poker hands over REST (RULES.md, "Malfunction
voids all pays and play"): ``POST /api/poker/tables/<id>/hand/{pause,resume,void}/``.
Only the operator role (``games.change_pokertable``) may; players and the
read-only compliance role get 403, anonymous callers 401; every refusal
changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from compliance.roles import COMPLIANCE, OPERATOR
from games.poker import event_types as et
from games.poker.models import PokerHand, PokerSeat, PokerTable
from ledger.models import Event
from ledger.services import read_stream
from ledger.services.verify import verify_ledger
from tests.db import ledger_sums
from tests.house.live.test_operator_api import client_for
from tests.poker.tables import act, advance, make_table, snapshot
from tests.poker.test_tables import AA_VS_KK, three_handed

pytestmark = pytest.mark.django_db


@pytest.fixture
def hand_in_play() -> tuple[PokerTable, list[int]]:
    """Three players, the first hand dealt, seat 1 raised to 30 (seat 2 to act)."""
    table, players = three_handed()
    table = advance(table, cards=AA_VS_KK)
    act(table, players[0], "raise", 30)
    table.refresh_from_db()
    return table, players


def control(client: APIClient, table_id: int, action: str, body: Any = None) -> Any:
    return client.post(f"/api/poker/tables/{table_id}/hand/{action}/", body, format="json")


def error(response: Any) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


def test_operator_pauses_resumes_and_voids_a_hand(hand_in_play: tuple[PokerTable, list[int]]) -> None:
    table, (p1, p2, p3) = hand_in_play
    hand_id = table.current_hand_id
    operator = client_for("poker-op", OPERATOR)

    paused = control(operator, table.pk, "pause", {"reason": "shuffler jammed"})
    assert paused.status_code == 200, paused.content
    assert paused.json() | {"phase_seq": 0} == {
        "table_id": table.pk, "hand_id": hand_id, "phase": "paused", "phase_seq": 0, "deadline": None,
        "status": "playing",
    }  # fmt: skip
    resumed = control(operator, table.pk, "resume")
    assert resumed.status_code == 200, resumed.content
    assert (resumed.json()["phase"], resumed.json()["deadline"] is not None) == ("hand", True)
    voided = control(operator, table.pk, "void", {"reason": "card misdealt"})
    assert voided.status_code == 200, voided.content
    assert (voided.json()["phase"], voided.json()["status"]) == ("between", "voided")

    events = [e for e in read_stream(stream_id=et.hand_stream(hand_id)) if e.type in et.OPERATOR_EVENT_TYPES]
    assert [e.type for e in events] == [et.PAUSED, et.RESUMED, et.VOIDED]
    staff = get_user_model().objects.get(username="poker-op")
    actor = f"user:{staff.pk}"  # the operator's identity, as from the admin site
    assert all(e.data["actor"] == actor for e in events)
    assert all(e.metadata["actor"] == actor for e in events)
    actions = [e.data for e in Event.objects.filter(type="operator.action").order_by("id")]
    assert [(a["action"], a["target"], a["reason"]) for a in actions] == [
        ("hand.pause", f"poker-hand:{hand_id}", "shuffler jammed"),
        ("hand.resume", f"poker-hand:{hand_id}", ""),
        ("hand.void", f"poker-hand:{hand_id}", "card misdealt"),
    ]
    assert (events[0].data["reason"], events[2].data["reason"]) == ("shuffler jammed", "card misdealt")
    assert PokerHand.objects.get(hand_id=hand_id).status == "voided"
    assert [PokerSeat.objects.get(table=table, player_id=p).stack for p in (p1, p2, p3)] == [1000, 1000, 1000]
    assert ledger_sums() == {"EUR": 0}
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []


@pytest.mark.parametrize("who", ["player", "compliance"])
@pytest.mark.parametrize("action", ["pause", "resume", "void"])
def test_players_and_compliance_are_refused(hand_in_play: tuple[PokerTable, list[int]], who: str, action: str) -> None:
    table, _ = hand_in_play
    client = client_for(f"poker-{who}-{action}", COMPLIANCE if who == "compliance" else None)
    before = snapshot()
    assert error(control(client, table.pk, action, {"reason": "because"})) == (403, "permission_denied")
    assert snapshot() == before


@pytest.mark.parametrize("action", ["pause", "resume", "void"])
def test_unauthenticated_is_refused(hand_in_play: tuple[PokerTable, list[int]], action: str) -> None:
    table, _ = hand_in_play
    before = snapshot()
    assert error(control(APIClient(), table.pk, action, {"reason": "x"})) == (401, "not_authenticated")
    assert snapshot() == before


@pytest.mark.parametrize("action", ["pause", "void"])
@pytest.mark.parametrize("body", [{}, {"reason": ""}, {"reason": "   "}, {"reason": 7}, {"reason": "x" * 501}])
def test_pause_and_void_need_a_reason(
    hand_in_play: tuple[PokerTable, list[int]], action: str, body: dict[str, Any]
) -> None:
    table, _ = hand_in_play
    operator = client_for(f"poker-op-{action}", OPERATOR)
    before = snapshot()
    assert error(control(operator, table.pk, action, body)) == (400, "reason_required")
    assert snapshot() == before


def test_refusals_of_the_hand_state(hand_in_play: tuple[PokerTable, list[int]]) -> None:
    table, (_p1, p2, p3) = hand_in_play
    operator = client_for("poker-op", OPERATOR)
    reason = {"reason": "x"}
    idle = make_table()
    before = snapshot()
    assert error(control(operator, table.pk, "resume")) == (409, "poker_hand_not_paused")
    assert error(control(operator, 999_999, "pause", reason)) == (404, "poker_table_not_found")
    assert error(control(operator, 999_999, "resume")) == (404, "poker_table_not_found")
    for action in ("pause", "resume", "void"):
        assert error(control(operator, idle.pk, action, reason)) == (409, "poker_no_hand")
    assert snapshot() == before
    # Paused: a second pause is refused, and so is the player's action.
    assert control(operator, table.pk, "pause", reason).status_code == 200
    before = snapshot()
    assert error(control(operator, table.pk, "pause", reason)) == (409, "poker_hand_paused")
    player = APIClient()
    player.force_authenticate(get_user_model().objects.get(pk=p2))
    refused = player.post(f"/api/poker/tables/{table.pk}/act/", {"action": "call"}, format="json",
                          HTTP_IDEMPOTENCY_KEY="paused-call")  # fmt: skip
    assert error(refused) == (409, "poker_hand_paused")
    assert snapshot() == before
    # A completed hand can be neither paused nor voided.
    assert control(operator, table.pk, "resume").status_code == 200
    act(table, p2, "fold")
    act(table, p3, "fold")
    before = snapshot()
    assert error(control(operator, table.pk, "void", reason)) == (409, "poker_hand_complete")
    assert error(control(operator, table.pk, "pause", reason)) == (409, "poker_hand_complete")
    assert snapshot() == before


def test_poker_operator_endpoints_are_in_the_openapi_schema(client: Any) -> None:
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    for action in ("pause", "resume", "void"):
        operation = schema["paths"][f"/api/poker/tables/{{table_id}}/hand/{action}/"]["post"]
        assert operation["operationId"] == f"operator_poker_hand_{action}"
        assert "200" in operation["responses"]
