"""Opening and closing a table from the admin drives the dealer on a real Celery
worker (issue 8, docs/live.md): opening deals rounds that repeat while the table
is open; closing lets the round in progress finish (settled, not voided, the
player paid) and then no new round opens."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from compliance.roles import OPERATOR, setup_roles
from games.house.models import HouseRound, HouseTable, PlayerRound
from games.house.services import place_chip
from ledger.models import Event
from tests.compliance.staff import staff
from tests.house.live.conftest import fast_table, make_player, wait_for
from tests.house.services.conftest import key, wallet

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
FUNDS = 100_000


def test_open_deals_rounds_and_close_lets_the_current_round_finish(spawn_worker) -> None:
    setup_roles()
    spawn_worker("openclose")
    table = fast_table("uth", betting_seconds=3, warning_seconds=1)
    HouseTable.objects.filter(pk=table.pk).update(is_open=False)
    alice = make_player(table, funds=FUNDS)
    operator, client = staff("op", OPERATOR)

    assert client.post(f"/admin/games/housetable/{table.pk}/control/open/").status_code == 302
    first = HouseRound.objects.get(table=table)
    assert first.phase == "betting"
    wait_for(lambda: HouseRound.objects.filter(table=table).count() >= 2, timeout=40, what="a second round")

    # Bet in the current betting window, then close: that round still plays out.
    def betting_round() -> HouseRound | None:
        # With time left to bet on a loaded machine.
        soon = timezone.now() + timedelta(seconds=1.5)
        return HouseRound.objects.filter(table=table, status="open", phase="betting", deadline__gt=soon).first()

    current = wait_for(betting_round, timeout=30, what="a betting window")
    place_chip(table_id=table.pk, player_id=alice, spot="ante", amount=100, idempotency_key=key(), now=timezone.now())
    assert client.post(f"/admin/games/housetable/{table.pk}/control/close/").status_code == 302
    assert not HouseTable.objects.get(pk=table.pk).is_open
    wait_for(lambda: HouseTable.objects.get(pk=table.pk).phase == "idle", timeout=40, what="the table idle")
    current.refresh_from_db()
    assert current.status == "settled"
    row = PlayerRound.objects.get(round=current, player_id=alice)
    assert wallet(alice) == FUNDS + row.net
    rounds = HouseRound.objects.filter(table=table).count()
    time.sleep(4)  # longer than a whole fast round: nothing new is dealt
    assert HouseRound.objects.filter(table=table).count() == rounds
    assert HouseRound.objects.filter(table=table, status="open").count() == 0
    actions = Event.objects.filter(type="operator.action").order_by("pk")
    assert [(e.data["action"], e.metadata["actor"]) for e in actions] == [
        ("table.open", f"user:{operator.pk}"),
        ("table.close", f"user:{operator.pk}"),
    ]
