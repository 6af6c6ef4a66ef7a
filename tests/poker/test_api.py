"""The poker REST API: seats and actions with Idempotency-Key, table state,
hand history and replay, and redaction: nobody sees another player's hole
cards unless that hand was shown at showdown (issue 7)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from games.poker.models import PokerTable
from tests.db import ledger_sums
from tests.poker.tables import advance, make_player, make_table, wallet
from tests.poker.test_tables import AA_VS_KK

pytestmark = pytest.mark.django_db


def client(player: int) -> APIClient:
    api = APIClient()
    api.force_authenticate(get_user_model().objects.get(pk=player))
    return api


def post(player: int, path: str, data: dict[str, Any] | None = None, *, key: str | None = None) -> Any:
    return client(player).post(
        f"/api/poker/{path}", data or {}, format="json", HTTP_IDEMPOTENCY_KEY=key or uuid.uuid4().hex
    )


def get(player: int, path: str) -> Any:
    return client(player).get(f"/api/poker/{path}")


def test_sit_needs_a_key_and_moves_the_buy_in() -> None:
    table = make_table()
    player = make_player(funds=5_000)
    refused = client(player).post(f"/api/poker/tables/{table.pk}/sit/", {"seat": 1, "buy_in": 500}, format="json")
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "idempotency_key_required"
    response = post(player, f"tables/{table.pk}/sit/", {"seat": 1, "buy_in": 500}, key="same")
    assert response.status_code == 201
    assert response.json()["stack"] == 500
    again = post(player, f"tables/{table.pk}/sit/", {"seat": 1, "buy_in": 500}, key="same")
    assert again.status_code == 201
    assert wallet(player) == 4_500
    second = post(player, f"tables/{table.pk}/sit/", {"seat": 2, "buy_in": 500})
    assert second.status_code == 409
    assert second.json()["error"]["code"] == "poker_already_seated"
    listed = get(player, "tables/").json()
    assert [t["code"] for t in listed] == [table.code]
    assert listed[0]["seated"] == 1
    left = post(player, f"tables/{table.pk}/leave/")
    assert left.status_code == 200
    assert left.json()["moved"] == 500
    assert wallet(player) == 5_000


def _cards_in(payload: Any) -> str:
    return json.dumps(payload)


def test_a_hand_over_rest_with_redaction() -> None:
    table = make_table()
    p1, p2, p3 = (make_player() for _ in range(3))
    for seat, player in ((1, p1), (2, p2), (3, p3)):
        assert post(player, f"tables/{table.pk}/sit/", {"seat": seat, "buy_in": 1000}).status_code == 201
    PokerTable.objects.filter(pk=table.pk).update(button_seat=3)
    table = advance(table, cards=AA_VS_KK)
    hand_id = table.current_hand_id
    view = get(p1, f"tables/{table.pk}/").json()
    players = {p["seat"]: p for p in view["hand"]["players"]}
    assert players[1]["cards"] == ["Ks", "Kh"]
    assert players[2]["cards"] is None
    assert players[3]["cards"] is None
    assert view["hand"]["legal"] == {"call_amount": 10, "can_check": False, "can_raise": True, "min_to": 20,
                                     "max_to": 1000}  # fmt: skip
    assert "legal" not in get(p2, f"tables/{table.pk}/").json()["hand"]
    text = _cards_in(get(p2, f"tables/{table.pk}/").json())
    assert "As" not in text
    assert "Ks" not in text
    assert "7d" in text
    out_of_turn = post(p2, f"tables/{table.pk}/act/", {"action": "call"})
    assert out_of_turn.status_code == 409
    assert out_of_turn.json()["error"]["code"] == "poker_not_your_turn"
    script = [(p1, "raise", 30), (p2, "call", None), (p3, "call", None), (p2, "check", None), (p3, "bet", 60),
              (p1, "call", None), (p2, "fold", None), (p3, "check", None), (p1, "check", None),
              (p3, "check", None), (p1, "check", None)]  # fmt: skip
    for player, action, amount in script:
        body = {"action": action} if amount is None else {"action": action, "amount": amount}
        response = post(player, f"tables/{table.pk}/act/", body)
        assert response.status_code == 200, response.json()
    # Showdown: seat 3 (AA) shows first; seat 1's kings cannot win and are mucked.
    final = get(p2, f"tables/{table.pk}/").json()["hand"]
    shown = {p["seat"]: p["cards"] for p in final["players"]}
    assert shown == {2: ["2c", "7d"], 3: ["As", "Ah"], 1: None}
    for viewer, hidden in ((p2, ("Ks", "Kh")), (p3, ("Ks", "Kh", "2c", "7d")), (p1, ("2c", "7d"))):
        history = get(viewer, f"hands/{hand_id}/")
        replay = get(viewer, f"hands/{hand_id}/replay/")
        assert history.status_code == replay.status_code == 200
        for payload in (history.json(), replay.json(), get(viewer, f"tables/{table.pk}/").json()):
            text = _cards_in(payload)
            assert not any(f'"{card}"' in text for card in hidden), (viewer, hidden)
        # Of the shuffle, the history shows the commitment alone: no deck, no salt.
        [shuffled] = [e for e in history.json()["events"] if e["type"] == "poker_hand.shuffled"]
        assert set(shuffled) == {"type", "version", "recorded_at", "commitment", "table_id", "at"}
    steps = get(p1, f"hands/{hand_id}/replay/").json()["steps"]
    assert steps[0]["event"]["type"] == "poker.hand_started"
    assert steps[-1]["state"]["phase"] == "complete"
    assert [p["stack"] for p in steps[-1]["state"]["players"]] == [970, 1000 - 90 + 205, 910]
    listed = get(p1, "hands/").json()
    assert listed["count"] == 1
    assert listed["results"][0]["net"] == -90
    stranger = make_player()
    refused = get(stranger, f"hands/{hand_id}/")
    assert refused.status_code == 404
    assert refused.json()["error"]["code"] == "poker_hand_not_found"
    assert ledger_sums() == {"EUR": 0}


def test_poker_endpoints_are_in_the_openapi_schema() -> None:
    player = make_player()
    schema = client(player).get("/api/schema/", {"format": "json"})
    assert schema.status_code == 200
    paths = json.loads(schema.content)["paths"]
    for path in ("/api/poker/tables/", "/api/poker/tables/{table_id}/act/", "/api/poker/hands/{hand_id}/replay/"):
        assert path in paths


def test_the_table_view_names_the_main_and_side_pots_with_who_may_win_them() -> None:
    """Seed 001, "Side Pots": an all-in player can win only the main pot; what the
    others put in above it is a side pot between them. The view gives each pot
    with its eligible seats (the engine's pots), each seat's thinking time bank
    left, and the table's tournament (none: a ring table)."""
    table = make_table(time_bank_seconds=20)
    short, p2, p3 = (make_player() for _ in range(3))
    for seat, player, buy_in in ((1, short, 200), (2, p2, 1000), (3, p3, 1000)):
        assert post(player, f"tables/{table.pk}/sit/", {"seat": seat, "buy_in": buy_in}).status_code == 201
    PokerTable.objects.filter(pk=table.pk).update(button_seat=3)
    table = advance(table, cards=AA_VS_KK)
    view = get(p2, f"tables/{table.pk}/").json()
    assert view["table"]["tournament_id"] is None
    assert {s["seat"]: s["time_bank_left"] for s in view["seats"]} == {1: 20, 2: 20, 3: 20}
    assert view["hand"]["pots"] == []  # the blinds are bets of the round in play, not yet in a pot
    # The button moved to seat 1 (short, first to act three-handed), 2 small blind, 3 big blind.
    preflop = ((short, "all_in", None), (p2, "call", None), (p3, "call", None))
    flop = ((p2, "bet", 100), (p3, "call", None))
    for step, script in enumerate((preflop, flop)):
        for player, action, amount in script:
            body = {"action": action} if amount is None else {"action": action, "amount": amount}
            assert post(player, f"tables/{table.pk}/act/", body).status_code == 200, (action, body)
        if step == 0:  # one pot of 3 x 200, which every player can win
            assert get(p3, f"tables/{table.pk}/").json()["hand"]["pots"] == [{"amount": 600, "eligible": [1, 2, 3]}]
    pots = get(short, f"tables/{table.pk}/").json()["hand"]["pots"]
    assert pots == [{"amount": 600, "eligible": [1, 2, 3]}, {"amount": 200, "eligible": [2, 3]}]
