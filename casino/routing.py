"""Websocket routes of every app, collected in one list for the ASGI router."""

from __future__ import annotations

from typing import Any

from games.routing import websocket_urlpatterns as games_websocket_urlpatterns

websocket_urlpatterns: list[Any] = [*games_websocket_urlpatterns]
