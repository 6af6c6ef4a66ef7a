"""The client's shell in a real browser (Debian's chromium, headless,
``tests.compliance.browser``; issue 38): a wrong password answered with the
API's refusal in the page, a demo player's login, the lobby listing every
house table with its light, limits and (at Xtreme) the STAX jackpot meter, the
balance in the top bar, the switch to French, and the phone-sized layout.
Screenshots go to ``$CASINO_SCREENSHOTS`` when it is set."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from casino.demo import PLAYER_PASSWORD, PLAYER_USERNAME, seed_demo
from games.house.models import HouseTable
from tests.compliance.browser import needs_browser

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, needs_browser]


def test_a_player_logs_in_reads_the_lobby_and_switches_to_french(live_server, browser, tmp_path: Path) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as until
    from selenium.webdriver.support.ui import Select, WebDriverWait

    shots = Path(os.environ.get("CASINO_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    seed_demo()
    # The views redraw (lobby refresh, language switch): an element read as it goes is read again.
    wait = WebDriverWait(browser, 15, ignored_exceptions=(StaleElementReferenceException,))
    browser.set_window_size(1280, 800)
    browser.get(f"{live_server.url}/")
    wait.until(until.presence_of_element_located((By.ID, "login-form")))

    browser.find_element(By.ID, "username").send_keys(PLAYER_USERNAME)
    browser.find_element(By.ID, "password").send_keys("not-the-password")
    browser.find_element(By.ID, "login-submit").click()
    wait.until(lambda b: b.find_element(By.ID, "login-error").text)
    assert "invalid_credentials" in browser.find_element(By.ID, "login-error").text
    browser.save_screenshot(str(shots / "client-login-refused.png"))

    browser.find_element(By.ID, "password").clear()
    browser.find_element(By.ID, "password").send_keys(PLAYER_PASSWORD)
    browser.find_element(By.ID, "login-submit").click()
    wait.until(until.presence_of_element_located((By.CSS_SELECTOR, "#house-tables tr")))
    rows = {
        row.get_attribute("data-table"): row.text for row in browser.find_elements(By.CSS_SELECTOR, "#house-tables tr")
    }
    assert set(rows) == set(HouseTable.objects.values_list("code", flat=True))
    xtreme = HouseTable.objects.get(game="xtreme")
    assert "Star" in rows[xtreme.code]  # the STAX meter's pools
    assert "Xtreme Hold'em" in rows[xtreme.code]
    wait.until(lambda b: "€" in b.find_element(By.ID, "balance").text)
    browser.save_screenshot(str(shots / "client-lobby.png"))

    Select(browser.find_element(By.ID, "language")).select_by_value("fr")
    wait.until(lambda b: b.find_element(By.TAG_NAME, "h1").text == "Salon")
    assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == "fr"
    browser.save_screenshot(str(shots / "client-lobby-fr.png"))

    browser.set_window_size(390, 844)
    browser.save_screenshot(str(shots / "client-lobby-phone.png"))
