"""Websocket authentication for the tests' clients: a ticket per connection
(``POST /api/auth/ws-ticket/`` with the player's API token, through the real
server), as every client does (docs/websocket.md, "Authentication")."""

from __future__ import annotations

import httpx


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
