"""Regulator reports (issue 8): header (title, period, generated at, filters,
software version), "No Activity" when empty, daily player account summary
reconciled against the ledger, progressive pool report, CSV and JSON."""

from __future__ import annotations

import csv
import io
import uuid
from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone

from casino.cashier import operator_decide, provider_callback, request_withdrawal
from compliance.reports import player_account_summary, progressive_pool_report
from compliance.roles import COMPLIANCE, setup_roles
from ledger.models import AccountKind
from ledger.services import (
    NewEvent,
    StreamAppend,
    deposit,
    ensure_account,
    house_account,
    open_hold,
    player_accounts,
    post_hold,
    transfer,
)
from tests.compliance.staff import staff

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]
EUR = "EUR"


def cause(stream: str, version: int, kind: str = "test.event") -> StreamAppend:
    return StreamAppend(stream, version, [NewEvent(kind, {})], {})


@pytest.fixture
def day_of_play():
    """Player 1: deposits 10,000, stakes 1,000 and 500, wins 1,800 back, withdraws 2,000
    (paid) and asks for 300 more (rejected). The pool takes 50 and pays 20."""
    user = get_user_model().objects.create_user("rex", password="pw-rex-123")
    accounts = player_accounts(player_id=user.pk, currency=EUR)
    house = house_account(table_id=1, currency=EUR)
    pool = ensure_account(kind=AccountKind.POOL, owner="jackpot:uth", currency=EUR)
    deposit(wallet=accounts.wallet, amount=10_000, currency=EUR, external_reference="p1", idempotency_key="d1",
            actor="test")  # fmt: skip
    for n, stake in enumerate((1_000, 500)):
        hold = open_hold(source=accounts.wallet, escrow=accounts.held, destination=house, amount=stake,
                         currency=EUR, idempotency_key=f"b{n}", cause=cause(f"r{n}", 0))  # fmt: skip
        post_hold(hold_id=uuid.UUID(hold.hold_id), amount=stake, idempotency_key=f"p{n}", cause=cause(f"r{n}", 1))
    transfer(debit_account=house, credit_account=accounts.wallet, amount=1_800, currency=EUR, idempotency_key="w",
             cause=cause("r0", 2), kind="payout")  # fmt: skip
    transfer(debit_account=accounts.wallet, credit_account=pool, amount=50, currency=EUR, idempotency_key="j",
             cause=cause("r1", 2), kind="progressive")  # fmt: skip
    transfer(debit_account=pool, credit_account=accounts.wallet, amount=20, currency=EUR, idempotency_key="jp",
             cause=cause("r1", 3), kind="jackpot")  # fmt: skip
    operator = get_user_model().objects.create_user("op", password="pw-op-1", is_staff=True)
    now = timezone.now()
    paid = request_withdrawal(player_id=user.pk, amount=2_000, currency=EUR, request_key="w1", now=now)
    operator_decide(transaction_id=paid.pk, approve=True, operator=operator, reason="", now=now)
    provider_callback(external_reference=paid.external_reference, status="paid", amount=2_000, currency=EUR,
                      provider="acme", now=now)  # fmt: skip
    rejected = request_withdrawal(player_id=user.pk, amount=300, currency=EUR, request_key="w2", now=now)
    operator_decide(transaction_id=rejected.pk, approve=False, operator=operator, reason="no", now=now)
    return user


def test_daily_player_account_summary_reconciles(day_of_play):
    report = player_account_summary(day=timezone.now().date())
    [row] = report.rows
    assert row == {
        "player": str(day_of_play.pk), "currency": EUR, "opening_balance": 0, "deposits": 10_000,
        "withdrawals": 2_000, "stakes": 1_550, "returns": 1_820, "adjustments": 0,
        "closing_balance": 10_000 - 2_000 - 1_550 + 1_820, "refund_due": 0, "refunded": 0, "suspense_balance": 0,
        "reconciled": True,
    }  # fmt: skip
    yesterday = player_account_summary(day=timezone.now().date() - timedelta(days=1))
    assert yesterday.as_json()["status"] == "No Activity"
    tomorrow = player_account_summary(day=timezone.now().date() + timedelta(days=1))
    assert tomorrow.rows == []  # balances carried, but no activity that day


def test_progressive_pool_report(day_of_play):
    start = timezone.now() - timedelta(hours=1)
    report = progressive_pool_report(start=start, end=start + timedelta(hours=2))
    assert report.rows == [
        {"pool": "jackpot:uth", "currency": EUR, "opening_balance": 0, "contributions": 50, "seeding": 0,
         "payouts": 20, "closing_balance": 30}
    ]  # fmt: skip


def test_reports_carry_the_regulator_header_in_csv_and_json(day_of_play):
    setup_roles()
    _, client = staff("cat", COMPLIANCE)
    today = timezone.now().date().isoformat()
    body = client.get(f"/api/compliance/reports/player-account-summary/?day={today}").json()
    assert body["title"] == "Daily player account summary"
    assert body["period"]["from"].startswith(today)
    assert body["software_version"] == settings.CASINO_VERSION
    assert body["filters"] == {"player": None, "currency": None}
    assert "generated_at" in body
    text = client.get(f"/api/compliance/reports/player-account-summary/?day={today}&output=csv").content.decode()
    lines = list(csv.reader(io.StringIO(text)))
    assert lines[0] == ["Title", "Daily player account summary"]
    assert lines[4] == ["Software version", settings.CASINO_VERSION]
    assert lines[6][:3] == ["player", "currency", "opening_balance"]
    empty = client.get("/api/compliance/reports/progressive-pools/?from=2020-01-01T00:00:00Z"
                       "&to=2020-01-02T00:00:00Z&output=csv").content.decode()  # fmt: skip
    assert empty.rstrip().splitlines()[-1] == "No Activity"
    assert client.get("/api/compliance/reports/nope/").json()["error"]["code"] == "unknown_report"


def test_admin_reports_page_shows_the_handle_and_hold_chart(day_of_play):
    setup_roles()
    _, client = staff("cat2", COMPLIANCE)
    response = client.get("/admin/compliance/complianceaccess/?days=7")
    page = response.content.decode()
    [chart] = [part.partition("</svg>")[0] for part in page.split('class="handle-hold-chart"')[1:]]  # one currency
    # Handle 1,500 (stakes posted to the house), payouts 1,800: hold -300, as money.
    assert f"{timezone.now().date().isoformat()} handle 15.00 EUR" in chart
    assert "hold -3.00 EUR" in chart
    assert '<td class="amount negative">-3.00 EUR</td>' in page
    # A bar pair for each of the 7 days, the six without play at zero height; a legend, the axes' names.
    assert chart.count("<title>") == 14
    assert chart.count('height="0.0"') == 12
    assert all(text in chart for text in ("handle (stakes)", "hold (handle", ">EUR</text>", ">day (UTC)</text>"))
    assert page.count(">Compliance reports</h") == 1  # one heading (the page's title; the template's is gone)


@pytest.mark.parametrize("days", ["", "0", "367", "abc", "9" * 40, "-1"])
def test_admin_reports_page_answers_any_window(days):
    """A window out of range or not a number shows the default 30 days, never a 500."""
    setup_roles()
    _, client = staff("cat3", COMPLIANCE)
    response = client.get("/admin/compliance/complianceaccess/", {"days": days})
    assert response.status_code == 200
    assert "last 30 days" in response.content.decode()


@pytest.mark.parametrize(
    "query",
    [
        "house-days/?from=2026-01-01&currency=E%00R",
        "house-days/?from=2026-01-01&currency=eur",
        "tournaments/?from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z&currency=%00",
        "table-performance/?from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z&currency=EURO",
        "player-account-summary/?day=2026-01-01&player=1%00",
        "player-account-summary/?day=2026-01-01&player=rex",
    ],
)
def test_a_filter_of_another_shape_is_refused_and_never_reaches_the_database(query):
    """A currency is three capital letters, a player an id: anything else (a NUL
    among it, which PostgreSQL refuses in text) is ``invalid_report_parameter``."""
    setup_roles()
    _, client = staff("cat4", COMPLIANCE)
    response = client.get(f"/api/compliance/reports/{query}")
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["details"]["parameter"]) == (
        "invalid_report_parameter", "player" if "player=" in query else "currency")  # fmt: skip
