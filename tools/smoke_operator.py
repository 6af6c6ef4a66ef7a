#!/usr/bin/env python3
"""What the operator and compliance staff look at, checked against a running server from the outside.

Used by CI after ``tools/smoke_play.py`` on the embedded default (``make run``:
SQLite, in-memory layer, filesystem broker), so the demo's play is in the
figures (issue 36):

- every compliance report answers 200 as JSON to the ``compliance`` demo login
  (API token), never a 500 or an HTML body; the house-days report follows the
  regulators' definition: hold = handle - payouts, and the demo's progressive
  seeding is on its own line, never in payouts;
- the admin pages a person reads answer 200 to a session login: the operator's
  dashboard (``/admin/`` and its refreshed fragment), the round list, and the
  compliance reports page;
- ``GET /metrics`` answers the Prometheus text with the named series to staff,
  and refuses an anonymous caller with a JSON 401;
- the player's web client (issue 38) is served at ``/`` with every script and
  stylesheet its page names, from this server.

Exits 0 printing one line per check, or 1 naming the first that failed.

    python tools/smoke_operator.py http://127.0.0.1:8000
"""

from __future__ import annotations

import argparse
import http.cookiejar
import json
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from datetime import UTC, datetime, timedelta
from typing import Any

COMPLIANCE = ("compliance", "compliance-demo-password")
OPERATOR = ("operator", "operator-demo-password")
REPORTS = (
    "table-performance",
    "voided-rounds",
    "player-account-summary",
    "progressive-pools",
    "house-days",
    "tournaments",
)
ADMIN_PAGES = (
    ("/admin/", 'id="dashboard"'),
    ("/admin/dashboard/", "dash-tables"),
    ("/admin/games/houseround/", "House rounds"),
    ("/admin/compliance/complianceaccess/", "Compliance reports"),
)
SERIES = ("casino_commands_total", "casino_command_duration_seconds", "casino_ws_connections")


class SmokeFailure(Exception):
    pass


def fetch(opener: urllib.request.OpenerDirector, url: str, **kwargs: Any) -> tuple[int, str, str]:
    """(status, content type, body) of a request; an HTTP error's too."""
    request = urllib.request.Request(url, **kwargs)
    try:
        with opener.open(request, timeout=60) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read().decode()


def api_token(base: str, user: tuple[str, str]) -> str:
    body = json.dumps({"username": user[0], "password": user[1]}).encode()
    status, _, text = fetch(
        urllib.request.build_opener(), base + "/api/auth/token/", data=body, method="POST",
        headers={"Content-Type": "application/json"},
    )  # fmt: skip
    if status != 200:
        raise SmokeFailure(f"API login of {user[0]} answered {status}: {text[:200]}")
    return str(json.loads(text)["token"])


def check_reports(base: str, token: str) -> list[str]:
    today = datetime.now(UTC).date()
    start, end = (today - timedelta(days=1)).isoformat(), (today + timedelta(days=1)).isoformat()
    params = {"house-days": {"from": start, "days": "3"}, "player-account-summary": {"day": today.isoformat()}}
    opener = urllib.request.build_opener()
    lines = []
    for name in REPORTS:
        query = urllib.parse.urlencode(params.get(name, {"from": f"{start}T00:00:00Z", "to": f"{end}T00:00:00Z"}))
        status, kind, text = fetch(
            opener, f"{base}/api/compliance/reports/{name}/?{query}", headers={"Authorization": f"Token {token}"}
        )
        if status != 200 or "json" not in kind:
            raise SmokeFailure(f"report {name} answered {status} {kind}: {text[:300]}")
        report = json.loads(text)
        if name == "house-days":
            seeded = 0
            for row in report["rows"]:
                if row["hold"] != row["handle"] - row["payouts"]:
                    raise SmokeFailure(f"house-days: hold is not handle - payouts in {row}")
                seeded += row["progressive_seeding"]
            if seeded <= 0:
                raise SmokeFailure(f"house-days: the demo's progressive seeding is not on its own line: {report}")
        lines.append(f"report {name}: 200, {len(report['rows'])} rows")
    return lines


def check_admin(base: str, user: tuple[str, str]) -> list[str]:
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    status, _, _ = fetch(opener, base + "/admin/login/")
    csrf = next((cookie.value for cookie in jar if cookie.name == "csrftoken"), "")
    if status != 200 or not csrf:
        raise SmokeFailure(f"admin login page answered {status} (csrf cookie: {bool(csrf)})")
    form = urllib.parse.urlencode(
        {"username": user[0], "password": user[1], "csrfmiddlewaretoken": csrf, "next": "/admin/"}
    ).encode()
    status, _, text = fetch(
        opener, base + "/admin/login/?next=/admin/", data=form, method="POST",
        headers={"Content-Type": "application/x-www-form-urlencoded", "Referer": base + "/admin/login/"},
    )  # fmt: skip
    if status != 200 or 'id="dashboard"' not in text:
        raise SmokeFailure(f"admin login of {user[0]} did not reach the dashboard ({status})")
    lines = []
    for path, expected in ADMIN_PAGES:
        status, _, text = fetch(opener, base + path)
        if status != 200 or expected not in text:
            raise SmokeFailure(f"admin page {path} answered {status} without {expected!r}")
        lines.append(f"admin {path}: 200")
    return lines


def check_metrics(base: str, token: str) -> list[str]:
    opener = urllib.request.build_opener()
    status, kind, text = fetch(opener, base + "/metrics")
    if status != 401 or "json" not in kind:
        raise SmokeFailure(f"/metrics answered an anonymous caller {status} {kind}")
    status, _, text = fetch(opener, base + "/metrics", headers={"Authorization": f"Token {token}"})
    missing = [name for name in SERIES if name not in text]
    if status != 200 or missing:
        raise SmokeFailure(f"/metrics answered staff {status}; missing series: {missing}")
    return ["metrics: 401 to anonymous, 200 to staff with " + ", ".join(SERIES)]


def check_client(base: str) -> list[str]:
    opener = urllib.request.build_opener()
    status, kind, page = fetch(opener, base + "/")
    if status != 200 or "text/html" not in kind or "client/js/main.js" not in page:
        raise SmokeFailure(f"/ answered {status} {kind} without the client's main.js")
    assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', page)
    for asset in assets:
        status, _, _ = fetch(opener, base + asset)
        if status != 200:
            raise SmokeFailure(f"{asset} (named by the client's page) answered {status}")
    return [f"web client: / and its {len(assets)} scripts and stylesheets answer 200"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="server base URL, e.g. http://127.0.0.1:8000")
    base = parser.parse_args().base.rstrip("/")
    try:
        token = api_token(base, COMPLIANCE)
        lines = check_reports(base, token) + check_admin(base, OPERATOR) + check_metrics(base, token)
        lines += check_client(base)
    except SmokeFailure as failure:
        print(f"operator smoke failed: {failure}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
