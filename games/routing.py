"""Websocket routes of the games app."""

from __future__ import annotations

from typing import Any

from django.urls import path

from games.house.realtime.consumers import TableConsumer
from games.poker.realtime.consumers import PokerTableConsumer
from games.poker.tournament.consumers import TournamentConsumer

websocket_urlpatterns: list[Any] = [
    path("ws/tables/<int:table_id>/", TableConsumer.as_asgi()),
    path("ws/poker/<int:table_id>/", PokerTableConsumer.as_asgi()),
    path("ws/poker/tournaments/<int:tournament_id>/", TournamentConsumer.as_asgi()),
]
