"""Error tracking (docs/live.md, "Error tracking"): with ``SENTRY_DSN`` set, an
error reaches the Sentry server, and no card, token, password, ticket, cookie
or Authorization header reaches it with it. The server is a real HTTP server
this test starts (it keeps every envelope it receives); the failing process is
a real Django process started with the DSN, whose settings start the SDK."""

from __future__ import annotations

import gzip
import json
import os
import random
import re
import secrets
import subprocess
import sys
import threading
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from casino.error_tracking import FILTERED, scrub, scrub_text
from games.cards.cards import FULL_DECK

ROOT = Path(__file__).resolve().parents[2]

# The failing process: the project's settings (which start Sentry from SENTRY_DSN), a request through
# Django's whole stack to a view that raises with the secrets, then the SDK's queue flushed.
SCRIPT = """
import json, os
import django
django.setup()
import sentry_sdk
from django.test import Client
from django.test.utils import override_settings
secrets_given = json.loads(os.environ["CASINO_TEST_GIVEN"])
with override_settings(ROOT_URLCONF="tests.platform.sentry_urls", ALLOWED_HOSTS=["testserver"]):
    answer = Client(raise_request_exception=False).post(
        "/explode/", data=json.dumps(secrets_given), content_type="application/json",
        HTTP_AUTHORIZATION="Token " + secrets_given["token"],
        HTTP_COOKIE="sessionid=" + secrets_given["session"] + "; csrftoken=" + secrets_given["csrf"],
    )
    assert answer.status_code == 500, answer.status_code
assert sentry_sdk.get_client().is_active()
sentry_sdk.flush(timeout=20)
print("flushed")
"""


class Envelopes(BaseHTTPRequestHandler):
    """Keeps the body of every request (decompressed) on the server object."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        encoding = (self.headers.get("Content-Encoding") or "").lower()
        if encoding == "gzip":
            body = gzip.decompress(body)
        elif encoding == "deflate":
            body = zlib.decompress(body)
        self.server.received.append((self.path, encoding, body))  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def sentry_server() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Envelopes)
    server.received = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_an_error_reaches_sentry_without_a_card_token_password_ticket_or_cookie(sentry_server):
    hole = random.sample([str(card) for card in FULL_DECK], 2)
    given: dict[str, Any] = {
        "cards": hole,
        "token": secrets.token_hex(32),  # a knox token's shape
        "password": "pw-" + secrets.token_urlsafe(9),
        "ticket": secrets.token_urlsafe(32),  # a websocket ticket's shape
        "session": secrets.token_hex(16),
        "csrf": secrets.token_hex(16),
        "amount": 100,
    }
    port = sentry_server.server_address[1]
    env = dict(os.environ, SENTRY_DSN=f"http://publickey@127.0.0.1:{port}/42", CASINO_TEST_GIVEN=json.dumps(given),
               DJANGO_SETTINGS_MODULE="casino.settings", PYTHONUNBUFFERED="1")  # fmt: skip
    run = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, timeout=120)
    assert run.returncode == 0, run.stderr.decode()[-3000:]
    assert b"flushed" in run.stdout

    received = sentry_server.received
    assert received, "no envelope reached the server"
    assert all(path == "/api/42/envelope/" for path, _encoding, _body in received), [p for p, _, _ in received]
    text = b"\n".join(body for _path, _encoding, body in received).decode()
    # The error got there, with the request it failed in and the log lines before it.
    assert "dealing failed: hole cards" in text
    assert "RuntimeError" in text
    assert "/explode/" in text
    assert "player logged in with password=" in text
    # ...and none of the secrets did, in any form.
    for name in ("token", "password", "ticket", "session", "csrf"):
        assert given[name] not in text, name
    for card in hole:
        assert not re.search(rf"(?<![A-Za-z0-9]){card}(?![A-Za-z0-9])", text), card
    events = [json.loads(line) for line in text.splitlines() if line.startswith("{") and '"exception"' in line]
    assert events, text[:2000]
    request = events[0]["request"]
    assert request.get("headers", {}).get("Authorization") in (None, FILTERED)
    assert request.get("cookies") in (None, {}, FILTERED) or all(v == FILTERED for v in request["cookies"].values())
    assert request["data"]["amount"] == 100  # what is not secret is kept
    assert request["data"]["cards"] == FILTERED


def test_scrub_masks_secret_keys_at_any_depth_and_secrets_inside_text():
    token = secrets.token_hex(32)
    event: dict[str, Any] = {
        "request": {"headers": [["Authorization", f"Token {token}"], ["Accept", "application/json"]],
                    "data": {"seat": {"hole_cards": ["As", "Kd"], "Password": "hunter2"}, "spot": "ante"}},
        "extra": {"message": f"deal As Kd 10h to token={token} with password: hunter2",
                  "round": "3f2a1b2c-1111-2222-3333-444455556666"},
        "exception": {"values": [{"stacktrace": {"frames": [{"function": "deal_hole_cards_to_the_seats_1234"}]}}]},
    }  # fmt: skip
    scrubbed = scrub(event)
    assert scrubbed["request"]["headers"] == [["Authorization", FILTERED], ["Accept", "application/json"]]
    assert scrubbed["request"]["data"] == {"seat": {"hole_cards": FILTERED, "Password": FILTERED}, "spot": "ante"}
    message = scrubbed["extra"]["message"]
    assert token not in message
    assert "hunter2" not in message
    assert not re.search(r"\b(As|Kd|10h)\b", message)
    assert scrubbed["extra"]["round"] == event["extra"]["round"]  # a round id is not a secret
    # A stack trace's function names are code, kept for whoever reads the error.
    assert scrubbed["exception"]["values"][0]["stacktrace"]["frames"][0]["function"].startswith("deal_hole")
    assert scrub_text("websocket ticket " + secrets.token_urlsafe(32)) == f"websocket ticket {FILTERED}"
