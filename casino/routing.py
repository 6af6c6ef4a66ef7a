"""Websocket routes of every app, collected in one list for the ASGI router."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.urls import path

from games.routing import websocket_urlpatterns as games_websocket_urlpatterns

websocket_urlpatterns: list[Any] = [*games_websocket_urlpatterns]

# `bench bets`' and `bench fanout`'s peers: never in production (casino/settings.py).
if settings.CASINO_BENCH_ENDPOINTS:
    from games.benchmarks.bare import BareInsertConsumer
    from games.benchmarks.bare_broadcast import BareBroadcastConsumer

    websocket_urlpatterns.append(path("ws/bench/bare/", BareInsertConsumer.as_asgi()))
    websocket_urlpatterns.append(path("ws/bench/broadcast/", BareBroadcastConsumer.as_asgi()))
