"""End to end, from the outside: a real uvicorn process (REST + websockets), a real
Celery worker dealing, PostgreSQL and Redis. Several players play complete rounds
of each game through the public API only, and the dealer's face-down cards never
reach a player before they are revealed (RULES.md; issue 6)."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import httpx
import pytest
import websockets
from django.contrib.auth import get_user_model
from websockets.typing import Origin

from casino.auth import issue_token
from games.house.models import HouseTable
from ledger.services import deposit, player_accounts
from tests.house.live.conftest import fast_table
from tests.ws_auth import token_user, ws_ticket

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
FUNDS = 1_000_000
SPOTS = {
    "uth": {"ante": 100, "best_five": 100},
    "casino_holdem": {"ante": 100, "bonus": 100},
    "xtreme": {"ante": 100},
}
DEALER_REVEAL = "house_round.cards_revealed"


def funded_player(name: str) -> str:
    user = get_user_model().objects.create_user(username=name, password=f"{name}-pw-123456")
    deposit(
        wallet=player_accounts(player_id=user.pk, currency="EUR").wallet,
        amount=FUNDS,
        currency="EUR",
        external_reference=f"e2e-{name}",
        idempotency_key=f"e2e-dep-{name}",
        actor="test",
    )
    return issue_token(user=user)


class Player:
    """One player: REST with the token, a websocket on the table, every message kept."""

    def __init__(self, base: str, token: str, table_id: int, *, decides: bool) -> None:
        self.base, self.token, self.table_id, self.decides = base, token, table_id, decides
        self.http = httpx.AsyncClient(base_url=base, headers={"Authorization": f"Token {token}"}, timeout=10)
        self.messages: list[dict[str, Any]] = []
        self.texts: list[str] = []
        self.bet_round: str | None = None
        self.settled: dict[str, Any] | None = None
        self.decisions: list[str] = []
        self.last_seq = 0

    async def post(self, path: str, body: dict[str, Any] | None = None) -> httpx.Response:
        headers = {"Idempotency-Key": uuid.uuid4().hex}
        return await self.http.post(f"/api/tables/{self.table_id}/{path}", json=body or {}, headers=headers)

    async def play_one_round(self, game: str) -> None:
        assert (await self.http.post(f"/api/tables/{self.table_id}/join/")).status_code == 201
        ws_url = (
            self.base.replace("http://", "ws://")
            + f"/ws/tables/{self.table_id}/?ticket={ws_ticket(self.base, self.token)}"
        )
        async with websockets.connect(ws_url, open_timeout=20, origin=Origin(self.base)) as ws:
            while self.settled is None:
                text = await asyncio.wait_for(ws.recv(), timeout=60)
                message = json.loads(text)
                self.texts.append(str(text))
                self.messages.append(message)
                await self.react(ws, message, game)

    async def react(self, ws: Any, message: dict[str, Any], game: str) -> None:
        kind, event = message["type"], message.get("event")
        if kind in ("delta", "snapshot"):
            if kind == "delta" and self.last_seq and message["seq"] != self.last_seq + 1:
                await ws.send(json.dumps({"type": "snapshot"}))  # a gap: ask for a snapshot
            self.last_seq = message["seq"]
        round_id = None
        if kind == "snapshot" and message["table"]["table"]["phase"] == "betting":
            round_id = message["table"]["round"]["round_id"]
        elif kind == "delta" and event == "house_round.opened":
            round_id = message["round_id"]
        if round_id and self.bet_round is None:
            for spot, amount in SPOTS[game].items():
                response = await self.post("bets/chip/", {"spot": spot, "amount": amount})
                if response.status_code != 200:
                    assert response.json()["error"]["code"] == "betting_closed", response.text
                    return  # too late for this round: play the next one
            self.bet_round = round_id
        if kind != "private" or message.get("round_id") != self.bet_round:
            return
        if event == "decision.offered" and self.decides:
            option = message["data"]["options"][0]
            response = await self.post("decision/", {"option": option})
            assert response.status_code == 200, response.text
            self.decisions.append(option)
        elif event == "house_player.settled":
            self.settled = message


async def play(base: str, table: HouseTable, tokens: list[str]) -> list[Player]:
    players = [Player(base, token, table.pk, decides=i % 2 == 0) for i, token in enumerate(tokens)]
    try:
        await asyncio.wait_for(asyncio.gather(*(p.play_one_round(table.game) for p in players)), timeout=120)
    finally:
        for p in players:
            await p.http.aclose()
    return players


def dealer_cards_before_reveal(player: Player, dealer_cards: list[str]) -> list[str]:
    """Every websocket text received before the dealer's reveal that names a dealer card."""
    leaks: list[str] = []
    for text, message in zip(player.texts, player.messages, strict=True):
        reveal = message.get("type") == "delta" and message.get("event") == DEALER_REVEAL
        if reveal and any(c.get("to") == "dealer" for c in message["data"].get("cards", [])):
            break
        leaks.extend(f"{card} in {text[:200]}" for card in dealer_cards if f'"{card}"' in text)
    return leaks


@pytest.mark.parametrize("game", ["uth", "casino_holdem", "xtreme"])
def test_players_play_complete_rounds_from_the_outside(game, asgi_server, celery_worker_process) -> None:
    from games.house.services import dealer

    table = fast_table(game, betting_seconds=4, warning_seconds=1, decision_seconds=2)
    tokens = [funded_player(f"{game}-p{i}") for i in range(3)]
    dealer.start(table_id=table.pk)
    players = asyncio.run(play(asgi_server, table, tokens))
    with httpx.Client(base_url=asgi_server, timeout=10) as client:
        for player in players:
            auth = {"Authorization": f"Token {player.token}"}
            settled = player.settled
            assert settled is not None
            assert settled["round_id"] == player.bet_round
            history = client.get("/api/history/", headers=auth).json()
            row = next(r for r in history["results"] if r["game_number"] == player.bet_round)
            assert row["staked"] >= sum(SPOTS[game].values())
            recall = client.get(f"/api/history/games/{row['game_number']}/", headers=auth)
            assert recall.status_code == 200, recall.text
            recall_body = recall.json()
            assert recall_body["player"]["net"] == row["net"]
            assert {w["wager"] for w in recall_body["player"]["wagers"]} >= set(SPOTS[game])
            assert len(recall_body["pay_tables"]) >= 1
            wallet = client.get("/api/wallet/", headers=auth).json()
            # Only this round was played: the wallet moved by exactly its net.
            assert wallet["balance"] == FUNDS + row["net"]
            assert wallet["in_play"] == 0
            # Private deltas carry the wallet balance as the relay sent them (a
            # bet's may already include the settlement), the result's the settled one.
            bets = [m for m in player.messages if m.get("event") == "house_bet.placed"]
            assert bets
            assert all(m["type"] == "private" and m["currency"] == "EUR" for m in bets)
            assert all(m["balance"] < FUNDS or m["balance"] == wallet["balance"] for m in bets)
            assert settled["balance"] == wallet["balance"]
            dealer_cards = [c for c in recall_body["cards"]["dealer"] if c]
            assert len(dealer_cards) == 2
            assert dealer_cards_before_reveal(player, dealer_cards) == []
            snapshot = player.messages[0]
            assert snapshot["type"] == "snapshot"
            # The table's sequence: the snapshot's, then every delta's, one by one.
            seqs = [m["seq"] for m in player.messages if m["type"] in ("snapshot", "delta")]
            assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
        # The players who decided took offered options; the others took the timeout default.
        assert any(p.decisions for p in players)


def test_notices_chat_and_snapshots_over_the_websocket(asgi_server) -> None:
    """``player.notice`` sent to group ``player-<id>`` from another process reaches
    that player's socket; chat posted over the socket reaches the table (not those
    hiding chat); a client may ask for a snapshot at any time."""
    from channels.layers import get_channel_layer

    table = fast_table("uth", betting_seconds=60)
    alice_token, bob_token = funded_player("ws-alice"), funded_player("ws-bob")
    alice = token_user(alice_token)
    bob = token_user(bob_token)
    from casino.models import PlayerProfile

    PlayerProfile.objects.update_or_create(user=bob, defaults={"hide_chat": True})

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        async with httpx.AsyncClient(base_url=asgi_server) as http:
            for token in (alice_token, bob_token):
                joined = await http.post(f"/api/tables/{table.pk}/join/", headers={"Authorization": f"Token {token}"})
                assert joined.status_code == 201
        url = asgi_server.replace("http://", "ws://") + f"/ws/tables/{table.pk}/?ticket="
        origin = Origin(asgi_server)
        async with (
            websockets.connect(url + ws_ticket(asgi_server, alice_token), origin=origin) as a,
            websockets.connect(url + ws_ticket(asgi_server, bob_token), origin=origin) as b,
        ):
            assert json.loads(await a.recv())["type"] == "snapshot"
            assert json.loads(await b.recv())["type"] == "snapshot"
            layer = get_channel_layer()
            assert layer is not None
            await layer.group_send(f"player-{alice.pk}", {"type": "player.notice", "kind": "reality_check"})
            await a.send(json.dumps({"type": "chat", "text": "good luck"}))
            await a.send(json.dumps({"type": "snapshot"}))
            await b.send(json.dumps({"type": "ping", "nonce": "n1"}))
            got_a = [json.loads(await asyncio.wait_for(a.recv(), 10)) for _ in range(3)]
            got_b = [json.loads(await asyncio.wait_for(b.recv(), 10))]
            return got_a, got_b

    got_a, got_b = asyncio.run(scenario())
    kinds = {m["type"]: m for m in got_a}
    assert kinds["notice"]["kind"] == "reality_check"
    assert kinds["chat"]["text"] == "good luck"
    assert kinds["chat"]["player"] == "ws-alice"
    assert kinds["snapshot"]["table"]["me"] is None or kinds["snapshot"]["table"]["me"]["player_id"] == alice.pk
    # Bob hides chat: the next thing he receives is his pong, not Alice's line.
    assert got_b == [{"type": "pong", "nonce": "n1"}]


def test_a_refused_websocket_closes_with_4401_or_4404(asgi_server) -> None:
    """docs/websocket.md: no credentials (or an API token in the URL) close with 4401, an unknown table with
    4404, on house and poker tables alike (the close code reaches the client)."""
    token = funded_player("ws-carol")
    table = fast_table("uth", betting_seconds=60)
    base = asgi_server.replace("http://", "ws://")

    async def close_code(path: str) -> int | None:
        async with websockets.connect(base + path, origin=Origin(asgi_server), open_timeout=20) as ws:
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 10)
        assert closed.value.rcvd is not None
        return closed.value.rcvd.code

    async def scenario() -> list[int | None]:
        paths = [
            f"/ws/tables/{table.pk}/",
            f"/ws/tables/{table.pk}/?ticket=not-a-ticket",
            f"/ws/tables/{table.pk}/?token=" + token,  # an API token in the URL is not accepted
            f"/ws/tables/999999/?ticket={ws_ticket(asgi_server, token)}",
            "/ws/poker/1/",
            f"/ws/poker/999999/?ticket={ws_ticket(asgi_server, token)}",
        ]
        return [await close_code(path) for path in paths]

    assert asyncio.run(scenario()) == [4401, 4401, 4401, 4404, 4401, 4404]


def test_the_snapshot_is_the_rest_table_view_with_the_traffic_light_by_the_server_clock(asgi_server) -> None:
    """docs/websocket.md: the snapshot's ``table`` is ``GET /api/tables/<id>/``,
    the traffic light and server time included (RULES.md: the server's clock)."""
    from django.utils import timezone

    from games.house.services import start_table

    token = funded_player("ws-dave")
    table = fast_table("uth", betting_seconds=60)
    start_table(table_id=table.pk, now=timezone.now())
    headers = {"Authorization": f"Token {token}"}

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        url = asgi_server.replace("http://", "ws://") + f"/ws/tables/{table.pk}/?ticket={ws_ticket(asgi_server, token)}"
        async with websockets.connect(url, origin=Origin(asgi_server)) as ws:
            snapshot = json.loads(await asyncio.wait_for(ws.recv(), 10))
        async with httpx.AsyncClient(base_url=asgi_server, headers=headers) as http:
            rest = (await http.get(f"/api/tables/{table.pk}/")).json()
        return snapshot, rest

    snapshot, rest = asyncio.run(scenario())
    assert snapshot["type"] == "snapshot"
    assert snapshot["table"]["traffic_light"] == rest["traffic_light"] == "green"  # 60 s window, 1 s warning
    assert {**snapshot["table"], "server_time": None} == {**rest, "server_time": None}


def closing(service: Any, **kwargs: Any) -> Any:
    """Run a service on a worker thread and close that thread's database connection."""
    from django.db import connection

    try:
        return service(**kwargs)
    finally:
        connection.close()


def test_players_are_told_over_the_websocket_when_a_round_is_paused_and_voided(asgi_server) -> None:
    """Issue 6, malfunction: the operator's pause reaches every watcher with its
    reason; the void reaches them too, and each player with a wager gets their
    own void with the stake back in the wallet balance."""
    from django.utils import timezone

    from games.house.services import pause_round, place_chip, start_table, void_round

    token = funded_player("ws-erin")
    erin = token_user(token)
    table = fast_table("uth", betting_seconds=60)
    tick = start_table(table_id=table.pk, now=timezone.now())
    url = asgi_server.replace("http://", "ws://") + f"/ws/tables/{table.pk}/?ticket={ws_ticket(asgi_server, token)}"

    async def next_message(ws: Any, kind: str, event: str) -> dict[str, Any]:
        while True:
            message = json.loads(await asyncio.wait_for(ws.recv(), 10))
            if message["type"] == kind and message.get("event") == event:
                return dict(message)

    async def scenario() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with httpx.AsyncClient(base_url=asgi_server, headers={"Authorization": f"Token {token}"}) as http:
            assert (await http.post(f"/api/tables/{table.pk}/join/")).status_code == 201
        async with websockets.connect(url, origin=Origin(asgi_server)) as ws:
            assert json.loads(await ws.recv())["type"] == "snapshot"
            control = {"table_id": table.pk, "actor": "operator:1", "reason": "card reader fault"}
            await asyncio.to_thread(
                closing, place_chip, table_id=table.pk, player_id=erin.pk, spot="ante", amount=300,
                idempotency_key="erin-ante", now=timezone.now(),
            )  # fmt: skip
            await asyncio.to_thread(closing, pause_round, **control, now=timezone.now())
            paused = await next_message(ws, "delta", "house_round.paused")
            await asyncio.to_thread(closing, void_round, **control, now=timezone.now())
            voided = await next_message(ws, "delta", "house_round.voided")
            own = await next_message(ws, "private", "house_player.voided")
            return paused, voided, own

    paused, voided, own = asyncio.run(scenario())
    assert paused["round_id"] == voided["round_id"] == own["round_id"] == tick.round_id
    assert paused["data"]["reason"] == voided["data"]["reason"] == "card reader fault"
    assert own["balance"] == FUNDS  # the Ante came back


def test_the_last_decision_over_rest_moves_the_dealer_on_at_once(celery_worker_process) -> None:
    """Issue 6: early advance when every player has decided. The only player
    calls 4x preflop through the REST API; the worker deals the rest of the round
    and settles it at once, not when the 60 s decision window would end."""
    from django.utils import timezone
    from rest_framework.test import APIClient

    from games.house.models import PlayerRound
    from games.house.services import advance_table, place_chip, start_table
    from tests.house.live.conftest import wait_for

    table = fast_table("uth", betting_seconds=60, decision_seconds=60)
    token = funded_player("rest-frank")
    player = token_user(token).pk
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.post(f"/api/tables/{table.pk}/join/").status_code == 201
    tick = start_table(table_id=table.pk, now=timezone.now())
    place_chip(table_id=table.pk, player_id=player, spot="ante", amount=100, idempotency_key="frank-ante",
               now=timezone.now())  # fmt: skip
    assert tick.deadline is not None
    dealt = advance_table(table_id=table.pk, expected_seq=tick.phase_seq, now=tick.deadline)
    assert dealt is not None
    assert dealt.phase == "preflop"
    assert dealt.deadline is not None
    decided = client.post(
        f"/api/tables/{table.pk}/decision/", {"option": "call4x"}, format="json", HTTP_IDEMPOTENCY_KEY="frank-call"
    )
    assert decided.status_code == 200, decided.content
    assert decided.json()["all_decided"] is True
    row = wait_for(
        lambda: PlayerRound.objects.filter(table=table, player_id=player, status="settled").first(),
        timeout=20,
        what="the round settled by the worker right after the last decision",
    )
    assert row.settled_at is not None
    assert row.settled_at < dealt.deadline  # long before the decision window's end
