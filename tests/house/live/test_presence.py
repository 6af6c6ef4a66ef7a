"""Presence at a house table and seed 003's disconnection rule (issue #22), with
real websocket clients of a real uvicorn process on PostgreSQL and Redis:

- a player is present while they hold a websocket to the table, or for
  ``CASINO_PRESENCE_GRACE_SECONDS`` after their last REST call to it;
- at "No More Bets", the bets of a player who is not present are declined:
  the stake goes back to the wallet, they take no part in the round (not a
  participant, no decision, no settlement), and ``house_player.declined`` is
  in their game history; everyone present plays as before;
- a second connection of the same player to the same table closes the first
  with 4409, and the player stays present through the new one;
- a websocket lease is not forever: a server process killed with its sockets
  open stops holding its players present once the lease runs out."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from django.utils import timezone
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect
from websockets.typing import Origin

from casino.processes import free_port, uvicorn_command
from games.house.models import HouseTable, PlayerRound
from games.house.services import start_table
from games.tables.presence import HOUSE, TablePresence, is_present
from tests.conftest import _database_url_for_subprocess
from tests.db import ledger_sums
from tests.house.live.conftest import fast_table, make_player, wait_for
from tests.house.live.test_ws_commands import Client, to_phase
from tests.house.services.conftest import wallet
from tests.ws_auth import ws_ticket

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[3]
LIMITS = {"ante": {"min": 100, "max": 1_000}, "best_five": {"min": 100, "max": 1_000}}


def until_closed(ws: ClientConnection) -> int | None:
    """Read until the server closes the connection (a timeout raises); its close code."""
    try:
        while True:
            ws.recv(timeout=10)
    except ConnectionClosed:
        return ws.close_code


def history(client: Client, game_number: str) -> dict:
    answer = client.http.get(f"/api/history/games/{game_number}/")
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_a_player_who_drops_before_no_more_bets_is_declined_and_refunded(asgi_server: str) -> None:
    table = fast_table("uth", betting_seconds=60, decision_seconds=60, limits=LIMITS)
    stays, rest_only = (Client(asgi_server, make_player(table, funds=100_000), table.pk) for _ in range(2))
    drops = Client(asgi_server, make_player(None, funds=100_000), table.pk)  # takes a seat over the websocket
    tick = start_table(table_id=table.pk, now=timezone.now())
    with stays.socket() as kept:
        with drops.socket() as dropped:
            assert drops.ws(dropped, "join")["type"] == "ack"
            assert stays.ws(kept, "bet", {"spot": "ante", "amount": 200})["type"] == "ack"
            assert drops.ws(dropped, "bet", {"spot": "ante", "amount": 300})["type"] == "ack"
            assert drops.ws(dropped, "bet", {"spot": "best_five", "amount": 100})["type"] == "ack"
        # ``drops`` lost the connection before "No More Bets"; ``rest_only`` bets over REST
        # (no websocket): present for the grace after that call.
        assert rest_only.rest("bet", {"spot": "ante", "amount": 100}).status_code == 200
        assert wallet(drops.player) == 100_000 - 700  # the Ante Plus goes with the Ante
        wait_for(lambda: not is_present(family=HOUSE, table_id=table.pk, player_id=drops.player, at=timezone.now()),
                 timeout=10, what="the dropped socket's lease released")  # fmt: skip
        tick = to_phase(table.pk, "between")
    game = tick.round_id
    # Declined: every chip back, not a participant, nothing settled.
    assert wallet(drops.player) == 100_000
    mine = history(drops, game)
    declined = [e for e in mine["player"]["events"] if e["type"] == "house_player.declined"]
    assert len(declined) == 1
    assert declined[0]["data"]["returned"] == 700
    assert declined[0]["data"]["totals"] == {"ante": 300, "ante_plus": 300, "best_five": 100}
    assert declined[0]["data"]["reason"] == "absent"
    assert not [e for e in mine["player"]["events"] if e["type"] in ("house_player.settled", "house_decision.made")]
    closed = next(e for e in mine["round_events"] if e["type"] == "house_round.betting_closed")
    assert sorted(closed["data"]["participants"]) == sorted([stays.player, rest_only.player])
    settled = next(e for e in mine["round_events"] if e["type"] == "house_round.settled")
    assert settled["data"]["players"] == 2
    row = PlayerRound.objects.get(round__round_id=game, player_id=drops.player)
    assert (row.status, row.staked, row.net) == ("declined", 0, 0)
    listed = drops.http.get("/api/history/").json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    assert any(r["game_number"] == game and r["status"] == "declined" for r in rows)
    # Everyone present played as before: settled, with their stakes in the round.
    for client, stake in ((stays, 200), (rest_only, 100)):
        events = history(client, game)["player"]["events"]
        assert [e for e in events if e["type"] == "house_player.settled"], client.player
        assert PlayerRound.objects.get(round__round_id=game, player_id=client.player).staked == 2 * stake
    assert ledger_sums() == {"EUR": 0}


def test_rest_presence_lasts_the_grace_then_the_bets_are_declined(asgi_server: str, settings) -> None:
    settings.CASINO_PRESENCE_GRACE_SECONDS = 1
    table = fast_table("uth", betting_seconds=60, decision_seconds=60, limits=LIMITS)
    late = Client(asgi_server, make_player(table, funds=100_000), table.pk)
    start_table(table_id=table.pk, now=timezone.now())
    assert late.rest("bet", {"spot": "ante", "amount": 100}).status_code == 200
    assert is_present(family=HOUSE, table_id=table.pk, player_id=late.player, at=timezone.now())
    time.sleep(1.5)  # no websocket, no REST call for longer than the grace
    assert not is_present(family=HOUSE, table_id=table.pk, player_id=late.player, at=timezone.now())
    tick = to_phase(table.pk, "between")
    assert wallet(late.player) == 100_000
    events = history(late, tick.round_id)["player"]["events"]
    assert [e["type"] for e in events][-1] == "house_player.declined"
    assert ledger_sums() == {"EUR": 0}


def test_a_second_connection_to_the_same_table_closes_the_first(asgi_server: str) -> None:
    table = fast_table("uth", betting_seconds=60, limits=LIMITS)
    other = fast_table("uth", betting_seconds=60, limits=LIMITS)
    player = Client(asgi_server, make_player(table, funds=10_000), table.pk)
    elsewhere = Client(asgi_server, player.player, other.pk)
    with player.socket() as first, elsewhere.socket() as at_other_table:
        with player.socket() as second:
            until_closed(first)
            assert first.close_code == 4409
            # The newest stays open and holds the player present; another table is untouched.
            second.send(json.dumps({"type": "ping", "nonce": 1}))
            assert json.loads(second.recv(timeout=10))["type"] == "pong"
            at_other_table.send(json.dumps({"type": "ping", "nonce": 2}))
            assert json.loads(at_other_table.recv(timeout=10))["type"] == "pong"
            time.sleep(0.3)  # the first socket's close has run on the server
            assert is_present(family=HOUSE, table_id=table.pk, player_id=player.player, at=timezone.now())
        wait_for(lambda: not is_present(family=HOUSE, table_id=table.pk, player_id=player.player,
                                        at=timezone.now()), timeout=10, what="the lease released")  # fmt: skip


def test_a_killed_server_process_does_not_keep_its_players_present(asgi_server: str) -> None:
    """A server of its own with a 2 s lease, killed (SIGKILL) with a socket open."""
    table = fast_table("uth", betting_seconds=60, limits=LIMITS)
    player = make_player(table, funds=10_000)
    port = free_port()
    env = dict(os.environ, DATABASE_URL=_database_url_for_subprocess(), CASINO_PRESENCE_LEASE_SECONDS="2",
               PYTHONUNBUFFERED="1")  # fmt: skip
    log = open(settings.VAR_DIR / "test-presence-asgi.log", "wb")  # noqa: SIM115 (closed below)
    server = subprocess.Popen(uvicorn_command(host="127.0.0.1", port=port), cwd=ROOT, env=env, stdout=log,
                              stderr=subprocess.STDOUT)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _answers(base), timeout=60, what="the server")
        client = Client(base, player, table.pk)
        url = base.replace("http://", "ws://") + f"/ws/tables/{table.pk}/?ticket={ws_ticket(base, client.token)}"
        with connect(url, origin=Origin(base), open_timeout=20, close_timeout=1) as ws:
            assert json.loads(ws.recv(timeout=20))["type"] == "snapshot"
            time.sleep(3)  # longer than the lease: the open socket's lease is refreshed
            assert is_present(family=HOUSE, table_id=table.pk, player_id=player, at=timezone.now())
            server.send_signal(signal.SIGKILL)
            server.wait(timeout=20)
            row = TablePresence.objects.get(family=HOUSE, table_id=table.pk, player_id=player)
            assert row.socket_until is not None
            assert row.socket_until <= timezone.now() + timedelta(seconds=2)  # never more than one lease ahead
            wait_for(lambda: not is_present(family=HOUSE, table_id=table.pk, player_id=player, at=timezone.now()),
                     timeout=5, what="the lease of the killed process running out")  # fmt: skip
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        log.close()
    assert HouseTable.objects.filter(pk=table.pk).exists()


def _answers(base: str) -> bool:
    try:
        httpx.get(f"{base}/api/", timeout=2)
        return True
    except httpx.HTTPError:
        return False
