"""The demo seeder creates one open table per game, with a wheel and STAX pools on Xtreme."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from casino.demo import seed_demo
from games.house.models import HouseTable, TableSeat
from games.house.services import start_table
from tests.house.services.conftest import T0

pytestmark = pytest.mark.django_db


def test_demo_tables_are_created_once_and_can_open_a_round() -> None:
    seed_demo()
    seed_demo()
    tables = {t.code: t for t in HouseTable.objects.all()}
    assert {(t.game, t.hand_mode) for t in tables.values()} == {
        ("uth", "shared"),
        ("casino_holdem", "shared"),
        ("xtreme", "per_seat"),
    }
    assert all(t.is_open and t.currency == "EUR" for t in tables.values())
    assert tables["XTR1"].wheel["segments"]
    assert tables["XTR1"].progressives["reset"]["star"] > 0
    demo = get_user_model().objects.get(username="demo")
    assert TableSeat.objects.filter(player=demo).count() == 3
    for table in tables.values():
        tick = start_table(table_id=table.pk, now=T0)
        assert tick.phase == "betting"
        assert tick.game_number.startswith(table.code)
