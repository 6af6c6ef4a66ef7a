"""Operator malfunction handling through the admin site: pause (players told),
resume, void (every wager returned, nothing paid, reason recorded)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction
from django.test import Client
from django.utils import timezone

from casino.errors import DomainError
from games.house.models import HouseTable
from games.house.services import place_chip, start_table
from ledger.services.events import read_stream
from tests.house.live.conftest import fast_table
from tests.house.services.conftest import key, make_player, wallet

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
FUNDS = 100_000


def admin_action(client: Client, action: str, table: HouseTable) -> None:
    response = client.post("/admin/games/housetable/", {"action": action, "_selected_action": [table.pk]}, follow=True)
    assert response.status_code == 200
    assert f"{table.code}: done" in response.content.decode(), response.content.decode()[-2000:]


def test_pause_resume_and_void_from_the_admin_site() -> None:
    operator = get_user_model().objects.create_superuser("op", "op@example.com", "op-password-123")
    client = Client()
    client.force_login(operator)
    table = fast_table("uth", betting_seconds=60)
    alice = make_player(table, funds=FUNDS)
    tick = start_table(table_id=table.pk, now=timezone.now())
    place_chip(table_id=table.pk, player_id=alice, spot="ante", amount=500, idempotency_key=key(), now=timezone.now())
    assert wallet(alice) == FUNDS - 1000  # Ante + automatic Ante Plus

    admin_action(client, "pause_rounds", table)
    table.refresh_from_db()
    assert table.phase == "paused"
    assert table.deadline is None
    with pytest.raises(DomainError) as refused, transaction.atomic():
        place_chip(
            table_id=table.pk, player_id=alice, spot="ante", amount=100, idempotency_key=key(), now=timezone.now()
        )
    assert refused.value.code == "round_paused"
    paused = [e for e in read_stream(stream_id=f"round-{tick.round_id}") if e.type == "house_round.paused"]
    assert len(paused) == 1
    assert "malfunction" in paused[0].data["reason"]

    admin_action(client, "resume_rounds", table)
    table.refresh_from_db()
    assert table.phase == "betting"
    assert table.deadline is not None

    admin_action(client, "void_rounds", table)
    assert wallet(alice) == FUNDS
    voided = [e for e in read_stream(stream_id=f"round-{tick.round_id}") if e.type == "house_round.voided"]
    assert len(voided) == 1
    assert voided[0].data["automatic"] is False
    assert "operator" in voided[0].data["reason"]
    told = [
        e for e in read_stream(stream_id=f"round-{tick.round_id}-player-{alice}") if e.type == "house_player.voided"
    ]
    assert len(told) == 1
