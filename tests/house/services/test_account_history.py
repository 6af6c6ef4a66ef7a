"""The account history (``GET /api/history/``, seed 000 "History": date, game,
game number, bets, payouts): its ``count`` is the number of rows its pages
hold, declined rounds included (seed 003: a player not present at "No More
Bets" has their bets declined, and the round is shown), and its pages tile
that list (issue 37 (c))."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from games.house.models import HouseTable
from games.house.services import place_chip
from games.tables.presence import HOUSE, touch
from tests.house.services.conftest import T0, key, later, make_player, make_table, open_round, step

pytestmark = pytest.mark.django_db


def rounds(table: HouseTable, player: int, outcomes: list[str]) -> None:
    """One round per outcome, the player betting an ante in each: ``played``
    (present at "No More Bets") or ``declined`` (their last call to the table
    an hour before it: not present)."""
    tick = open_round(table)
    for index, outcome in enumerate(outcomes):
        place_chip(table_id=table.pk, player_id=player, spot="ante", amount=100, idempotency_key=key(),
                   now=later(tick))  # fmt: skip
        seen = later(tick) if outcome == "played" else T0 - timedelta(hours=1)
        touch(family=HOUSE, table_id=table.pk, player_id=player, now=seen)
        while tick.phase not in ("between", "idle"):
            tick = step(table, tick)
        if index < len(outcomes) - 1:
            tick = step(table, tick)  # the next round's betting window
            assert tick.phase == "betting"


def history(client: APIClient, **query: int) -> dict[str, Any]:
    answer = client.get("/api/history/", {k: str(v) for k, v in query.items()})
    assert answer.status_code == 200, answer.content
    page: dict[str, Any] = answer.json()
    return page


def test_count_equals_the_rows_of_all_pages_with_declined_rounds() -> None:
    table = make_table("uth")
    player = make_player(table)
    other = make_player(table)  # another player's rounds are never counted nor listed
    rounds(table, player, ["played", "declined", "played", "declined", "played"])
    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(pk=player))
    everything = history(client, limit=200)
    statuses = sorted(row["status"] for row in everything["results"])
    assert statuses.count("declined") == 2
    assert len(everything["results"]) == 5
    assert everything["count"] == 5
    numbers = [row["game_number"] for row in everything["results"]]
    paged: list[str] = []
    for offset in (0, 2, 4, 6):
        page = history(client, limit=2, offset=offset)
        assert page["count"] == 5
        assert (page["limit"], page["offset"]) == (2, offset)
        paged += [row["game_number"] for row in page["results"]]
    assert paged == numbers
    assert len(set(numbers)) == 5
    client.force_authenticate(get_user_model().objects.get(pk=other))
    assert history(client) == {"count": 0, "limit": 50, "offset": 0, "results": []}
