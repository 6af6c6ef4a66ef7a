"""The operator's dashboard in a real browser (Debian's chromium, headless, through
the system chromedriver: ``make browser-deps``), as a non-superuser operator reads it
with a round in play: the alerts on top, the tables with their status, today's money,
refreshed in place from its fragment. A screenshot of the page goes to
``$CASINO_SCREENSHOTS`` (a folder; default: the test's temporary folder), to be looked at.

Skipped outside CI without chromium and chromedriver, failing in CI (``tests.compliance.browser``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission

from compliance.roles import OPERATOR, setup_roles
from tests.compliance.browser import needs_browser
from tests.compliance.dashboard_floor import build_floor
from tests.compliance.hidden_cards import cards_in

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, needs_browser]


def test_an_operator_reads_the_dashboard_in_a_browser(live_server: Any, browser: Any, settings: Any,
                                                      tmp_path: Path) -> None:  # fmt: skip
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    settings.CASINO_DASHBOARD_QUEUE_LAG_SECONDS = 30
    settings.CASINO_DASHBOARD_DEALER_GONE_SECONDS = 600
    settings.CASINO_DASHBOARD_REFRESH_SECONDS = 1
    shots = Path(os.environ.get("CASINO_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    setup_roles()
    operator = get_user_model().objects.create_user("floor", password="floor-manager-pw", is_staff=True)
    operator.groups.add(Group.objects.get(name=OPERATOR))
    built = build_floor(operator)

    browser.set_window_size(1400, 1100)
    browser.get(f"{live_server.url}/admin/login/?next=/admin/")
    browser.find_element(By.NAME, "username").send_keys("floor")
    browser.find_element(By.NAME, "password").send_keys("floor-manager-pw")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    WebDriverWait(browser, 20).until(expected_conditions.presence_of_element_located((By.ID, "dash-tables")))
    first = browser.find_element(By.CSS_SELECTOR, "#dashboard .updated").text
    # The page refreshes its dashboard in place (every second here): the time it was updated moves on.
    WebDriverWait(browser, 30).until(
        lambda b: b.find_element(By.CSS_SELECTOR, "#dashboard .updated").text.split(" ·")[0] != first.split(" ·")[0]
    )
    assert "stale" not in (browser.find_element(By.ID, "dashboard").get_attribute("class") or "")

    def read_the_floor() -> None:
        # The dashboard is swapped in place every second here: an element found just before a swap goes
        # stale, so the whole reading is taken again from fresh elements when that happens.
        alerts = browser.find_element(By.ID, "dash-alerts")
        tables = browser.find_element(By.ID, "dash-tables")
        assert alerts.location["y"] < tables.location["y"]  # the alerts first
        live = browser.find_element(By.CSS_SELECTOR, "tr[data-table='LIVE1']")
        assert built.live_round.game_number in live.text
        assert "live" in live.find_element(By.CSS_SELECTOR, ".status").text.lower()
        gone = browser.find_element(By.CSS_SELECTOR, "tr[data-table='GONE1'] .status")
        assert gone.value_of_css_property("background-color") == "rgba(198, 40, 40, 1)"  # red
        assert "Table GONE1: dealer gone." in alerts.text
        assert "10.00 EUR" in browser.find_element(By.ID, "dash-money").text
        assert cards_in(browser.page_source) == set()

    for attempt in range(10):
        try:
            read_the_floor()
            break
        except StaleElementReferenceException:
            if attempt == 9:
                raise
    browser.save_screenshot(str(shots / "dashboard-operator.png"))

    # A role with the games' permissions only: the tables and their alerts, no money.
    pit = Group.objects.create(name="pit boss")
    pit.permissions.set(Permission.objects.filter(content_type__app_label="games", codename__startswith="view_"))
    boss = get_user_model().objects.create_user("boss", password="pit-boss-pw-1", is_staff=True)
    boss.groups.add(pit)
    browser.delete_all_cookies()
    browser.get(f"{live_server.url}/admin/login/?next=/admin/")
    browser.find_element(By.NAME, "username").send_keys("boss")
    browser.find_element(By.NAME, "password").send_keys("pit-boss-pw-1")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    WebDriverWait(browser, 20).until(expected_conditions.presence_of_element_located((By.ID, "dash-tables")))

    def read_without_money() -> None:
        assert browser.find_elements(By.ID, "dash-money") == []
        assert "EUR" not in browser.find_element(By.ID, "dash-alerts").text

    for attempt in range(10):  # swapped in place every second, as above
        try:
            read_without_money()
            break
        except StaleElementReferenceException:
            if attempt == 9:
                raise
    browser.save_screenshot(str(shots / "dashboard-no-money-role.png"))
