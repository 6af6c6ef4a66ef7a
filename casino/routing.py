"""Websocket routes of every app, collected in one list for the ASGI router."""

from __future__ import annotations

from typing import Any

websocket_urlpatterns: list[Any] = []
