"""ISO 4217 currencies the ledger accepts, with their minor-unit exponent."""

from __future__ import annotations

from ledger.errors import UnknownCurrency

# Exponent = digits after the decimal point (EUR cents: 2, JPY: 0, BHD: 3).
MINOR_UNITS: dict[str, int] = {
    "EUR": 2,
    "USD": 2,
    "GBP": 2,
    "CHF": 2,
    "SEK": 2,
    "NOK": 2,
    "DKK": 2,
    "PLN": 2,
    "CZK": 2,
    "CAD": 2,
    "AUD": 2,
    "NZD": 2,
    "BRL": 2,
    "MXN": 2,
    "ZAR": 2,
    "INR": 2,
    "CNY": 2,
    "HKD": 2,
    "SGD": 2,
    "JPY": 0,
    "KRW": 0,
    "ISK": 0,
    "HUF": 2,
    "BHD": 3,
    "KWD": 3,
    "TND": 3,
}


# Tournament chips (issue #23): ISO 4217's "XXX", transactions involving no
# currency. Chips move through the ledger like money (so a tournament's chips
# sum to zero like any currency) but only between the accounts that hold chips
# (``CHIP_ACCOUNT_KINDS``): never a wallet, never money.
CHIPS = "XXX"


def check_currency(code: str) -> str:
    """Return ``code`` if known, else raise ``UnknownCurrency``."""
    if code not in MINOR_UNITS:
        raise UnknownCurrency(f"unknown currency {code!r}", currency=code)
    return code


def check_unit(code: str) -> str:
    """A ledger unit: a money currency (``check_currency``) or tournament chips (``CHIPS``)."""
    return code if code == CHIPS else check_currency(code)


def major_to_minor(amount: str, currency: str) -> int:
    """``"12.34"`` EUR -> 1234: exact decimal string to integer minor units."""
    exponent = MINOR_UNITS[check_currency(currency)]
    whole, _, frac = amount.strip().partition(".")
    if len(frac) > exponent:
        raise ValueError(f"{amount!r} has more than {exponent} decimals for {currency}")
    sign = -1 if whole.startswith("-") else 1
    return sign * (abs(int(whole or "0")) * 10**exponent + int((frac or "0").ljust(exponent, "0") or "0"))


def format_minor(amount: int, currency: str, *, grouped: bool = False) -> str:
    """1234 EUR -> ``"12.34 EUR"``; tournament chips are whole (``"1234 XXX"``).

    ``grouped``: thousands separated by commas (``123456789`` EUR ->
    ``"1,234,567.89 EUR"``), how the operator's screens show money
    (``display_money``). The digits after the point are always the currency's
    minor-unit exponent, never rounded: the figure is the ledger's, to the unit."""
    exponent = 0 if currency == CHIPS else MINOR_UNITS[check_currency(currency)]
    sign = "-" if amount < 0 else ""
    whole, frac = divmod(abs(amount), 10**exponent)
    digits = f"{whole:,}" if grouped else str(whole)
    return f"{sign}{digits}.{frac:0{exponent}d} {currency}" if exponent else f"{sign}{digits} {currency}"


def display_money(amount: int | None, currency: str | None) -> str:
    """The one way an operator's screen (admin, dashboard, reports page) shows
    an amount in minor units: grouped, with the currency's decimals and code
    (``display_money(150000, "EUR") == "1,500.00 EUR"``). ``None`` (no amount)
    is shown as an empty string; an unknown currency code as the bare grouped
    integer followed by the code, so a forged or legacy row still renders."""
    if amount is None:
        return ""
    if currency is None or (currency != CHIPS and currency not in MINOR_UNITS):
        return f"{int(amount):,} {currency or ''}".rstrip()
    return format_minor(int(amount), currency, grouped=True)
