"""Responsible-gaming limits without holes (issue 22, part 1), through the real
API on PostgreSQL: a session is continuous play (not a login), limits are per
currency, a bet must leave the round's smallest forced decision coverable
(balance and limits), the decision offer never shows what would be refused,
limit changes are all or nothing, and huge inputs are a 400 with a code.

Rules: docs/cashier-and-responsible-gaming.md."""

from __future__ import annotations

import importlib
import json
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient

from casino import responsible_gaming as rg
from casino.models import ResponsibleGaming
from games.house.models import HouseTable
from games.house.realtime.relay import offers
from games.house.services import advance_table, assign_seat, start_table
from ledger.services import balance_of, deposit, player_accounts
from tests.house.live.conftest import fast_table
from tests.house.live.test_bad_input import client_for
from tests.house.services.conftest import key, make_player, snapshot
from tests.poker.tables import advance as advance_poker
from tests.poker.tables import make_table as make_poker_table

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def post(client: APIClient, path: str, body: Any = None) -> Any:
    return client.post(path, data=json.dumps(body or {}), content_type="application/json",
                       HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex)  # fmt: skip


def put_limits(client: APIClient, body: dict[str, Any]) -> Any:
    return client.put("/api/me/limits/", data=json.dumps(body), content_type="application/json")


def chip(client: APIClient, table: HouseTable, spot: str, amount: int) -> Any:
    return post(client, f"/api/tables/{table.pk}/bets/chip/", {"spot": spot, "amount": amount})


def fund(player: int, amount: int, currency: str) -> None:
    deposit(wallet=player_accounts(player_id=player, currency=currency).wallet, amount=amount, currency=currency,
            external_reference=key("ref"), idempotency_key=key("dep"), actor="test")  # fmt: skip


def wallet(player: int, currency: str = "EUR") -> int:
    return balance_of(account_id=player_accounts(player_id=player, currency=currency).wallet)


def betting(game: str, funds: int, *, currency: str = "EUR") -> tuple[HouseTable, int, APIClient]:
    table = fast_table(game, betting_seconds=60, decision_seconds=60)
    if currency != "EUR":
        table.currency = currency
        table.save()
    player = make_player(table, funds=0)
    fund(player, funds, currency)
    start_table(table_id=table.pk, now=timezone.now())
    return table, player, client_for(player)


def refused(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == code, response.content
    return error


def advance(table: HouseTable) -> str:
    """Close the open phase at its deadline (the dealer's step); the new phase."""
    table.refresh_from_db()
    assert table.deadline is not None
    tick = advance_table(table_id=table.pk, expected_seq=table.phase_seq, now=table.deadline)
    assert tick is not None
    return str(tick.phase)


def my_options(client: APIClient, table: HouseTable) -> list[str]:
    response = client.get(f"/api/tables/{table.pk}/")
    assert response.status_code == 200, response.content
    return list(response.json()["me"]["options"])


# --- 1. a session is continuous play, not a login ----------------------------------------------


def test_logging_in_does_not_touch_the_session_and_a_limited_player_without_one_is_limited() -> None:
    table, player, client = betting("uth", 10_000)
    user = get_user_model().objects.get(pk=player)
    user.set_password("pw-session-123")
    user.save()
    client = client_for(player)  # a password change revoked the player's tokens
    assert put_limits(client, {"session_limit_minutes": 60}).status_code == 200
    row = ResponsibleGaming.objects.get(pk=player)
    assert row.session_started_at is None  # no play yet: no session
    # Logging in starts nothing.
    login = APIClient().post("/api/auth/token/", {"username": user.username, "password": "pw-session-123"})
    assert login.status_code == 200, login.content
    assert ResponsibleGaming.objects.get(pk=player).session_started_at is None
    # The first wager starts the session: the limit counts from it.
    before = timezone.now()
    assert chip(client, table, "ante", 100).status_code == 200
    row = ResponsibleGaming.objects.get(pk=player)
    assert row.session_started_at is not None
    assert row.session_started_at >= before
    assert row.last_wager_at == row.session_started_at
    # An hour of continuous play later (wagers came within the gap), bets are refused...
    ResponsibleGaming.objects.filter(pk=player).update(
        session_started_at=timezone.now() - timedelta(minutes=61), last_wager_at=timezone.now() - timedelta(minutes=2)
    )
    before_refusal = snapshot()
    error = refused(chip(client, table, "ante", 100), 403, "session_time_limit_reached")
    assert error["details"]["limit_minutes"] == 60
    assert snapshot() == before_refusal
    # ... and logging in again changes nothing (it used to restart the clock).
    assert (
        APIClient().post("/api/auth/token/", {"username": user.username, "password": "pw-session-123"}).status_code
        == 200
    )
    refused(chip(client, table, "ante", 100), 403, "session_time_limit_reached")
    # After the idle gap without a wager the session is over: the next wager starts a new one.
    ResponsibleGaming.objects.filter(pk=player).update(last_wager_at=timezone.now() - rg.idle_gap())
    assert chip(client, table, "ante", 100).status_code == 200
    started = ResponsibleGaming.objects.get(pk=player).session_started_at
    assert started is not None
    assert timezone.now() - started < timedelta(minutes=1)


def test_a_poker_hand_is_play_for_the_session() -> None:
    poker = make_poker_table()
    players = [make_player(funds=10_000) for _ in range(2)]
    for player in players:
        assert put_limits(client_for(player), {"reality_check_minutes": 30}).status_code == 200
    for seat, player in enumerate(players, start=1):
        sat = post(client_for(player), f"/api/poker/tables/{poker.pk}/sit/", {"seat": seat, "buy_in": 1_000})
        assert sat.status_code in (200, 201), sat.content
    advance_poker(poker)  # the hand is dealt
    for player in players:
        row = ResponsibleGaming.objects.get(pk=player)
        assert row.session_started_at is not None, "a hand dealt is a wager: the session started"


# --- 2. limits per currency ---------------------------------------------------------------------


def test_limits_are_set_per_wallet_currency_and_count_every_table_of_it() -> None:
    usd_table, player, client = betting("uth", 10_000, currency="USD")
    fund(player, 10_000, "EUR")
    eur_table = fast_table("uth", betting_seconds=60)
    assign_seat(table_id=eur_table.pk, player_id=player)
    start_table(table_id=eur_table.pk, now=timezone.now())
    assert put_limits(client, {"currency": "USD", "limits": {"loss_day": 600, "deposit_day": 1_000}}).status_code == 200
    eur = put_limits(client, {"limits": {"loss_day": 5_000}})  # the default currency, EUR
    assert eur.status_code == 200, eur.content
    usd = client.get("/api/me/limits/?currency=USD").json()
    assert usd["limits"]["loss_day"]["in_force"] == 600
    assert usd["limits"]["deposit_day"]["in_force"] == 1_000
    assert sorted(usd["currencies"]) == ["EUR", "USD"]
    assert client.get("/api/me/limits/").json()["limits"]["loss_day"]["in_force"] == 5_000
    # USD table: ante 200 holds 400 and keeps 200 for the river's 1x: 600, the USD limit.
    assert chip(client, usd_table, "ante", 200).status_code == 200
    error = refused(chip(client, usd_table, "ante", 100), 403, "loss_limit_exceeded")
    assert error["details"]["currency"] == "USD"
    # The EUR table counts against the EUR limit only.
    assert chip(client, eur_table, "ante", 1_000).status_code == 200
    # Deposits are compared with the limit of their own currency.
    refused(post(client, "/api/cashier/deposits/", {"amount": 1_001, "currency": "USD", "request_key": "u"}), 403,
            "deposit_limit_exceeded")  # fmt: skip
    assert (
        post(client, "/api/cashier/deposits/", {"amount": 1_001, "currency": "EUR", "request_key": "e"}).status_code
        == 201
    )
    # A currency the player has no wallet in is refused.
    refused(put_limits(client, {"currency": "GBP", "limits": {"loss_day": 1}}), 400, "invalid_limit_currency")


def test_a_poker_buy_in_counts_as_a_loss_until_it_is_cashed_out() -> None:
    """Chips bought at a poker table are money at risk: the buy-in counts
    against the loss limit of its currency while seated, and what comes back
    at cash-out is taken off again."""
    poker = make_poker_table()
    player = make_player(funds=10_000)
    client = client_for(player)
    assert put_limits(client, {"limits": {"loss_day": 1_500}}).status_code == 200
    refused(post(client, f"/api/poker/tables/{poker.pk}/sit/", {"seat": 1, "buy_in": 1_501}), 403,
            "loss_limit_exceeded")  # fmt: skip
    assert post(client, f"/api/poker/tables/{poker.pk}/sit/", {"seat": 1, "buy_in": 1_000}).status_code in (200, 201)
    assert rg.net_loss(player_id=player, currency="EUR", since=timezone.now() - timedelta(hours=1)) == 1_000
    table = fast_table("uth", betting_seconds=60)
    assign_seat(table_id=table.pk, player_id=player)
    start_table(table_id=table.pk, now=timezone.now())
    # 1,000 at the poker table + ante 200 (400 held, 200 kept for the river) = 1,600 > 1,500.
    refused(chip(client, table, "ante", 200), 403, "loss_limit_exceeded")
    assert post(client, f"/api/poker/tables/{poker.pk}/leave/", {}).status_code in (200, 204)
    assert rg.net_loss(player_id=player, currency="EUR", since=timezone.now() - timedelta(hours=1)) == 0
    assert chip(client, table, "ante", 200).status_code == 200


def test_existing_limits_move_under_their_rows_currency() -> None:
    migration = importlib.import_module("casino.migrations.0001_squashed_0005_cashier_stream_version")
    player = make_player(funds=0)
    old = {"loss_day": {"amount": 500, "pending": None, "pending_from": None}}
    ResponsibleGaming.objects.create(pk=player, currency="USD", limits=old)
    migration.limits_per_currency(apps, None)
    assert ResponsibleGaming.objects.get(pk=player).limits == {"USD": old}
    migration.limits_per_currency(apps, None)  # run twice: unchanged
    assert ResponsibleGaming.objects.get(pk=player).limits == {"USD": old}


# --- 3. a bet must leave the smallest forced decision coverable ---------------------------------


@pytest.mark.parametrize(
    ("game", "funds", "ante", "too_much"),
    [
        # UTH: Ante + Ante Plus, then the river's 1x Play must stay affordable.
        ("uth", 1_000, 300, 400),  # 300: 600 held, 400 left >= 300; 400: 800 held, 200 left < 400
        # Casino Hold'em: the Ante, then the flop's 2x Call.
        ("casino_holdem", 1_000, 300, 400),  # 300: 700 left >= 600; 400: 600 left < 800
        # Xtreme: Ante + X-tra Bonus, then the river's 1x Play.
        ("xtreme", 1_000, 300, 400),
    ],
)
def test_a_bet_that_leaves_the_forced_decision_uncovered_is_refused(game, funds, ante, too_much) -> None:
    table, player, client = betting(game, funds)
    before = snapshot()
    error = refused(chip(client, table, "ante", too_much), 409, "decision_would_be_uncovered")
    assert error["details"]["reserve"] == too_much * (2 if game == "casino_holdem" else 1)
    assert snapshot() == before
    assert chip(client, table, "ante", ante).status_code == 200
    # A side bet that would eat into the reserve is refused too; one that fits is taken.
    side = {"uth": "best_five", "casino_holdem": "bonus", "xtreme": "player_bonus"}[game]
    left = wallet(player) - ante * (2 if game == "casino_holdem" else 1)
    refused(chip(client, table, side, left + 100), 409, "decision_would_be_uncovered")
    if left >= 100:
        assert chip(client, table, side, 100).status_code == 200


def test_double_and_repeat_keep_the_reserve() -> None:
    table, player, client = betting("uth", 1_300)
    assert chip(client, table, "ante", 300).status_code == 200  # 700 left, 300 kept
    # Doubling the ante needs 600 more and 300 more kept: 900 > 700.
    refused(post(client, f"/api/tables/{table.pk}/bets/double/"), 409, "decision_would_be_uncovered")
    assert wallet(player) == 700


def test_the_loss_limit_keeps_room_for_the_forced_decision() -> None:
    table, _player, client = betting("uth", 10_000)
    assert put_limits(client, {"limits": {"loss_day": 900}}).status_code == 200
    assert chip(client, table, "ante", 300).status_code == 200  # 600 held + 300 for the river = 900
    error = refused(chip(client, table, "best_five", 100), 403, "loss_limit_exceeded")
    assert error["details"]["reserved_for_decision"] == 300


def test_the_offer_hides_what_limits_refuse_and_the_forced_play_stays_possible() -> None:
    """UTH, loss limit 300 with an ante of 100 (200 held, 100 kept for the river):
    preflop 4x/3x and the flop's 2x would pass the limit, so they are not offered
    (their timeout default is a check: hiding them folds no one), and the POST is
    refused with the limit's code. At the river the 1x play, the only
    alternative to the fold, stays offered and accepted even after a cool-off
    started mid-round: it is the stake the limits made room for at the bet."""
    table, player, client = betting("uth", 10_000)
    other = make_player(table)  # keeps the windows open (an undecided participant)
    assert put_limits(client, {"limits": {"loss_day": 300}}).status_code == 200
    assert chip(client, table, "ante", 100).status_code == 200
    assert chip(client_for(other), table, "ante", 100).status_code == 200
    assert advance(table) == "preflop"
    assert my_options(client, table) == ["check"]
    round_id = HouseTable.objects.get(pk=table.pk).current_round_id
    assert {pid: options for pid, options, _ in offers(round_id)}[player] == ["check"]
    assert "call4x" in {pid: options for pid, options, _ in offers(round_id)}[other]
    refused(post(client, f"/api/tables/{table.pk}/decision/", {"option": "call4x"}), 403, "loss_limit_exceeded")
    assert post(client, f"/api/tables/{table.pk}/decision/", {"option": "check"}).status_code == 200
    assert advance(table) == "flop"
    assert my_options(client, table) == ["check"]
    assert advance(table) == "river"
    # A cool-off starts mid-round: the forced 1x play is still offered and taken.
    assert post(client, "/api/me/exclusion/", {"kind": "cool_off", "days": 1}).status_code == 200
    assert my_options(client, table) == ["call1x", "fold"]
    assert {pid: options for pid, options, _ in offers(round_id)}[player] == ["call1x", "fold"]
    played = post(client, f"/api/tables/{table.pk}/decision/", {"option": "call1x"})
    assert played.status_code == 200, played.content
    assert played.json()["amount"] == 100


# --- 4. all or nothing --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        {"limits": {"loss_day": 100, "bogus": 1}},
        {"limits": {"loss_day": 100, "deposit_day": -1}},
        {"limits": {"loss_day": 100}, "session_limit_minutes": 0},
        {"limits": {"loss_day": 100, "deposit_week": 10**30}},
        {"limits": {"loss_day": 100}, "reality_check_minutes": "soon"},
    ],
)
def test_a_refused_limit_change_leaves_every_limit_as_it_was(change) -> None:
    player = make_player(funds=0)
    client = client_for(player)
    set_up = put_limits(client, {"limits": {"loss_day": 500, "deposit_day": 700}, "session_limit_minutes": 90})
    assert set_up.status_code == 200
    before = client.get("/api/me/limits/").json()
    stored = ResponsibleGaming.objects.values().get(pk=player)
    refused(put_limits(client, change), 400, "invalid_limit")
    assert client.get("/api/me/limits/").json() == before
    assert ResponsibleGaming.objects.values().get(pk=player) == stored


# --- 5. no 500 from huge numbers ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "method", "body"),
    [
        ("/api/me/limits/", "put", {"reality_check_minutes": 2892877896053}),
        ("/api/me/limits/", "put", {"session_limit_minutes": 2**63}),
        ("/api/me/limits/", "put", {"limits": {"loss_week": 2**64}}),
        ("/api/me/exclusion/", "post", {"kind": "self_exclusion", "days": 1014629187}),
        ("/api/me/exclusion/", "post", {"kind": "cool_off", "days": 1014629187}),
        ("/api/me/exclusion/", "post", {"kind": "self_exclusion", "days": rg.MAX_EXCLUSION_DAYS + 1}),
    ],
)
def test_huge_numbers_are_a_400_with_a_code_and_change_nothing(path, method, body) -> None:
    player = make_player(funds=0)
    client = client_for(player)
    send = getattr(client, method)
    refused(send(path, data=json.dumps(body), content_type="application/json"), 400, "invalid_limit")
    assert not ResponsibleGaming.objects.filter(pk=player).exists()


def test_the_longest_self_exclusion_is_accepted() -> None:
    player = make_player(funds=0)
    response = post(client_for(player), "/api/me/exclusion/", {"kind": "self_exclusion", "days": rg.MAX_EXCLUSION_DAYS})
    assert response.status_code == 200, response.content
    assert response.json()["exclusion"] == "self_exclusion"
