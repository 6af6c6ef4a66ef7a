"""The lobby's rows (``GET /api/tables/``, issue 38: the web client's lobby
shows each table's players): the players seated at each table, counted in one
query for every table, and the same number of queries however many tables."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.house.live.test_bad_input import client_for
from tests.house.services.conftest import make_player, make_table

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


def lobby(client) -> dict[str, dict]:
    response = client.get("/api/tables/")
    assert response.status_code == 200, response.content
    return {row["code"]: row for row in response.json()}


def test_each_row_counts_the_players_seated_at_its_table() -> None:
    busy, empty = make_table("uth", code="LOBBY1"), make_table("casino_holdem", code="LOBBY2")
    alice = make_player(busy)
    make_player(busy)
    rows = lobby(client_for(alice))
    assert (rows["LOBBY1"]["players"], rows["LOBBY2"]["players"]) == (2, 0)
    assert busy.pk != empty.pk


def test_the_lobby_reads_a_fixed_number_of_queries_however_many_tables() -> None:
    player = make_player(make_table("uth", code="LOBBY3"))
    make_player(make_table("xtreme", code="LOBBY4"))  # a STAX table: its pools are read too
    client = client_for(player)
    lobby(client)  # the token's first use
    with CaptureQueriesContext(connection) as few:
        lobby(client)
    for number in range(4):
        make_player(make_table("xtreme" if number % 2 else "uth", code=f"LOBBYX{number}"))
    with CaptureQueriesContext(connection) as many:
        assert len(lobby(client)) == 6
    assert len(many) == len(few)
