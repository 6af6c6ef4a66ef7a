"""Player API behaviour not covered elsewhere (issue 6), through the real DRF stack
on PostgreSQL and, for the websocket, a real uvicorn server:

- account history (``GET /api/history/``): newest first over several settled
  rounds, ``limit``/``offset`` paging with ``count``, ``invalid_query``;
- ``betting_closed`` for UNDO, CLEAR, REPEAT and DOUBLE once the window closed
  by the server's clock (RULES.md "Bet placement", "Betting window");
- an ``Idempotency-Key`` replayed on a decision: the first result again, or
  ``idempotency_key_reused`` for another body (docs/live.md);
- ``decision_not_covered`` and ``insufficient_balance`` (RULES.md: a wager or
  decision the balance does not cover is refused, and not offered);
- joining a closed table: ``table_closed``;
- the websocket (docs/websocket.md): session-cookie authentication, an unknown
  message type (``unknown_message``), a non-JSON frame, and the chat rate limit
  (``chat_rate_limited`` after ``CASINO_CHAT_RATE`` lines).

Every refusal has its specific code and changes nothing (``refused``)."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import timedelta
from functools import partial
from typing import Any

import pytest
import websockets
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from websockets.typing import Origin

from games.house.models import HouseTable
from games.house.services import TableTick, advance_table, assign_seat, dealer, place_chip, start_table
from games.tables.chat import ChatMessage
from tests.house.live.conftest import fast_table
from tests.house.live.test_bad_input import betting, client_for, post, refused, state
from tests.house.live.test_e2e import funded_player
from tests.house.services.conftest import key, later, make_player, play_out, step, wallet
from tests.ws_auth import ws_ticket

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
__all__ = ["betting"]  # the fixture, imported from test_bad_input

# Long enough that a whole round started this far back has ended before now.
LONG_AGO = timedelta(minutes=30)


def chip(table: HouseTable, player: int, tick: TableTick, amount: int = 100, spot: str = "ante") -> None:
    """A chip placed through the service one second before the window closes."""
    place_chip(table_id=table.pk, player_id=player, spot=spot, amount=amount, idempotency_key=key(), now=later(tick))


def to_next_phase(table: HouseTable) -> TableTick:
    """Advance the table at its current deadline (the dealer's step)."""
    table.refresh_from_db()
    assert table.deadline is not None
    tick = advance_table(table_id=table.pk, expected_seq=table.phase_seq, now=table.deadline)
    assert tick is not None
    return tick


# --- account history ----------------------------------------------------------------------


def test_history_is_newest_first_paged_by_limit_and_offset_with_a_count() -> None:
    table = fast_table("uth", betting_seconds=60)
    player = make_player(table, funds=100_000)
    other = make_player(table, funds=100_000)
    client = client_for(player)
    tick = start_table(table_id=table.pk, now=timezone.now() - LONG_AGO)
    played: list[tuple[str, int]] = []  # (game number, ante), in the order played
    sat_out = ""
    for ante in (100, 200, None, 300):
        if ante is None:
            chip(table, other, tick)  # a round the player sat out: not in their history
            sat_out = tick.game_number
        else:
            chip(table, player, tick, ante)
            played.append((tick.game_number, ante))
        tick = step(table, play_out(table, tick))
        assert tick.phase == "betting"

    everything = client.get("/api/history/")
    assert everything.status_code == 200, everything.content
    page = everything.json()
    assert page["count"] == 3
    rows = page["results"]
    assert [r["game_number"] for r in rows] == [number for number, _ in reversed(played)]
    assert [r["bets"]["ante"] for r in rows] == [300, 200, 100]
    dates = [r["date"] for r in rows]
    assert dates == sorted(dates, reverse=True)
    assert len(set(dates)) == 3
    for row in rows:
        assert row["game"] == "uth"
        assert row["status"] == "settled"
        assert row["staked"] == 2 * row["bets"]["ante"]  # Ante Plus equals the Ante
        assert row["net"] == row["payout"] - row["staked"]

    first = client.get("/api/history/?limit=2").json()
    assert (first["count"], first["limit"], first["offset"]) == (3, 2, 0)
    assert first["results"] == rows[:2]
    second = client.get("/api/history/?limit=2&offset=2").json()
    assert (second["count"], second["limit"], second["offset"]) == (3, 2, 2)
    assert second["results"] == rows[2:]
    beyond = client.get("/api/history/?limit=2&offset=4").json()
    assert beyond["count"] == 3
    assert beyond["results"] == []
    # The other player's history has only their own round.
    theirs = client_for(other).get("/api/history/").json()
    assert theirs["count"] == 1
    assert [r["game_number"] for r in theirs["results"]] == [sat_out]


def test_history_refuses_an_invalid_query() -> None:
    player = make_player(funds=1_000)
    client = client_for(player)
    for query in ("limit=abc", "limit=1.5", "limit=-1", "limit=201", "offset=x", "offset=-5", "limit="):
        refused(partial(client.get, f"/api/history/?{query}"), 400, "invalid_query")
    assert client.get("/api/history/?limit=200&offset=0").status_code == 200


# --- the betting window, by the server's clock ----------------------------------------------


def test_undo_clear_repeat_and_double_are_refused_once_betting_closed() -> None:
    """RULES.md: UNDO, CLEAR, REPEAT and DOUBLE only while the window is open, and the
    server's clock decides: refused once the deadline passed, even before the dealer
    closed the round, and after it."""
    table = fast_table("uth", betting_seconds=60)
    player = make_player(table)
    client = client_for(player)
    tick = start_table(table_id=table.pk, now=timezone.now() - LONG_AGO)
    chip(table, player, tick)  # a previous round: REPEAT would have something to place
    tick = step(table, play_out(table, tick))
    assert tick.phase == "betting"
    chip(table, player, tick)  # chips to undo, clear and double
    chip(table, player, tick, spot="best_five")
    assert tick.deadline is not None
    assert tick.deadline < timezone.now()
    view = client.get(f"/api/tables/{table.pk}/").json()
    assert view["table"]["phase"] == "betting"  # the dealer has not closed it yet
    assert view["traffic_light"] == "red"
    assert view["me"]["bets"]["ante"] == 100

    commands = ("undo", "clear", "repeat", "double")
    for command in commands:
        refused(partial(post, client, f"/api/tables/{table.pk}/bets/{command}/"), 409, "betting_closed")
    assert to_next_phase(table).phase == "preflop"
    for command in commands:
        refused(partial(post, client, f"/api/tables/{table.pk}/bets/{command}/"), 409, "betting_closed")


# --- idempotency on decisions ------------------------------------------------------------------


def test_a_replayed_decision_key_returns_the_first_result_or_is_refused_for_another_body(betting) -> None:
    table, player, client = betting
    tick = start_table(table_id=table.pk, now=timezone.now())
    chip(table, player, tick)
    undecided = make_player(table)  # keeps the window open after the player decides
    chip(table, undecided, tick)
    assert to_next_phase(table).phase == "preflop"
    decision = f"/api/tables/{table.pk}/decision/"

    first = post(client, decision, {"option": "call3x"}, idem="decide-once")
    assert first.status_code == 200, first.content
    assert first.json()["option"] == "call3x"
    assert first.json()["amount"] == 300
    before = state()
    again = post(client, decision, {"option": "call3x"}, idem="decide-once")
    assert again.status_code == 200, again.content
    assert again.json() == first.json()
    assert state() == before
    refused(lambda: post(client, decision, {"option": "check"}, idem="decide-once"), 409, "idempotency_key_reused")
    refused(lambda: post(client, decision, {"option": "call4x"}, idem="decide-once"), 409, "idempotency_key_reused")
    # Keys are the player's own: another player's identical key is a new command.
    other = post(client_for(undecided), decision, {"option": "check"}, idem="decide-once")
    assert other.status_code == 200, other.content
    assert other.json()["option"] == "check"
    # A late retry, after the dealer moved on, still gets the first result and changes nothing.
    to_next_phase(table)
    before = state()
    late = post(client, decision, {"option": "call3x"}, idem="decide-once")
    assert late.status_code == 200, late.content
    assert late.json() == first.json()
    assert state() == before


# --- what the balance does not cover ------------------------------------------------------------


def test_a_decision_the_balance_does_not_cover_is_not_offered_and_is_refused() -> None:
    """RULES.md: a decision whose amount the balance does not cover is not offered
    and is refused (``decision_not_covered``). 300 held: Ante 100 + Ante Plus 100
    leave 100, which covers CALL 1x only."""
    table = fast_table("uth", betting_seconds=60)
    player = make_player(table, funds=300)
    undecided = make_player(table)
    client = client_for(player)
    tick = start_table(table_id=table.pk, now=timezone.now())
    chip(table, player, tick)
    chip(table, undecided, tick)
    assert wallet(player) == 100
    decision = f"/api/tables/{table.pk}/decision/"
    me = f"/api/tables/{table.pk}/"

    assert to_next_phase(table).phase == "preflop"
    assert client.get(me).json()["me"]["options"] == ["check"]
    refused(lambda: post(client, decision, {"option": "call4x"}), 409, "decision_not_covered")
    refused(lambda: post(client, decision, {"option": "call3x"}), 409, "decision_not_covered")
    assert post(client, decision, {"option": "check"}).status_code == 200

    assert to_next_phase(table).phase == "flop"
    assert client.get(me).json()["me"]["options"] == ["check"]
    refused(lambda: post(client, decision, {"option": "call2x"}), 409, "decision_not_covered")
    assert post(client, decision, {"option": "check"}).status_code == 200

    assert to_next_phase(table).phase == "river"
    assert sorted(client.get(me).json()["me"]["options"]) == ["call1x", "fold"]
    covered = post(client, decision, {"option": "call1x"})
    assert covered.status_code == 200, covered.content
    assert wallet(player) == 0


def test_bets_the_balance_does_not_cover_are_refused_with_insufficient_balance() -> None:
    """RULES.md: the balance must cover a wager when placed; REPEAT is refused whole
    when it does not cover the previous bets; DOUBLE that cannot double even the
    first spot is refused."""
    table = fast_table("uth", betting_seconds=60)
    loser = make_player(table, funds=300)
    doubler = make_player(table, funds=300)
    tick = start_table(table_id=table.pk, now=timezone.now())
    chip(table, loser, tick)  # 200 held, then lost by the timeout fold
    tick = step(table, play_out(table, tick))
    assert tick.phase == "betting"
    assert wallet(loser) == 100
    loser_client = client_for(loser)
    bets = f"/api/tables/{table.pk}/bets/"
    # An Ante of 100 holds 200 with its Ante Plus.
    refused(lambda: post(loser_client, bets + "chip/", {"spot": "ante", "amount": 100}), 409, "insufficient_balance")
    refused(lambda: post(loser_client, bets + "repeat/"), 409, "insufficient_balance")

    doubler_client = client_for(doubler)
    placed = post(doubler_client, bets + "chip/", {"spot": "ante", "amount": 100})
    assert placed.status_code == 200, placed.content
    assert wallet(doubler) == 100
    refused(lambda: post(doubler_client, bets + "double/"), 409, "insufficient_balance")
    view = doubler_client.get(f"/api/tables/{table.pk}/").json()["me"]
    assert view["bets"]["ante"] == 100
    assert view["doubled"] is False


# --- seats ----------------------------------------------------------------------------------------


def test_joining_a_closed_table_is_refused() -> None:
    never_opened = fast_table("uth")
    HouseTable.objects.filter(pk=never_opened.pk).update(is_open=False)
    closing = fast_table("uth", betting_seconds=60)
    start_table(table_id=closing.pk, now=timezone.now())
    operator = get_user_model().objects.create_superuser(username=f"op-{uuid.uuid4().hex[:8]}", password="x")
    dealer.operator_close(table_id=closing.pk, operator=operator)  # its round plays on; no seats taken
    client = client_for(make_player(funds=1_000))
    refused(lambda: post(client, f"/api/tables/{never_opened.pk}/join/"), 409, "table_closed")
    refused(lambda: post(client, f"/api/tables/{closing.pk}/join/"), 409, "table_closed")


# --- the websocket -------------------------------------------------------------------------------


def ws_url(base: str, table_id: int, query: str = "") -> str:
    return base.replace("http://", "ws://") + f"/ws/tables/{table_id}/{query}"


async def receive(ws: Any, timeout: float = 10) -> dict[str, Any]:
    return dict(json.loads(await asyncio.wait_for(ws.recv(), timeout)))


async def until(ws: Any, kind: str, timeout: float = 10) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The next message of type ``kind`` and those received before it."""
    skipped: list[dict[str, Any]] = []
    while True:
        message = await receive(ws, timeout)
        if message["type"] == kind:
            return message, skipped
        skipped.append(message)


def test_the_websocket_authenticates_with_the_django_session_cookie(asgi_server) -> None:
    name = f"ws-session-{uuid.uuid4().hex[:6]}"
    funded_player(name)  # password f"{name}-pw-123456", funded
    user = get_user_model().objects.get(username=name)
    table = fast_table("uth", betting_seconds=60)
    assign_seat(table_id=table.pk, player_id=user.pk)
    start_table(table_id=table.pk, now=timezone.now())
    browser = Client()
    browser.force_login(user)  # a real session (django-axes refuses Client.login: it has no request to check)
    session = browser.cookies[settings.SESSION_COOKIE_NAME].value
    origin = Origin(asgi_server)

    async def scenario() -> tuple[dict[str, Any], dict[str, Any], int | None]:
        cookie = {"Cookie": f"{settings.SESSION_COOKIE_NAME}={session}"}
        async with websockets.connect(ws_url(asgi_server, table.pk), origin=origin, additional_headers=cookie) as ws:
            snapshot = await receive(ws)
            await ws.send(json.dumps({"type": "chat", "text": "by session"}))
            line, _ = await until(ws, "chat")
        forged = {"Cookie": f"{settings.SESSION_COOKIE_NAME}=not-a-session"}
        async with websockets.connect(ws_url(asgi_server, table.pk), origin=origin, additional_headers=forged) as ws:
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await receive(ws)
        return snapshot, line, closed.value.rcvd.code if closed.value.rcvd else None

    snapshot, line, forged_code = asyncio.run(scenario())
    assert snapshot["type"] == "snapshot"
    assert snapshot["table"]["me"]["player_id"] == user.pk
    assert snapshot["table"]["me"]["balance"] == wallet(user.pk)
    assert line["player"] == name
    assert line["text"] == "by session"
    assert forged_code == 4401


def test_the_websocket_answers_unknown_and_malformed_messages_with_an_error(asgi_server) -> None:
    """docs/websocket.md: JSON text frames only; a refused client message gets an
    ``error`` (``unknown_message`` for an unknown type) and the socket stays usable."""
    token = funded_player(f"ws-odd-{uuid.uuid4().hex[:6]}")
    table = fast_table("uth", betting_seconds=60)

    async def scenario() -> list[dict[str, Any]]:
        url = ws_url(asgi_server, table.pk, f"?ticket={ws_ticket(asgi_server, token)}")
        async with websockets.connect(url, origin=Origin(asgi_server)) as ws:
            assert (await receive(ws))["type"] == "snapshot"
            answers = []
            for frame in (json.dumps({"type": "dance"}), json.dumps({"text": "no type"}), "{not json"):
                await ws.send(frame)
                answers.append(await receive(ws))
            await ws.send(json.dumps({"type": "ping", "nonce": "still-here"}))
            answers.append(await receive(ws))
            return answers

    unknown, untyped, malformed, pong = asyncio.run(scenario())
    assert unknown["type"] == "error"
    assert unknown["code"] == "unknown_message"
    assert unknown["message"]
    assert untyped["type"] == "error"
    assert untyped["code"] == "unknown_message"
    assert malformed["type"] == "error"
    assert malformed["code"] == "malformed_message"
    assert malformed["message"]
    assert pong == {"type": "pong", "nonce": "still-here"}


def test_an_empty_or_binary_frame_is_refused_not_a_crash(asgi_server) -> None:
    """docs/websocket.md: JSON text frames only. An empty text frame or a binary
    frame is bad input like ``{not json``: it gets a ``malformed_message`` error
    and the socket stays usable, never an abnormal drop or an internal error."""
    token = funded_player(f"ws-bin-{uuid.uuid4().hex[:6]}")
    table = fast_table("uth", betting_seconds=60)

    async def answer(frame: str | bytes) -> str:
        url = ws_url(asgi_server, table.pk, f"?ticket={ws_ticket(asgi_server, token)}")
        async with websockets.connect(url, origin=Origin(asgi_server), close_timeout=1) as ws:
            assert (await receive(ws))["type"] == "snapshot"
            await ws.send(frame)
            try:
                message = await receive(ws, 5)
            except websockets.ConnectionClosed as closed:
                code = closed.rcvd.code if closed.rcvd else None
                return f"closed {code}"
            await ws.send(json.dumps({"type": "ping", "nonce": "alive"}))
            pong = await receive(ws, 5)
            usable = pong == {"type": "pong", "nonce": "alive"}
            return message["code"] if message["type"] == "error" and usable else f"odd {message}"

    async def scenario() -> dict[str, str]:
        return {"empty": await answer(""), "binary": await answer(b"\x00\x01binary")}

    outcomes = asyncio.run(scenario())
    assert outcomes == {"empty": "malformed_message", "binary": "malformed_message"}


def test_bet_commands_on_an_unknown_table_are_table_not_found() -> None:
    """docs/live.md: a refused command reports ``table_not_found`` first (404),
    for every bet control and the decision alike."""
    client = client_for(make_player(funds=1_000))
    client.raise_request_exception = False  # a crash is a 500 to assert on, not an exception
    bodies: dict[str, Any] = {"chip": {"spot": "ante", "amount": 100}, "undo": {}, "clear": {}, "repeat": {},
                              "double": {}}  # fmt: skip
    for command, body in bodies.items():
        refused(partial(post, client, f"/api/tables/999999/bets/{command}/", body), 404, "table_not_found")
    refused(lambda: post(client, "/api/tables/999999/decision/", {"option": "check"}), 404, "table_not_found")


def test_websocket_chat_is_rate_limited(asgi_server) -> None:
    """``CASINO_CHAT_RATE`` lines per window (the server reads the same settings:
    it inherits this process's environment); the next line is an ``error``
    ``chat_rate_limited``, neither stored nor broadcast."""
    rate = settings.CASINO_CHAT_RATE
    name = f"ws-chatty-{uuid.uuid4().hex[:6]}"
    token = funded_player(name)
    listener_token = funded_player(f"ws-ear-{uuid.uuid4().hex[:6]}")
    table = fast_table("uth", betting_seconds=60)
    for t in (token, listener_token):
        assert client_for(_user_of(t)).post(f"/api/tables/{table.pk}/join/").status_code == 201

    async def scenario() -> tuple[list[dict[str, Any]], dict[str, Any], list[dict[str, Any]]]:
        origin = Origin(asgi_server)
        async with (
            websockets.connect(
                ws_url(asgi_server, table.pk, f"?ticket={ws_ticket(asgi_server, token)}"), origin=origin
            ) as ws,
            websockets.connect(
                ws_url(asgi_server, table.pk, f"?ticket={ws_ticket(asgi_server, listener_token)}"), origin=origin
            ) as ear,
        ):
            assert (await receive(ws))["type"] == "snapshot"
            assert (await receive(ear))["type"] == "snapshot"
            lines = []
            for n in range(rate):
                await ws.send(json.dumps({"type": "chat", "text": f"line {n}"}))
                line, _ = await until(ws, "chat")
                lines.append(line)
            await ws.send(json.dumps({"type": "chat", "text": "one too many"}))
            error, _ = await until(ws, "error")
            await ear.send(json.dumps({"type": "ping", "nonce": "end"}))
            _, heard = await until(ear, "pong")
            return lines, error, heard

    lines, error, heard = asyncio.run(scenario())
    assert [line["text"] for line in lines] == [f"line {n}" for n in range(rate)]
    assert error["code"] == "chat_rate_limited"
    assert error.get("request") == "chat"
    assert [m["text"] for m in heard if m["type"] == "chat"] == [f"line {n}" for n in range(rate)]
    assert list(ChatMessage.objects.filter(table_id=table.pk).order_by("id").values_list("text", flat=True)) == [
        f"line {n}" for n in range(rate)
    ]


def _user_of(token: str) -> int:
    from tests.ws_auth import token_user

    return int(token_user(token).pk)
