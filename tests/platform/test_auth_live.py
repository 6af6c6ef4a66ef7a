"""Logins and websocket authentication against a real uvicorn process
(docs/auth.md): the server flags leave the client address to the application
(uvicorn would otherwise take X-Forwarded-For from a loopback peer), and a
websocket opens with a single-use, short-lived ticket or the session cookie,
never with an API token in the URL, and no credential reaches the log."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import websockets
from django.conf import settings
from django.contrib.auth import get_user_model
from websockets.typing import Origin

from casino.auth import issue_token
from tests.house.services.conftest import make_table
from tests.ws_auth import ws_ticket

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

LOG = settings.VAR_DIR / "test-asgi-auth.log"
TICKET_SECONDS = 2


@pytest.fixture(scope="module")
def server(django_db_setup: Any, django_db_blocker: Any) -> Iterator[str]:
    """This module's uvicorn (uvicorn's own INFO lines on, tickets valid 2 s)."""
    from games.benchmarks.live import asgi_server

    LOG.unlink(missing_ok=True)
    env = {"LOG_LEVEL": "INFO", "CASINO_WS_TICKET_SECONDS": str(TICKET_SECONDS)}
    with django_db_blocker.unblock(), asgi_server(extra_env=env, log=LOG, args=["--log-level", "info"]) as base:
        yield base


def player(name: str) -> tuple[Any, str]:
    user = get_user_model().objects.create_user(username=name, password=f"{name}-pw-123456")
    return user, issue_token(user=user)


def test_made_up_forwarded_addresses_do_not_escape_the_lockout(server: str) -> None:
    """100 wrong passwords, each with a made-up X-Forwarded-For (and its own
    username): with no trusted proxy the address is the TCP peer's, so the
    lockout holds from the limit on, the right password included."""
    player("nora")
    with httpx.Client(base_url=server, timeout=20) as http:
        statuses = [
            http.post(
                "/api/auth/token/",
                json={"username": f"guess-{n}", "password": "wrong"},
                headers={"X-Forwarded-For": f"198.51.100.{n}"},
            ).status_code
            for n in range(100)
        ]
        assert statuses[:4] == [401] * 4
        assert set(statuses[4:]) == {429}
        right = http.post(
            "/api/auth/token/",
            json={"username": "nora", "password": "nora-pw-123456"},
            headers={"X-Forwarded-For": "192.0.2.1"},
        )
    assert right.status_code == 429
    assert right.json()["error"]["code"] in {"login_locked_out", "throttled"}


async def close_code(url: str, base: str, **kwargs: Any) -> int | None:
    """The close code the server ends a fresh connection with (``None``: it stayed open)."""
    async with websockets.connect(url, origin=Origin(base), open_timeout=20, **kwargs) as ws:
        try:
            first = await asyncio.wait_for(ws.recv(), 5)
        except websockets.ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd else None
        assert '"snapshot"' in str(first)
        return None


def test_a_websocket_ticket_opens_one_connection_and_expires(server: str) -> None:
    table = make_table("uth")
    _user, token = player("olga")
    path = f"/ws/tables/{table.pk}/"
    ws = server.replace("http://", "ws://") + path

    async def scenario() -> list[int | None]:
        ticket = ws_ticket(server, token)
        codes = [await close_code(f"{ws}?ticket={ticket}", server)]  # opens
        codes.append(await close_code(f"{ws}?ticket={ticket}", server))  # used: refused
        late = ws_ticket(server, token)
        await asyncio.sleep(TICKET_SECONDS + 0.5)
        codes.append(await close_code(f"{ws}?ticket={late}", server))  # expired
        codes.append(await close_code(f"{ws}?ticket=made-up", server))
        codes.append(await close_code(f"{ws}?token={token}", server))  # an API token is not accepted
        poker = server.replace("http://", "ws://") + f"/ws/poker/999999/?ticket={ws_ticket(server, token)}"
        codes.append(await close_code(poker, server))
        return codes

    codes = asyncio.run(scenario())
    assert codes[:5] == [None, 4401, 4401, 4401, 4401]
    assert codes[5] == 4404  # a ticket is the player's, good on any table: this one does not exist


def test_two_handshakes_racing_with_one_ticket_open_one_connection(server: str) -> None:
    table = make_table("uth")
    _user, token = player("pia")
    ws = server.replace("http://", "ws://") + f"/ws/tables/{table.pk}/"

    async def scenario() -> list[int | None]:
        ticket = ws_ticket(server, token)
        return list(await asyncio.gather(*(close_code(f"{ws}?ticket={ticket}", server) for _ in range(6))))

    codes = asyncio.run(scenario())
    assert sorted(codes, key=lambda c: c or 0) == [None] + [4401] * 5


def test_a_session_cookie_opens_a_websocket_too(server: str) -> None:
    table = make_table("uth")
    user, _token = player("quinn")
    user.is_staff = True  # the admin's login form is where sessions come from
    user.save()
    with httpx.Client(base_url=server, timeout=20) as http:
        page = http.get("/admin/login/")
        csrf = page.cookies["csrftoken"]
        # A player has no admin access, but logging in on the admin's form starts a session all the same.
        logged = http.post(
            "/admin/login/?next=/admin/",
            data={"username": "quinn", "password": "quinn-pw-123456", "csrfmiddlewaretoken": csrf},
            headers={"Referer": f"{server}/admin/login/"},
        )
        assert logged.status_code in (200, 302)
        cookie = "; ".join(f"{name}={value}" for name, value in http.cookies.items())
    ws = server.replace("http://", "ws://") + f"/ws/tables/{table.pk}/"
    assert "sessionid" in cookie
    assert asyncio.run(close_code(ws, server, additional_headers={"Cookie": cookie})) is None
    assert asyncio.run(close_code(ws, server)) == 4401


def test_no_ticket_or_token_reaches_the_server_log(server: str) -> None:
    table = make_table("uth")
    _user, token = player("rosa")
    ws = server.replace("http://", "ws://") + f"/ws/tables/{table.pk}/"
    ticket = ws_ticket(server, token)
    assert asyncio.run(close_code(f"{ws}?ticket={ticket}", server)) is None
    assert asyncio.run(close_code(f"{ws}?token={token}", server)) == 4401
    deadline = time.monotonic() + 10
    while f"/ws/tables/{table.pk}/" not in LOG.read_text(errors="replace"):
        assert time.monotonic() < deadline, "uvicorn's handshake line is not in the log"
        time.sleep(0.1)
    log = LOG.read_text(errors="replace")
    assert ticket not in log
    assert token not in log
    assert token[:15] not in log


def test_the_benchmark_clients_fetch_a_ticket_per_connection(server: str) -> None:
    """``games.benchmarks.ws_clients.fetch_ticket`` (the fleets' and ``ws_bets``'
    light HTTP call) gets a ticket that opens a websocket once."""
    from games.benchmarks.ws_clients import fetch_ticket

    table = make_table("uth")
    _user, token = player("sara")
    host, port = server.removeprefix("http://").split(":")
    ws = server.replace("http://", "ws://") + f"/ws/tables/{table.pk}/?ticket="

    async def scenario() -> list[int | None]:
        ticket = await fetch_ticket(host, int(port), token)
        return [await close_code(ws + ticket, server), await close_code(ws + ticket, server)]

    assert asyncio.run(scenario()) == [None, 4401]
    with pytest.raises(RuntimeError, match="no websocket ticket"):
        asyncio.run(fetch_ticket(host, int(port), "not-a-token"))
