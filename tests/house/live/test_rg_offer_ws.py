"""The decision offer over the real websocket never shows an option responsible
gaming would refuse (issue 22; docs/cashier-and-responsible-gaming.md, "The
forced decision stays coverable"): a real uvicorn process, real websocket
clients, PostgreSQL and Redis. A player with a daily loss limit that leaves no
room for a preflop 4x/3x is offered only the check, in the snapshot and in the
``decision.offered`` delta; another player at the same table is offered all three."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import websockets
from django.utils import timezone
from websockets.typing import Origin

from casino import responsible_gaming as rg
from games.house.models import HouseTable
from games.house.services import advance_table, place_chip, start_table
from tests.house.live.conftest import fast_table
from tests.house.services.conftest import key, make_player
from tests.ws_auth import token_for, ws_ticket_async

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_the_websocket_offer_hides_what_the_loss_limit_refuses(asgi_server: str) -> None:
    table = fast_table("uth", betting_seconds=60, decision_seconds=60)
    limited = make_player(table, name="rg-offer-limited")
    free = make_player(table, name="rg-offer-free")
    start_table(table_id=table.pk, now=timezone.now())
    # 100 Ante: 200 held with its Ante Plus, 100 kept for the river's 1x: 300.
    rg.set_limit(player_id=limited, kind="loss_day", amount=300, currency="EUR", now=timezone.now())
    for pid in (limited, free):
        place_chip(table_id=table.pk, player_id=pid, spot="ante", amount=100, idempotency_key=key(),
                   now=timezone.now())  # fmt: skip
    tokens = {pid: token_for(pid) for pid in (limited, free)}

    def close_betting() -> None:
        row = HouseTable.objects.get(pk=table.pk)
        assert row.deadline is not None
        tick = advance_table(table_id=table.pk, expected_seq=row.phase_seq, now=row.deadline)
        assert tick is not None
        assert tick.phase == "preflop"

    async def offered(ws: Any) -> list[str]:
        while True:
            message = json.loads(str(await asyncio.wait_for(ws.recv(), 20)))
            if message.get("type") == "private" and message.get("event") == "decision.offered":
                return list(message["data"]["options"])

    async def scenario() -> tuple[dict[int, list[str]], dict[int, list[str]]]:
        url = asgi_server.replace("http://", "ws://") + f"/ws/tables/{table.pk}/?ticket="
        sockets = {
            pid: await websockets.connect(
                url + await ws_ticket_async(asgi_server, token), origin=Origin(asgi_server), open_timeout=20
            )
            for pid, token in tokens.items()
        }
        try:
            for ws in sockets.values():
                snapshot = json.loads(str(await asyncio.wait_for(ws.recv(), 20)))
                assert snapshot["type"] == "snapshot"
            await asyncio.to_thread(close_betting)
            deltas = {pid: await offered(ws) for pid, ws in sockets.items()}
            # A snapshot taken now (a reconnect) shows the same options.
            snapshots = {}
            for pid, token in tokens.items():
                async with websockets.connect(
                    url + await ws_ticket_async(asgi_server, token), origin=Origin(asgi_server), open_timeout=20
                ) as again:
                    view = json.loads(str(await asyncio.wait_for(again.recv(), 20)))
                    snapshots[pid] = list(view["table"]["me"]["options"])
        finally:
            for ws in sockets.values():
                await ws.close()
        return deltas, snapshots

    deltas, snapshots = asyncio.run(scenario())
    assert deltas[limited] == ["check"]
    assert deltas[free] == ["call4x", "call3x", "check"]
    assert snapshots == deltas
