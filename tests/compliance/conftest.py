"""Fixtures of the compliance tests."""

from tests.compliance.browser import browser

__all__ = ["browser"]
