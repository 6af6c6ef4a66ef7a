"""Debian's chromium, headless, driven by Selenium through the system
chromedriver (``make browser-deps``), for the real-browser admin tests.

Outside CI a test marked ``needs_browser`` is skipped when chromium or
chromedriver is absent; in CI (``CI=true``) it must run, so a missing browser fails it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")

needs_browser = pytest.mark.skipif(
    not IN_CI and not (CHROMIUM and CHROMEDRIVER), reason="no chromium/chromedriver (make browser-deps)"
)


@pytest.fixture
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    assert CHROMIUM, "CI needs Debian's chromium: make browser-deps"
    assert CHROMEDRIVER, "CI needs Debian's chromium and chromedriver: make browser-deps"
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.implicitly_wait(10)
    try:
        yield driver
    finally:
        driver.quit()


def admin_login(browser: Any, base_url: str, *, username: str, password: str, next_path: str, title: str) -> None:
    """Log in to the admin through its form and wait until the redirect to
    ``next_path`` has landed (its page title contains ``title``): navigating
    before that would be replaced by the redirect arriving after."""
    from urllib.parse import quote

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{base_url}/admin/login/?next={quote(next_path)}")
    browser.find_element(By.NAME, "username").send_keys(username)
    browser.find_element(By.NAME, "password").send_keys(password)
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    WebDriverWait(browser, 10).until(expected_conditions.title_contains(title))
