"""Chips over a real websocket (issue 37, part 1; seed 000:179 "Only chips of
denominations that can be covered by your current balance will be enabled"):
the snapshot serves the table's chip set and the chips the viewer's balance
covers; the player's own private messages carry them again as the balance
changes; a chip that is not a denomination is refused ``invalid_chip`` and
changes nothing (docs/websocket.md)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from django.utils import timezone
from websockets.sync.client import ClientConnection, connect
from websockets.typing import Origin

from games.house.services import start_table
from tests.house.live.conftest import fast_table, make_player
from tests.house.services.conftest import snapshot, wallet
from tests.ws_auth import token_for, ws_url

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

CHIPS = [100, 500, 1000, 2500]


def frames_until(ws: ClientConnection, done: Any) -> list[dict[str, Any]]:
    """Frames received until ``done(frame)`` is true (that frame last)."""
    seen: list[dict[str, Any]] = []
    while True:
        frame = json.loads(ws.recv(timeout=20))
        seen.append(frame)
        if done(frame):
            return seen


def test_covered_chips_follow_the_balance_over_the_websocket(asgi_server: str) -> None:
    limits = {"ante": {"min": 100, "max": 5_000}, "best_five": {"min": 100, "max": 500}}
    table = fast_table("uth", betting_seconds=60, limits=limits, chips=CHIPS)
    player = make_player(table, funds=3_000)
    start_table(table_id=table.pk, now=timezone.now())
    url = ws_url(asgi_server, f"/ws/tables/{table.pk}/", token_for(player))
    with connect(url, origin=Origin(asgi_server), open_timeout=20) as ws:
        first = json.loads(ws.recv(timeout=20))
        assert first["type"] == "snapshot"
        assert first["table"]["table"]["chips"] == CHIPS
        assert first["table"]["me"]["covered_chips"] == CHIPS  # 3,000 covers the 2,500 chip

        before = snapshot()
        refused = str(uuid.uuid4())
        ws.send(json.dumps({"type": "bet", "id": refused, "spot": "ante", "amount": 200}))
        [*_, error] = frames_until(ws, lambda f: f.get("id") == refused)
        assert (error["type"], error["code"]) == ("error", "invalid_chip")
        assert error["details"]["chips"] == CHIPS
        assert snapshot() == before

        placed = str(uuid.uuid4())
        ws.send(json.dumps({"type": "bet", "id": placed, "spot": "ante", "amount": 500}))
        seen = frames_until(ws, lambda f: f["type"] == "private" and f["event"] == "house_bet.placed")
        own = seen[-1]
        # The Ante and its Ante Plus hold 1,000: 2,000 left, which does not cover the 2,500 chip.
        assert own["balance"] == 2_000 == wallet(player)
        assert own["covered_chips"] == [100, 500, 1000]

        # Undo gives the balance back: every chip is covered again.
        ws.send(json.dumps({"type": "undo", "id": str(uuid.uuid4())}))
        own = frames_until(ws, lambda f: f["type"] == "private" and f["event"] == "house_bet.removed")[-1]
        assert own["balance"] == 3_000 == wallet(player)
        assert own["covered_chips"] == CHIPS
