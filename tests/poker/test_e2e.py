"""End to end, from the outside: a real uvicorn process (REST + websocket), a
real Celery worker dealing and running the clock, PostgreSQL and Redis. Three
players sit down over REST, play a hand over the websocket, and nobody ever
receives another player's hole cards before they are shown (issue 7)."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from typing import Any

import httpx
import pytest
import websockets
from django.contrib.auth import get_user_model
from websockets.typing import Origin

from casino.auth import issue_token
from games.poker.models import PokerHand, PokerTable
from tests.db import ledger_sums
from tests.poker.tables import make_player, make_table
from tests.ws_auth import ws_ticket

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
CARD = re.compile(r'"([2-9TJQKA][shdc])"')


class Seat:
    def __init__(self, base: str, token: str, table_id: int, seat: int) -> None:
        self.base, self.token, self.table_id, self.seat = base, token, table_id, seat
        self.http = httpx.AsyncClient(base_url=base, headers={"Authorization": f"Token {token}"}, timeout=10)
        self.texts: list[str] = []
        self.hand_id: str | None = None
        self.done = False
        self.acted = 0

    async def post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        headers = {"Idempotency-Key": uuid.uuid4().hex}
        return await self.http.post(f"/api/poker/tables/{self.table_id}/{path}", json=body, headers=headers)

    async def play(self) -> None:
        url = (
            self.base.replace("http://", "ws://")
            + f"/ws/poker/{self.table_id}/?ticket={ws_ticket(self.base, self.token)}"
        )
        async with websockets.connect(url, open_timeout=20, origin=Origin(self.base)) as ws:
            while not self.done:
                text = str(await asyncio.wait_for(ws.recv(), timeout=60))
                message = json.loads(text)
                if message["type"] in ("delta", "private"):
                    self.hand_id = self.hand_id or message["hand_id"]
                    if message["hand_id"] != self.hand_id:
                        continue  # a later hand: this test plays one
                    self.texts.append(text)
                    event = message["event"]
                    if event["type"] == "poker.hand_ended":
                        self.done = True
                    elif event["type"] == "poker_hand.turn" and event["seat"] == self.seat:
                        await self.act(ws)
                elif message["type"] == "error":
                    raise AssertionError(message)

    async def act(self, ws: Any) -> None:
        view = (await self.http.get(f"/api/poker/tables/{self.table_id}/")).json()
        legal = view["hand"]["legal"]
        action = "check" if legal["can_check"] else "call"
        await ws.send(json.dumps({"type": "act", "action": action, "idempotency_key": uuid.uuid4().hex}))
        self.acted += 1


async def play(base: str, table: PokerTable, tokens: list[str]) -> list[Seat]:
    seats = [Seat(base, token, table.pk, n) for n, token in enumerate(tokens, start=1)]
    tasks = [asyncio.ensure_future(s.play()) for s in seats]
    await asyncio.sleep(0.5)  # connected before anyone sits: every event of the hand is seen
    for seat in seats:
        response = await seat.post("sit/", {"seat": seat.seat, "buy_in": 1000})
        assert response.status_code == 201, response.text
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=120)
    for seat in seats:
        await seat.http.aclose()
    return seats


def test_three_players_play_a_hand_from_the_outside(asgi_server, celery_worker_process) -> None:
    table = make_table(turn_seconds=15, between_hands_seconds=1)
    tokens = []
    for _ in range(3):
        player = make_player()
        tokens.append(issue_token(user=get_user_model().objects.get(pk=player)))
    seats = asyncio.run(play(asgi_server, table, tokens))
    PokerTable.objects.filter(pk=table.pk).update(is_open=False)
    hand = PokerHand.objects.get(hand_id=seats[0].hand_id)
    assert hand.status == "complete"
    assert sum(s.acted for s in seats) >= 3
    # Each player's own cards reached them privately; nobody saw another's before the showdown.
    own: dict[int, set[str]] = {}
    for seat in seats:
        private = [json.loads(t) for t in seat.texts if json.loads(t)["type"] == "private"]
        assert len(private) == 1
        own[seat.seat] = set(private[0]["event"]["cards"])
    for seat in seats:
        board_or_shown: set[str] = set()
        for text in seat.texts:
            event = json.loads(text)["event"]
            if event["type"] == "poker_hand.button_drawn":
                continue  # drawn from a deck of its own: the same cards may be dealt again
            if event["type"] == "poker.board_dealt":
                board_or_shown |= set(event["cards"])
            if event["type"] == "poker.hand_shown":
                board_or_shown |= set(event["cards"])
            others = set().union(*(cards for n, cards in own.items() if n != seat.seat))
            assert not (set(CARD.findall(text)) & others - board_or_shown), (seat.seat, text)
    assert ledger_sums() == {"EUR": 0}
