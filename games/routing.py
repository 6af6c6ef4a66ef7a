"""Websocket routes of the games app."""

from __future__ import annotations

from typing import Any

from django.urls import path

from games.consumers import TableConsumer

websocket_urlpatterns: list[Any] = [
    path("ws/tables/<int:table_id>/", TableConsumer.as_asgi()),
]
