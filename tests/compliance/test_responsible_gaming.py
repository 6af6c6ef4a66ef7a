"""Responsible gaming (issue 8): deposit limits over 24 h / 7 days / 1 month
(a decrease at once, an increase after 24 h), loss limit, session time limit
with a reality check over the channel layer, self-exclusion and cool-off
(no bets, no deposits, told why with a specific code)."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from rest_framework.test import APIClient

from casino import responsible_gaming as rg
from casino.cashier import provider_callback, request_deposit
from casino.models import ResponsibleGaming
from ledger.services import NewEvent, StreamAppend, deposit, house_account, open_hold, player_accounts, post_hold

pytestmark = pytest.mark.django_db
EUR = "EUR"


@pytest.fixture
def user():
    return get_user_model().objects.create_user("rita", password="pw-rita-123")


def refused(code: str, func, **kwargs) -> dict:
    with pytest.raises(rg.ResponsibleGamingRefusal) as caught, transaction.atomic():
        func(**kwargs)
    assert caught.value.code == code
    assert caught.value.http_status == 403
    return caught.value.details


def paid_deposit(user, amount: int, key: str, now) -> None:
    txn = request_deposit(player_id=user.pk, amount=amount, currency=EUR, request_key=key, now=now)
    provider_callback(external_reference=txn.external_reference, status="paid", amount=amount, currency=EUR,
                      provider="acme", now=now)  # fmt: skip


def test_daily_deposit_limit_counts_requests_in_the_window(user):
    now = timezone.now()
    rg.set_limit(player_id=user.pk, kind="deposit_day", amount=1_000, currency=EUR, now=now)
    paid_deposit(user, 600, "a", now)
    request_deposit(player_id=user.pk, amount=300, currency=EUR, request_key="b", now=now)  # pending counts too
    details = refused("deposit_limit_exceeded", rg.assert_may_deposit, player_id=user.pk, amount=101, currency=EUR,
                      now=now)  # fmt: skip
    assert details["window"] == "day"
    assert details["remaining"] == 100
    rg.assert_may_deposit(player_id=user.pk, amount=100, currency=EUR, now=now)
    # 24 hours later the day window is empty again.
    rg.assert_may_deposit(player_id=user.pk, amount=1_000, currency=EUR, now=now + timedelta(hours=24, seconds=1))


def test_weekly_and_monthly_windows(user):
    now = timezone.now()
    rg.set_limit(player_id=user.pk, kind="deposit_week", amount=500, currency=EUR, now=now)
    rg.set_limit(player_id=user.pk, kind="deposit_month", amount=800, currency=EUR, now=now)
    paid_deposit(user, 500, "a", now)
    later = now + timedelta(days=2)
    assert refused("deposit_limit_exceeded", rg.assert_may_deposit, player_id=user.pk, amount=1, currency=EUR,
                   now=later)["window"] == "week"  # fmt: skip
    eight_days = now + timedelta(days=8)
    rg.assert_may_deposit(player_id=user.pk, amount=300, currency=EUR, now=eight_days)
    assert refused("deposit_limit_exceeded", rg.assert_may_deposit, player_id=user.pk, amount=301, currency=EUR,
                   now=eight_days)["window"] == "month"  # fmt: skip


def test_a_decrease_applies_at_once_an_increase_after_24_hours(user):
    now = timezone.now()
    rg.set_limit(player_id=user.pk, kind="deposit_day", amount=1_000, currency=EUR, now=now)
    rg.set_limit(player_id=user.pk, kind="deposit_day", amount=200, currency=EUR, now=now)
    refused("deposit_limit_exceeded", rg.assert_may_deposit, player_id=user.pk, amount=201, currency=EUR, now=now)
    rg.set_limit(player_id=user.pk, kind="deposit_day", amount=5_000, currency=EUR, now=now)
    refused("deposit_limit_exceeded", rg.assert_may_deposit, player_id=user.pk, amount=201, currency=EUR,
            now=now + timedelta(hours=23, minutes=59))  # fmt: skip
    rg.assert_may_deposit(player_id=user.pk, amount=5_000, currency=EUR, now=now + timedelta(hours=24))
    # Removing a limit is an increase too.
    rg.set_limit(player_id=user.pk, kind="deposit_day", amount=None, currency=EUR, now=now + timedelta(hours=25))
    refused("deposit_limit_exceeded", rg.assert_may_deposit, player_id=user.pk, amount=5_001, currency=EUR,
            now=now + timedelta(hours=26))  # fmt: skip
    rg.assert_may_deposit(player_id=user.pk, amount=10**9, currency=EUR, now=now + timedelta(hours=49))


def lose(user, stake: int, n: int) -> None:
    """A bet of ``stake`` the house keeps."""
    accounts = player_accounts(player_id=user.pk, currency=EUR)
    hold = open_hold(
        source=accounts.wallet, escrow=accounts.held, destination=house_account(table_id=1, currency=EUR),
        amount=stake, currency=EUR, idempotency_key=f"bet-{n}",
        cause=StreamAppend(f"round-{n}-player-{user.pk}", 0, [NewEvent("test.bet", {"amount": stake})], {}),
    )  # fmt: skip
    post_hold(hold_id=uuid.UUID(hold.hold_id), amount=stake, idempotency_key=f"post-{n}",
              cause=StreamAppend(f"round-{n}-player-{user.pk}", 1, [NewEvent("test.lost", {})], {}))  # fmt: skip


def test_loss_limit_refuses_a_bet_that_could_pass_it(user):
    now = timezone.now()
    accounts = player_accounts(player_id=user.pk, currency=EUR)
    deposit(wallet=accounts.wallet, amount=10_000, currency=EUR, external_reference="r", idempotency_key="d",
            actor="test")  # fmt: skip
    rg.set_limit(player_id=user.pk, kind="loss_day", amount=1_000, currency=EUR, now=now)
    lose(user, 700, 1)
    rg.assert_may_wager(player_id=user.pk, amount=300, currency=EUR, now=timezone.now())
    details = refused("loss_limit_exceeded", rg.assert_may_wager, player_id=user.pk, amount=301, currency=EUR,
                      now=timezone.now())  # fmt: skip
    assert details["lost"] == 700
    # Deposits are not losses: the limit is about play.
    assert rg.net_loss(player_id=user.pk, currency=EUR, since=now - timedelta(hours=1)) == 700


def test_self_exclusion_and_cool_off_stop_bets_and_deposits_with_their_code(user):
    now = timezone.now()
    rg.exclude(player_id=user.pk, currency=EUR, kind="cool_off", days=2, now=now)
    refused("cooling_off", rg.assert_may_wager, player_id=user.pk, amount=1, currency=EUR, now=now)
    details = refused("cooling_off", request_deposit, player_id=user.pk, amount=1, currency=EUR, request_key="k",
                      now=now)  # fmt: skip
    assert details["until"].startswith(str((now + timedelta(days=2)).date()))
    rg.assert_may_wager(player_id=user.pk, amount=1, currency=EUR, now=now + timedelta(days=2, seconds=1))
    rg.exclude(player_id=user.pk, currency=EUR, kind="self_exclusion", days=None, now=now)
    refused("self_excluded", rg.assert_may_wager, player_id=user.pk, amount=1, currency=EUR,
            now=now + timedelta(days=3650))  # fmt: skip
    # An exclusion is never shortened.
    rg.exclude(player_id=user.pk, currency=EUR, kind="cool_off", days=1, now=now)
    refused("self_excluded", rg.assert_may_wager, player_id=user.pk, amount=1, currency=EUR,
            now=now + timedelta(days=5))  # fmt: skip


def test_exclusion_bounds_are_checked(user):
    now = timezone.now()
    with pytest.raises(rg.InvalidLimit):
        rg.exclude(player_id=user.pk, currency=EUR, kind="cool_off", days=43, now=now)
    with pytest.raises(rg.InvalidLimit):
        rg.exclude(player_id=user.pk, currency=EUR, kind="self_exclusion", days=30, now=now)


def test_session_time_limit_refuses_bets_after_the_limit(user):
    """A session is continuous play: it starts at a wager and runs while wagers
    come within the idle gap; past the limit bets are refused until the gap has
    passed without one (then the next wager starts a new session)."""
    gap = rg.idle_gap()
    now = timezone.now()
    rg.set_session_limits(player_id=user.pk, currency=EUR, session_limit_minutes=60, reality_check_minutes=None)
    for minute in range(0, 60, 10):  # wagers every ten minutes: one session
        at = now + timedelta(minutes=minute)
        rg.assert_may_wager(player_id=user.pk, amount=1, currency=EUR, now=at)
        rg.note_wager(player_id=user.pk, currency=EUR, now=at)
    details = refused("session_time_limit_reached", rg.assert_may_wager, player_id=user.pk, amount=1, currency=EUR,
                      now=now + timedelta(minutes=60))  # fmt: skip
    assert details["session_started_at"] == now.isoformat()
    # Still refused just before the idle gap has passed since the last wager (minute 50).
    refused("session_time_limit_reached", rg.assert_may_wager, player_id=user.pk, amount=1, currency=EUR,
            now=now + timedelta(minutes=50) + gap - timedelta(seconds=1))  # fmt: skip
    fresh = now + timedelta(minutes=50) + gap
    rg.assert_may_wager(player_id=user.pk, amount=1, currency=EUR, now=fresh)
    rg.note_wager(player_id=user.pk, currency=EUR, now=fresh)
    assert ResponsibleGaming.objects.get(pk=user.pk).session_started_at == fresh


def test_reality_check_reaches_the_players_group_on_the_channel_layer(user):
    now = timezone.now()
    rg.set_session_limits(player_id=user.pk, currency=EUR, session_limit_minutes=None, reality_check_minutes=30)
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(f"player-{user.pk}", channel)
    try:
        assert rg.send_reality_checks(now=now + timedelta(minutes=30)) == 0  # no play, no session
        for minute in range(0, 61, 5):  # play every five minutes for an hour
            rg.note_wager(player_id=user.pk, currency=EUR, now=now + timedelta(minutes=minute))
            sent = rg.send_reality_checks(now=now + timedelta(minutes=minute))
            assert sent == (1 if minute in (30, 60) else 0), minute

        async def two() -> list[dict]:  # one event loop: the layer acknowledges the first before the second
            return [await layer.receive(channel), await layer.receive(channel)]

        for minute, message in zip((30, 60), async_to_sync(two)(), strict=True):
            assert message["type"] == "player.notice"
            assert message["notice"]["kind"] == "reality_check"
            assert message["notice"]["elapsed_minutes"] == minute
        # The session ends after the idle gap without a wager: no more reminders.
        assert rg.send_reality_checks(now=now + timedelta(minutes=60) + rg.idle_gap()) == 0
    finally:
        async_to_sync(layer.group_discard)(f"player-{user.pk}", channel)


def test_the_player_api_shows_and_sets_limits(user):
    client = APIClient()
    client.force_authenticate(user)
    response = client.put("/api/me/limits/", {"limits": {"deposit_week": 5_000}, "session_limit_minutes": 90},
                          format="json")  # fmt: skip
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["limits"]["deposit_week"]["in_force"] == 5_000
    assert body["session_limit_minutes"] == 90
    raised = client.put("/api/me/limits/", {"limits": {"deposit_week": 9_000}}, format="json").json()
    assert raised["limits"]["deposit_week"]["in_force"] == 5_000
    assert raised["limits"]["deposit_week"]["pending"] == 9_000
    bad = client.put("/api/me/limits/", {"limits": {"bogus": 1}}, format="json")
    assert bad.status_code == 400
    assert bad.json()["error"]["code"] == "invalid_limit"
    excluded = client.post("/api/me/exclusion/", {"kind": "cool_off", "days": 7}, format="json")
    assert excluded.json()["exclusion"] == "cool_off"
    deposit_response = client.post("/api/cashier/deposits/", {"amount": 10, "request_key": "k"})
    assert deposit_response.status_code == 403
    assert deposit_response.json()["error"]["code"] == "cooling_off"
    assert ResponsibleGaming.objects.filter(pk=user.pk).count() == 1
