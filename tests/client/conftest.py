"""The client tests share the admin tests' headless Chromium (tests/compliance/browser.py)."""

from tests.compliance.browser import browser

__all__ = ["browser"]
