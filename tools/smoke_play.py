#!/usr/bin/env python3
"""Play one round at each demo table against a running server, from the outside.

Used by CI to prove the embedded default (``make run``) does not only start but
plays all three games: the demo player logs in, opens the websocket of ``UTH1``
(Ultimate Texas Hold'em), ``CHE1`` (Casino Hold'em) and ``XTR1`` (Xtreme
Hold'em) (``ws/tables/<id>/``, docs/websocket.md) and plays over it alone: a
``join`` command takes the seat; when a betting window opens a ``bet`` command
places the minimum Ante; each ``decision.offered`` private message is answered
by a ``decision`` command with the first option offered. Every command's
answer (``ack`` or ``error``, matched by its ``id``) is checked. The round is
played when the player's own ``house_player.settled`` message arrives, and the
account history must then show it settled. Meanwhile the two demo players (``demo`` and
``demo2``) sit down at the poker table ``NL1``, ask to sit out from the next hand
(so exactly one is dealt), check or call whenever the table view offers them the
turn, and stand up once that hand is complete; it must then be in their hand
history, complete, with a final stack. The four tables play at once.

Exits 0 and prints one JSON line per table, or exits 1 naming what did not
happen within the time limit.

    python tools/smoke_play.py http://127.0.0.1:8000 [--timeout 240]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import urllib.error
import urllib.request
import uuid
from typing import Any

import websockets
from websockets.typing import Origin

DEMO_USER = ("demo", "demo-player-password")
DEMO_OPPONENT = ("demo2", "demo2-player-password")
DEMO_TABLES = ("UTH1", "CHE1", "XTR1")
DEMO_POKER_TABLE = "NL1"
# A decision that arrives after its window closed (the timeout decided): not a failure.
WINDOW_GONE = ("no_decision_window", "wrong_phase", "already_decided")


class SmokeFailure(Exception):
    pass


def call(base: str, method: str, path: str, token: str | None = None, body: Any = None) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json", "Idempotency-Key": uuid.uuid4().hex}
    if token:
        headers["Authorization"] = f"Token {token}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


async def rest(base: str, method: str, path: str, token: str, body: Any = None) -> tuple[int, Any]:
    return await asyncio.to_thread(call, base, method, path, token, body)


def command(kind: str, **fields: Any) -> tuple[str, str]:
    """A command frame (docs/websocket.md, "Client to server") and its id."""
    client_id = uuid.uuid4().hex
    return client_id, json.dumps({"type": kind, "id": client_id, **fields})


async def play_table(base: str, token: str, table: dict[str, Any]) -> dict[str, Any]:
    """One round at ``table``, every command over its websocket; the settled history row."""
    table_id, code = table["id"], table["code"]
    minimum = table["limits"]["ante"]["min"]
    # One chip of the table's (issue 37): the smallest that reaches the Ante's minimum.
    ante = min((chip for chip in table.get("chips") or [] if chip >= minimum), default=minimum)
    status, answer = await rest(base, "POST", "/api/auth/ws-ticket/", token)  # single use: one per connection
    if status != 200:
        raise SmokeFailure(f"{code}: no websocket ticket: {status} {answer}")
    url = base.replace("http://", "ws://", 1) + f"/ws/tables/{table_id}/?ticket={answer['ticket']}"
    bet_round: str | None = None
    pending: dict[str, tuple[str, Any]] = {}  # command id -> (type, round or option)
    async with websockets.connect(url, origin=Origin(base), open_timeout=30) as ws:
        join_id, frame = command("join")
        pending[join_id] = ("join", None)
        await ws.send(frame)
        async for text in ws:
            message = json.loads(text)
            kind, event = message["type"], message.get("event")
            if kind in ("ack", "error"):
                sent, what = pending.pop(message.get("id", ""), (None, None))
                if sent is None:
                    raise SmokeFailure(f"{code}: an answer to no command: {message}")
                refused = message["code"] if kind == "error" else None
                if sent == "join" and refused not in (None, "already_seated"):
                    raise SmokeFailure(f"{code}: join refused: {message}")
                if sent == "bet":
                    if refused is None:
                        bet_round = what
                    elif refused != "betting_closed":  # too late: the next round
                        raise SmokeFailure(f"{code}: the Ante was refused: {message}")
                if sent == "decision" and refused is not None and refused not in WINDOW_GONE:
                    raise SmokeFailure(f"{code}: decision {what} refused: {message}")
                continue
            opened = None
            if kind == "snapshot" and message["table"].get("traffic_light") in ("green", "yellow"):
                opened = (message["table"].get("round") or {}).get("round_id")
            elif kind == "delta" and event == "house_round.opened":
                opened = message["round_id"]
            if opened and bet_round is None and ("bet", opened) not in pending.values():
                bet_id, frame = command("bet", spot="ante", amount=ante)
                pending[bet_id] = ("bet", opened)
                await ws.send(frame)
            if kind != "private" or bet_round is None or message.get("round_id") != bet_round:
                continue
            if event == "decision.offered":
                option = message["data"]["options"][0]
                decision_id, frame = command("decision", option=option)
                pending[decision_id] = ("decision", option)
                await ws.send(frame)
            elif event == "house_player.settled":
                break
    _status, history = await rest(base, "GET", "/api/history/?limit=20", token)
    # A house round's id is its game number (games.house.services.rounds).
    rows = [row for row in history.get("results", []) if row["game_number"] == bet_round]
    if not rows or rows[0]["status"] != "settled":
        raise SmokeFailure(f"{code}: round {bet_round} is not settled in the history: {rows}")
    return {"table": code, **rows[0]}


async def poker_seat(base: str, token: str, table: dict[str, Any]) -> None:
    """Sit down at the first free seat with the minimum buy-in (already seated: fine)."""
    table_id = table["id"]
    status, view = await rest(base, "GET", f"/api/poker/tables/{table_id}/", token)
    if any(seat["you"] for seat in view["seats"]):
        return
    taken = {seat["seat"] for seat in view["seats"]}
    free = next(n for n in range(1, table["max_seats"] + 1) if n not in taken)
    body = {"seat": free, "buy_in": table["buy_in_min"]}
    status, answer = await rest(base, "POST", f"/api/poker/tables/{table_id}/sit/", token, body)
    if status not in (200, 201):
        raise SmokeFailure(f"{DEMO_POKER_TABLE}: sit down refused: {status} {answer}")


async def play_poker(base: str, tokens: list[str], table: dict[str, Any]) -> dict[str, Any]:
    """One hand of the ring game between the two demo players; their history row."""
    table_id = table["id"]
    for token in tokens:
        await poker_seat(base, token, table)
    dealt: str | None = None
    while True:
        views = [(await rest(base, "GET", f"/api/poker/tables/{table_id}/", token))[1] for token in tokens]
        hand = views[0]["hand"]
        if dealt is None and hand is not None and hand["status"] == "playing":
            dealt = hand["hand_id"]
            for token in tokens:  # from the next hand on: this one is the only one dealt
                await rest(base, "POST", f"/api/poker/tables/{table_id}/sit-out/", token)
        if dealt is not None and (hand is None or hand["hand_id"] != dealt or hand["status"] != "playing"):
            break
        for token, view in zip(tokens, views, strict=True):
            legal = (view["hand"] or {}).get("legal")
            if legal is None:
                continue
            action = "check" if legal["can_check"] else "call"
            status, answer = await rest(base, "POST", f"/api/poker/tables/{table_id}/act/", token, {"action": action})
            if status != 200 and answer["error"]["code"] not in ("poker_not_your_turn", "poker_no_hand"):
                raise SmokeFailure(f"{DEMO_POKER_TABLE}: {action} refused: {status} {answer}")
        await asyncio.sleep(0.2)
    for token in tokens:
        status, answer = await rest(base, "POST", f"/api/poker/tables/{table_id}/leave/", token)
        if status != 200:
            raise SmokeFailure(f"{DEMO_POKER_TABLE}: stand up refused: {status} {answer}")
    status, hands = await rest(base, "GET", "/api/poker/hands/?limit=20", tokens[0])
    rows = [row for row in hands["results"] if row["hand_id"] == dealt] if status == 200 else []
    if not rows or rows[0]["status"] != "complete" or rows[0]["stack_after"] is None:
        raise SmokeFailure(f"{DEMO_POKER_TABLE}: hand {dealt} is not complete in the history: {status} {rows}")
    return {"table": DEMO_POKER_TABLE, **rows[0]}


def login(base: str, user: tuple[str, str]) -> str:
    status, answer = call(base, "POST", "/api/auth/token/", body={"username": user[0], "password": user[1]})
    if status != 200:
        raise SmokeFailure(f"login of {user[0]} failed: {status} {answer}")
    return str(answer["token"])


async def play(base: str, timeout: float) -> list[dict[str, Any]]:
    token, opponent = login(base, DEMO_USER), login(base, DEMO_OPPONENT)
    status, tables = call(base, "GET", "/api/tables/", token)
    by_code = {t["code"]: t for t in tables} if status == 200 else {}
    missing = [code for code in DEMO_TABLES if code not in by_code]
    if missing:
        raise SmokeFailure(f"demo tables not listed: {missing} ({status})")
    status, poker_tables = call(base, "GET", "/api/poker/tables/", token)
    poker = next((t for t in poker_tables if t["code"] == DEMO_POKER_TABLE), None) if status == 200 else None
    if poker is None:
        raise SmokeFailure(f"demo poker table {DEMO_POKER_TABLE} not listed ({status})")
    rounds = [play_table(base, token, by_code[code]) for code in DEMO_TABLES]
    rounds.append(play_poker(base, [token, opponent], poker))
    try:
        return await asyncio.wait_for(asyncio.gather(*rounds), timeout)
    except TimeoutError:
        raise SmokeFailure(f"the three rounds and the poker hand were not played within {timeout:.0f} s") from None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="server base URL, e.g. http://127.0.0.1:8000")
    parser.add_argument("--timeout", type=float, default=240)
    args = parser.parse_args()
    try:
        rows = asyncio.run(play(args.base.rstrip("/"), args.timeout))
    except SmokeFailure as failure:
        print(f"smoke play failed: {failure}", file=sys.stderr)
        return 1
    for row in rows:
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
