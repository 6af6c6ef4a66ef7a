#!/usr/bin/env python3
"""Play one Ultimate Texas Hold'em round against a running server, from the outside.

Used by CI to prove the embedded default (``make run``) does not only start but
plays: the demo player logs in, joins the demo table ``UTH1``, places the
minimum Ante while the betting light is green or yellow, makes no decision (so
the timeouts check, check and fold), and waits until the account history shows
the round settled. Standard library only. Exits 0 and prints the history row as
JSON, or exits 1 naming what did not happen within the time limit.

    python tools/smoke_play.py http://127.0.0.1:8000 [--timeout 240]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
import uuid
from typing import Any

DEMO_USER = ("demo", "demo-player-password")


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


def play(base: str, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    status, login = call(base, "POST", "/api/auth/token/", body={"username": DEMO_USER[0], "password": DEMO_USER[1]})
    if status != 200:
        raise SmokeFailure(f"login failed: {status} {login}")
    token = login["token"]
    status, tables = call(base, "GET", "/api/tables/", token)
    table = next((t for t in tables if t["code"] == "UTH1"), None) if status == 200 else None
    if table is None:
        raise SmokeFailure(f"demo table UTH1 not listed: {status} {tables}")
    status, joined = call(base, "POST", f"/api/tables/{table['id']}/join/", token)
    already_seated = status == 409 and joined["error"]["code"] == "already_seated"
    if status not in (200, 201) and not already_seated:
        raise SmokeFailure(f"join failed: {status} {joined}")
    ante = table["limits"]["ante"]["min"]
    game_number = None
    while game_number is None:
        if time.monotonic() > deadline:
            raise SmokeFailure("no betting window accepted the Ante in time")
        status, view = call(base, "GET", f"/api/tables/{table['id']}/", token)
        if status == 200 and view.get("traffic_light") in ("green", "yellow"):
            status, _ = call(
                base, "POST", f"/api/tables/{table['id']}/bets/chip/", token, {"spot": "ante", "amount": ante}
            )
            if status == 200:
                status, view = call(base, "GET", f"/api/tables/{table['id']}/", token)
                game_number = (view.get("round") or {}).get("game_number")
                continue
        time.sleep(0.5)
    while time.monotonic() < deadline:
        status, history = call(base, "GET", "/api/history/?limit=5", token)
        rows = [row for row in history.get("results", []) if row["game_number"] == game_number]
        if rows and rows[0]["status"] in ("settled", "voided"):
            return rows[0]
        time.sleep(1)
    raise SmokeFailure(f"round {game_number} was not settled in time")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="server base URL, e.g. http://127.0.0.1:8000")
    parser.add_argument("--timeout", type=float, default=240)
    args = parser.parse_args()
    try:
        row = play(args.base.rstrip("/"), args.timeout)
    except SmokeFailure as failure:
        print(f"smoke play failed: {failure}", file=sys.stderr)
        return 1
    print(json.dumps(row))
    return 0 if row["status"] == "settled" else 1


if __name__ == "__main__":
    sys.exit(main())
