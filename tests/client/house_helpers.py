"""Helpers of the house-table browser tests (tests/client/test_browser_house.py): a
funded player with a password, a Chromium of a given size, logging in through the
page and reading a panel's elements."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model

from ledger.services import deposit, player_accounts
from tests.compliance.browser import CHROMEDRIVER, CHROMIUM

DESKTOP = (1280, 800)
PHONE = (390, 844)


def funded_player(name: str, funds: int) -> tuple[int, str]:
    """A player ``name`` with ``funds`` EUR minor units; (id, password)."""
    password = f"{name}-pw-123456"
    user = get_user_model().objects.create_user(username=name, password=password)
    deposit(wallet=player_accounts(player_id=user.pk, currency="EUR").wallet, amount=funds, currency="EUR",
            external_reference=f"client-{name}", idempotency_key=f"client-dep-{name}", actor="test")  # fmt: skip
    return int(user.pk), password


@contextmanager
def chromium(size: tuple[int, int] = DESKTOP) -> Iterator[Any]:
    """Headless Debian chromium (as ``tests.compliance.browser.browser``) at ``size`` CSS pixels."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    assert CHROMIUM, "make browser-deps"
    assert CHROMEDRIVER, "make browser-deps"
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 f"--window-size={size[0]},{size[1]}", "--force-device-scale-factor=1"):  # fmt: skip
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def wait(driver: Any, timeout: float = 20) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.1)


def log_in(driver: Any, base: str, username: str, password: str) -> None:
    """Through the page's own form; back at the lobby once the token is kept."""
    from selenium.webdriver.common.by import By

    driver.get(f"{base}/#/login")
    wait(driver).until(lambda d: d.find_elements(By.ID, "username"))
    driver.find_element(By.ID, "username").send_keys(username)
    driver.find_element(By.ID, "password").send_keys(password)
    driver.find_element(By.ID, "login-submit").click()
    wait(driver).until(lambda d: d.find_elements(By.ID, "house-tables"))


def element(driver: Any, table_id: int, name: str) -> Any:
    """The panel's element ``t<table>-<name>``, or None."""
    from selenium.webdriver.common.by import By

    found = driver.find_elements(By.ID, f"t{table_id}-{name}")
    return found[0] if found else None


def attr(driver: Any, table_id: int, name: str, attribute: str) -> str | None:
    """The panel element's ``attribute`` (None when it is not there), read again when a redraw
    replaced the element between the find and the read."""
    for _ in range(20):
        found = element(driver, table_id, name)
        if found is None:
            return None
        try:
            return str(found.text) if attribute == "text" else found.get_attribute(attribute)
        except Exception:
            continue
    return None


def data(driver: Any, table_id: int, name: str, field: str) -> str | None:
    """``data-<field>`` of the panel's element (None when it is not there)."""
    return attr(driver, table_id, name, f"data-{field}")


class Shots:
    """Screenshots of each step, in ``$CASINO_SCREENSHOTS`` (else the test's tmp_path)."""

    def __init__(self, tmp_path: Path) -> None:
        self.dir = Path(os.environ.get("CASINO_SCREENSHOTS") or tmp_path)
        self.dir.mkdir(parents=True, exist_ok=True)

    def take(self, driver: Any, name: str) -> Path:
        path = self.dir / f"client-house-{name}.png"
        driver.save_screenshot(str(path))
        return path
