"""How money is shown to operators: the currency's own decimals, grouped, with its code."""

from __future__ import annotations

import pytest

from ledger.currencies import CHIPS, display_money, format_minor


@pytest.mark.parametrize(
    ("amount", "currency", "shown"),
    [
        (150000, "EUR", "1,500.00 EUR"),
        (70000, "EUR", "700.00 EUR"),
        (5, "EUR", "0.05 EUR"),
        (-142460000, "EUR", "-1,424,600.00 EUR"),
        (123456, "JPY", "123,456 JPY"),  # no minor unit
        (1234567, "BHD", "1,234.567 BHD"),  # three decimals
        (1000000, CHIPS, "1,000,000 XXX"),  # tournament chips are whole
        (0, "USD", "0.00 USD"),
    ],
)
def test_display_money_uses_the_currency_table(amount: int, currency: str, shown: str) -> None:
    assert display_money(amount, currency) == shown


def test_display_money_of_nothing_or_an_unknown_code_still_renders() -> None:
    assert display_money(None, "EUR") == ""
    assert display_money(1500, "ZZZ") == "1,500 ZZZ"  # a forged row: the bare figure and its code, never a crash


def test_format_minor_ungrouped_is_unchanged() -> None:
    assert format_minor(123456, "EUR") == "1234.56 EUR"
    assert format_minor(123456, "EUR", grouped=True) == "1,234.56 EUR"
