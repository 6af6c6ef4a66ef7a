from __future__ import annotations

import pytest

from games.house.services import make_decision, place_chip
from tests.house.services.conftest import key, later, make_player, make_table, open_round, shoe, step, wallet


@pytest.mark.django_db(transaction=True)
def test_uth_round_plays_through() -> None:
    table = make_table("uth")
    alice = make_player(table)
    tick = open_round(table, shoe_cards=shoe("As Kd", dealer="2c 3c", board="Ah 7d 9s Jc 4h"))
    assert tick.phase == "betting"
    r = place_chip(table_id=table.pk, player_id=alice, spot="ante", amount=100, idempotency_key=key(), now=later(tick))
    assert r.totals == {"ante": 100, "ante_plus": 100}
    tick = step(table, tick)
    assert tick.phase == "preflop"
    d = make_decision(table_id=table.pk, player_id=alice, option="call4x", idempotency_key=key(), now=later(tick))
    assert d.all_decided
    tick = step(table, tick)
    assert tick.phase == "between"
    # pair of aces beats dealer's ace high; dealer does not qualify: ante push, blind push (pair), call wins
    assert wallet(alice) == 100_000 + 400
