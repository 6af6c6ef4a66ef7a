"""``act`` over the poker websocket (issue 21, part 3), against a real uvicorn
process on PostgreSQL: answered ``ack`` with exactly the REST act answer body,
or ``error`` with the REST code and no change; ``id`` is the REST
``Idempotency-Key`` (the older ``idempotency_key`` field is still read)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from websockets.sync.client import ClientConnection, connect
from websockets.typing import Origin

from casino.auth import issue_token
from games.poker.models import PokerTable
from tests.db import ledger_sums, rows
from tests.poker.tables import CHANGED_BY_ACT, advance, make_player, make_table, sit
from tests.poker.test_tables import AA_VS_KK
from tests.ws_auth import ws_ticket

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


class Player:
    def __init__(self, base: str, player: int, table_id: int) -> None:
        self.base, self.player, self.table_id = base, player, table_id
        self.token = issue_token(user=get_user_model().objects.get(pk=player))
        self.http = httpx.Client(base_url=base, headers={"Authorization": f"Token {self.token}"}, timeout=20)

    @contextmanager
    def socket(self) -> Iterator[ClientConnection]:
        url = (
            self.base.replace("http://", "ws://")
            + f"/ws/poker/{self.table_id}/?ticket={ws_ticket(self.base, self.token)}"
        )
        with connect(url, origin=Origin(self.base), open_timeout=20) as ws:
            assert json.loads(ws.recv(timeout=20))["type"] == "snapshot"
            yield ws

    def ws_act(self, ws: ClientConnection, frame: dict[str, Any]) -> dict[str, Any]:
        ws.send(json.dumps({"type": "act", **frame}))
        while True:
            answer = json.loads(ws.recv(timeout=20))
            if answer["type"] in ("ack", "error"):
                assert answer["request"] == "act", answer
                return answer

    def rest_act(self, body: dict[str, Any], key: str | None = None) -> httpx.Response:
        headers = {"Idempotency-Key": key or uuid.uuid4().hex}
        return self.http.post(f"/api/poker/tables/{self.table_id}/act/", json=body, headers=headers)


def state() -> dict[str, Any]:
    return rows(*CHANGED_BY_ACT)


@pytest.fixture
def hand(asgi_server: str) -> tuple[PokerTable, list[Player]]:
    """A three-handed hand dealt (seat 1 to act first), turns of 60 s."""
    table = make_table(turn_seconds=60)
    players = [make_player() for _ in range(3)]
    for seat, player in enumerate(players, start=1):
        sit(table, player, seat, at=timezone.now())
    PokerTable.objects.filter(pk=table.pk).update(button_seat=3)
    table = advance(table, cards=AA_VS_KK)
    return table, [Player(asgi_server, player, table.pk) for player in players]


def test_act_over_the_websocket_acks_the_rest_answer_and_shares_its_key(hand) -> None:
    _table, (p1, p2, _p3) = hand
    with p1.socket() as ws1, p2.socket() as ws2:
        # Out of turn: refused with REST's code, nothing changed.
        before = state()
        refused = p2.ws_act(ws2, {"id": "early", "action": "call"})
        assert refused["id"] == "early"
        assert refused["code"] == p2.rest_act({"action": "call"}).json()["error"]["code"] == "poker_not_your_turn"
        assert state() == before
        ack = p1.ws_act(ws1, {"id": "raise-1", "action": "raise", "amount": 30})
        assert ack["type"] == "ack", ack
        assert ack["id"] == "raise-1"
        after = state()
        # The same key over REST is the same command: its first answer, nothing more.
        again = p1.rest_act({"action": "raise", "amount": 30}, key="raise-1")
        assert again.status_code == 200
        assert again.json() == ack["result"]
        assert p1.ws_act(ws1, {"id": "raise-1", "action": "raise", "amount": 30}) == ack
        assert state() == after
        reused = p1.ws_act(ws1, {"id": "raise-1", "action": "raise", "amount": 40})
        assert reused["code"] == "idempotency_key_reused"
        assert state() == after
        assert ack["result"]["action"] == "raise"
        assert ack["result"]["amount"] == 30
        assert ack["result"]["stack"] == 970
        # The older field name is still the key.
        legacy = p2.ws_act(ws2, {"idempotency_key": "call-1", "action": "call"})
        assert legacy["type"] == "ack", legacy
        assert legacy["id"] == "call-1"
        assert p2.rest_act({"action": "call"}, key="call-1").json() == legacy["result"]
        assert set(legacy["result"]) == set(ack["result"])
    assert ledger_sums() == {"EUR": 0}


def test_act_refusals_carry_the_rest_codes_and_change_nothing(hand) -> None:
    _table, (p1, _p2, _p3) = hand
    with p1.socket() as ws:
        before = state()
        for frame, code in (({"action": "call"}, "idempotency_key_required"),
                            ({"id": "", "action": "call"}, "idempotency_key_required"),
                            ({"id": "x", "action": "raise", "amount": "30"}, "invalid_amount"),
                            ({"id": "x", "action": "raise", "amount": -5}, "invalid_amount"),
                            ({"id": "x"}, "invalid_field"),
                            ({"id": "x", "action": "dance"}, None)):  # fmt: skip
            error = p1.ws_act(ws, frame)
            assert error["type"] == "error", error
            body = {k: v for k, v in frame.items() if k != "id"}
            by_rest = p1.http.post(f"/api/poker/tables/{p1.table_id}/act/", json=body,
                                   headers={"Idempotency-Key": frame["id"]} if frame.get("id") else {})  # fmt: skip
            assert by_rest.status_code >= 400
            assert error["code"] == by_rest.json()["error"]["code"]
            assert code is None or error["code"] == code
        assert state() == before
