"""The admin void flow once in a real browser: Debian's chromium, headless,
driven by Selenium through the system chromedriver (``make browser-deps``;
``tests.compliance.browser``: skipped outside CI without them, failing in CI).
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from compliance.roles import OPERATOR, setup_roles
from games.house.models import HouseRound
from games.house.services import place_chip
from ledger.models import Event
from tests.compliance.browser import needs_browser
from tests.house.services.conftest import key, later, make_player, make_table, open_round, wallet

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, needs_browser]


def test_an_operator_voids_a_round_in_the_admin_in_a_real_browser(live_server, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    setup_roles()
    operator = get_user_model().objects.create_user("shift", password="shift-manager-pw", is_staff=True)
    operator.groups.add(Group.objects.get(name=OPERATOR))
    table = make_table("uth", code="UTHB")
    alice = make_player(table)
    tick = open_round(table)
    place_chip(table_id=table.pk, player_id=alice, spot="ante", amount=500, idempotency_key=key(), now=later(tick))
    assert wallet(alice) == 100_000 - 1_000  # ante and its automatic ante_plus
    round_row = HouseRound.objects.get()

    browser.get(f"{live_server.url}/admin/login/?next=/admin/games/houseround/")
    browser.find_element(By.NAME, "username").send_keys("shift")
    browser.find_element(By.NAME, "password").send_keys("shift-manager-pw")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    # Search the round by its game number, open it, read its timeline.
    browser.find_element(By.NAME, "q").send_keys(round_row.game_number + "\n")
    # The unfiltered list shows the same link: wait for the results page, or the
    # click can land on the old page's link as it goes away (stale element).
    WebDriverWait(browser, 10).until(expected_conditions.url_contains("q="))
    browser.find_element(By.LINK_TEXT, round_row.game_number).click()
    assert "house_round.opened" in browser.find_element(By.ID, "round-timeline").text
    browser.find_element(By.ID, "control-void").click()
    browser.find_element(By.NAME, "reason").send_keys("shuffler malfunction")
    browser.find_element(By.ID, "submit-void").click()  # without confirming
    WebDriverWait(browser, 10).until(
        expected_conditions.text_to_be_present_in_element((By.ID, "round-control"), "needs your confirmation")
    )
    assert HouseRound.objects.get().status == "open"
    browser.find_element(By.NAME, "reason").clear()
    browser.find_element(By.NAME, "reason").send_keys("shuffler malfunction")
    browser.find_element(By.NAME, "confirm").click()
    browser.find_element(By.ID, "submit-void").click()
    message = browser.find_element(By.CSS_SELECTOR, "ul.messagelist").text
    assert f"void done for {round_row.game_number}".lower() in message.lower()  # the admin theme capitalises
    assert HouseRound.objects.get().status == "voided"
    assert wallet(alice) == 100_000
    action = Event.objects.get(type="operator.action")
    assert (action.data["action"], action.metadata["actor"]) == ("round.void", f"user:{operator.pk}")
