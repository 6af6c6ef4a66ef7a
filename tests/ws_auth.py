"""Websocket authentication for the tests' clients: a ticket per connection
(``POST /api/auth/ws-ticket/`` with the player's API token, through the real
server), as every client does (docs/websocket.md, "Authentication")."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from websockets.sync.client import ClientConnection, connect
from websockets.typing import Origin


def ws_ticket(base: str, token: str) -> str:
    """A fresh single-use ticket for the holder of ``token``, from the server at ``base``."""
    response = httpx.post(f"{base}/api/auth/ws-ticket/", headers={"Authorization": f"Token {token}"}, timeout=20)
    assert response.status_code == 200, response.text
    return str(response.json()["ticket"])


async def ws_ticket_async(base: str, token: str) -> str:
    async with httpx.AsyncClient(timeout=20) as http:
        response = await http.post(f"{base}/api/auth/ws-ticket/", headers={"Authorization": f"Token {token}"})
    assert response.status_code == 200, response.text
    return str(response.json()["ticket"])


def ws_url(base: str, path: str, token: str, query: str = "") -> str:
    """``ws://.../path?ticket=<fresh ticket>`` (and ``&query``): good for one connection."""
    url = base.replace("http://", "ws://") + f"{path}?ticket={ws_ticket(base, token)}"
    return f"{url}&{query}" if query else url


@contextmanager
def snapshot_socket(base: str, path: str, token: str) -> Iterator[ClientConnection]:
    """A websocket on ``path`` of the server at ``base`` as the holder of ``token``
    (blocking client, a fresh ticket); its first frame must be the snapshot."""
    with connect(ws_url(base, path, token), origin=Origin(base), open_timeout=20) as ws:
        first = json.loads(ws.recv(timeout=20))
        assert first["type"] == "snapshot", first
        yield ws


def token_for(player_id: int) -> str:
    """A new API token of the player ``player_id`` (``casino.auth.issue_token``)."""
    from django.contrib.auth import get_user_model

    from casino.auth import issue_token

    return issue_token(user=get_user_model().objects.get(pk=player_id))


def token_user(token: str) -> Any:
    """The user an API token belongs to (tokens are stored as digests)."""
    from knox.crypto import hash_token
    from knox.models import AuthToken

    return AuthToken.objects.select_related("user").get(digest=hash_token(token)).user
