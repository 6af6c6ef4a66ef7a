"""The account statement (``GET /api/wallet/statement/``, issue 38's account
page): every movement of the player's wallet, newest first, each with the
balance after it and, for a round's stakes and returns, the round's game
number. The lines add up to the balance; another player's money is never in
it; reading it opens no account."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from games.house.models import PlayerRound
from games.house.services import place_chip
from ledger.models import Account
from tests.house.services.conftest import key, later, make_player, make_table, open_round, play_out, wallet

pytestmark = pytest.mark.django_db


def client_of(player: int) -> APIClient:
    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(pk=player))
    return client


def statement(client: APIClient, **query: Any) -> dict[str, Any]:
    answer = client.get("/api/wallet/statement/", query)
    assert answer.status_code == 200, answer.content
    page: dict[str, Any] = answer.json()
    return page


def test_the_statement_adds_up_to_the_balance_and_names_the_round() -> None:
    table = make_table("uth")
    player = make_player(table, funds=10_000)
    other = make_player(table, funds=50_000)
    tick = open_round(table)
    for who in (player, other):
        place_chip(table_id=table.pk, player_id=who, spot="ante", amount=300, idempotency_key=key(), now=later(tick))
    play_out(table, tick)
    game_number = PlayerRound.objects.get(player_id=player).game_number

    page = statement(client_of(player), limit=200)
    lines = page["results"]
    assert page["currency"] == "EUR"
    assert page["count"] == len(lines) >= 2  # the deposit, the stakes held, whatever the round returned
    oldest_first = lines[::-1]
    assert oldest_first[0]["kind"] == "deposit"
    assert oldest_first[0]["amount"] == 10_000
    assert oldest_first[0]["game_number"] is None
    running = 0
    for line in oldest_first:  # each balance is the one before plus the movement
        running += line["amount"]
        assert line["balance_after"] == running
    assert running == wallet(player)
    stakes = [line for line in lines if line["amount"] < 0]
    assert -sum(line["amount"] for line in stakes) == 600  # the Ante and its Ante Plus, held from the wallet
    assert {line["game_number"] for line in stakes} == {game_number}
    # Only the caller's own wallet: the other player's deposit of 50,000 is not here.
    assert 50_000 not in [line["amount"] for line in lines]


def test_pages_tile_the_statement() -> None:
    table = make_table("uth")
    player = make_player(table, funds=10_000)
    tick = open_round(table)
    place_chip(table_id=table.pk, player_id=player, spot="ante", amount=100, idempotency_key=key(), now=later(tick))
    play_out(table, tick)
    client = client_of(player)
    everything = statement(client, limit=200)["results"]
    pages = [statement(client, limit=1, offset=at)["results"] for at in range(len(everything))]
    assert [page[0] for page in pages] == everything


def test_a_player_without_a_wallet_reads_nothing_and_opens_nothing() -> None:
    player = make_player(funds=0)
    accounts = Account.objects.count()
    assert statement(client_of(player)) == {"currency": "EUR", "count": 0, "limit": 50, "offset": 0, "results": []}
    assert Account.objects.count() == accounts


def test_refusals() -> None:
    client = client_of(make_player(funds=0))
    assert client.get("/api/wallet/statement/", {"currency": "XXX"}).json()["error"]["code"] == "unknown_currency"
    assert client.get("/api/wallet/statement/", {"limit": "-1"}).json()["error"]["code"] == "invalid_query"
    assert APIClient().get("/api/wallet/statement/").status_code == 401
