"""The compliance reports page in a real browser (Debian's chromium, headless;
``tests.compliance.browser``), as the ``compliance`` role, after issue 36's
scenario (``tests/compliance/report_scenario.py``: the STAX pools seeded from
the house, a pool hit, a round the house paid, a raked poker hand, a guaranteed
Sit & Go): a window of 14 days with play on one, so thirteen are drawn at zero;
the day's hold is the stakes minus the payouts, the seeding on its own line.
The screenshot goes to ``$CASINO_SCREENSHOTS`` when it is set.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.utils import timezone

from compliance.reports import house_days
from compliance.roles import COMPLIANCE, setup_roles
from ledger.currencies import display_money
from tests.compliance.browser import admin_login, needs_browser
from tests.compliance.report_scenario import play

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, needs_browser]


def test_the_compliance_role_reads_the_reports_page_in_a_real_browser(live_server, browser, tmp_path):
    from selenium.webdriver.common.by import By

    shots = Path(os.environ.get("CASINO_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    play()
    setup_roles()
    officer = get_user_model().objects.create_user("auditor", password="auditor-reads-pw", is_staff=True)
    officer.groups.add(Group.objects.get(name=COMPLIANCE))
    today = timezone.now().date()
    [row] = house_days(start=today, days=1).rows

    browser.set_window_size(1400, 1300)
    admin_login(browser, live_server.url, username="auditor", password="auditor-reads-pw",
                next_path="/admin/compliance/complianceaccess/?days=14", title="Compliance reports")  # fmt: skip
    browser.save_screenshot(str(shots / "admin-compliance-reports.png"))

    chart = browser.find_element(By.CSS_SELECTOR, "svg.handle-hold-chart")
    assert chart.size["width"] >= 700
    assert chart.size["height"] >= 280
    bars = chart.find_elements(By.TAG_NAME, "rect")
    assert len(bars) == 3 + 2 * 14  # the legend's three swatches, a handle and a hold bar for each day
    figures = [bar.find_element(By.TAG_NAME, "title").get_attribute("textContent") for bar in bars[3:]]
    assert f"{today.isoformat()} handle {display_money(row['handle'], 'EUR')}" in figures
    assert f"{today.isoformat()} hold {display_money(row['hold'], 'EUR')}" in figures
    assert sum(bar.get_attribute("height") == "0.0" for bar in bars[3:]) == 2 * 13  # the days without play
    body = browser.find_element(By.ID, "compliance-reports").text
    assert "last 14 days" in body
    assert display_money(row["progressive_seeding"], "EUR") in body  # 24,250.00 EUR: seeding, not a payout
    assert display_money(row["hold"], "EUR") in body
    assert row["hold"] == row["handle"] - row["payouts"]
    assert len(browser.find_elements(By.XPATH, "//h1[text()='Compliance reports']")) == 1
