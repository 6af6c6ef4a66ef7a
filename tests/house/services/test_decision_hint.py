"""The perfect-strategy decision hint (issue #25: "the decision hints come from the
exact tables"; docs/game-math.md, "Exact strategies"): ``GET /api/tables/<id>/hint/``
answers the option the exact analysis takes at the caller's pending decision,
from their own cards and the board shown. Expected decisions are the published
perfect strategy's (UTH: raise 4x with any ace; check 7-2 offsuit; bet 2x on the
flop with two pair; fold the river with ace high on the board and nothing;
Casino Hold'em: call with a pair, fold 7-2 on an ace-king-queen flop)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient

from games.house.realtime import presenters
from games.house.services import make_decision, place_chip, start_table
from tests.house.services.conftest import dealt_round, key, later, make_player, make_table, open_round, shoe, step

pytestmark = pytest.mark.django_db(transaction=True)


def hint(table_id: int, player: int, tick: Any) -> dict[str, Any]:
    """The hint at a moment inside the round's current window (its clock is T0's)."""
    return presenters.decision_hint(table_id=table_id, viewer_id=player, now=later(tick))


def hint_over_the_api(table_id: int, player: int) -> dict[str, Any]:
    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(pk=player))
    response = client.get(f"/api/tables/{table_id}/hint/")
    assert response.status_code == 200, response.content
    return dict(response.json())


def test_uth_hints_follow_the_perfect_strategy_street_by_street() -> None:
    table = make_table("uth")
    alice = make_player(table)
    tick = open_round(table, shoe_cards=shoe("7c 2d", dealer="Kc Kh", board="7h 2s 9d Ac 4h"))
    place_chip(table_id=table.pk, player_id=alice, spot="ante", amount=100, idempotency_key=key(), now=later(tick))
    assert hint(table.pk, alice, tick)["street"] is None  # betting: no decision pending
    tick = step(table, tick)
    preflop = hint(table.pk, alice, tick)
    assert preflop["street"] == "preflop"
    assert preflop["optimal"] == "check"  # 7-2 offsuit
    assert preflop["hint"] == "check"
    assert "call4x" in preflop["options"]
    make_decision(table_id=table.pk, player_id=alice, option="check", idempotency_key=key(), now=later(tick))
    tick = step(table, tick)
    flop = hint(table.pk, alice, tick)
    assert flop["street"] == "flop"
    assert flop["optimal"] == "call2x"  # two pair on the flop
    # Another player, not in the round, gets no hint (and nothing of Alice's).
    bob = make_player()
    assert hint(table.pk, bob, tick) | {"table_id": 0} == {"table_id": 0, "game": "uth", "street": None, "options": [],
                                                     "optimal": None, "hint": None}  # fmt: skip


def test_uth_raises_any_ace_preflop_and_folds_a_river_with_nothing() -> None:
    table, alice, tick = dealt_round("uth", "As 3d", dealer="2c 2h", board="Kh Qd 8s 5c 9h")
    assert hint(table.pk, alice, tick)["optimal"] == "call4x"  # any ace

    table, carol, tick = dealt_round("uth", "7c 2d", dealer="3c 3h", board="Ah Kd Qs 4c 9h")
    make_decision(table_id=table.pk, player_id=carol, option="check", idempotency_key=key(), now=later(tick))
    tick = step(table, tick)
    make_decision(table_id=table.pk, player_id=carol, option="check", idempotency_key=key(), now=later(tick))
    tick = step(table, tick)
    river = hint(table.pk, carol, tick)
    assert river["street"] == "river"
    assert river["optimal"] == "fold"  # seven high on an ace-king-queen board


@pytest.mark.parametrize(("hole", "flop", "expected"), [("9c 9d", "2h 5s Kd", "call"), ("7c 2d", "Ah Kd Qs", "fold")])
def test_casino_holdem_calls_a_pair_and_folds_nothing(hole: str, flop: str, expected: str) -> None:
    table, alice, tick = dealt_round("casino_holdem", hole, dealer="3c 4h", board=f"{flop} Jc 6h")
    answer = hint(table.pk, alice, tick)
    assert answer["street"] == "flop"
    assert answer["optimal"] == expected
    assert answer["hint"] == expected


def test_the_hint_over_the_api_for_the_caller_only() -> None:
    table = make_table("uth")
    alice = make_player(table)
    tick = start_table(
        table_id=table.pk, now=timezone.now(), shoe=shoe("Ad Kd", dealer="2c 3h", board="5h 6s 9d Jc 4h")
    )
    place_chip(table_id=table.pk, player_id=alice, spot="ante", amount=100, idempotency_key=key(),
               now=timezone.now())  # fmt: skip
    assert tick.deadline is not None
    step(table, tick)  # betting closes at its deadline; the preflop window opens now
    # (the step ran at the betting deadline, a few seconds ahead: the window is open now)
    answer = hint_over_the_api(table.pk, alice)
    assert answer["street"] == "preflop"
    assert answer["hint"] == "call4x"
    bob = make_player()
    assert hint_over_the_api(table.pk, bob)["street"] is None
    anonymous = APIClient().get(f"/api/tables/{table.pk}/hint/")
    assert anonymous.status_code == 401
