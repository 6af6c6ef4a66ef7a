"""Demo poker table: one open no-limit hold'em ring game (``make run`` shows it)."""

from __future__ import annotations

from django.conf import settings

from casino.demo import DemoLogins
from games.poker.models import PokerTable

# Minor units (EUR cents): blinds 0.05/0.10, buy-in 2.00 to 10.00, seed 001's rake.
DEMO_POKER_TABLE = {
    "name": "Texas Hold'em no limit 0.05/0.10",
    "variant": "no_limit",
    "max_seats": 6,
    "small_blind": 5,
    "big_blind": 10,
    "buy_in_min": 200,
    "buy_in_max": 1_000,
    "turn_seconds": 20,
    "time_bank_seconds": 30,
    "reservation_seconds": 300,
}


def seed_poker_tables(logins: DemoLogins) -> list[str]:
    """Create the demo poker table once (an existing one is left as it is)."""
    table, _ = PokerTable.objects.get_or_create(
        code="NL1", defaults={**DEMO_POKER_TABLE, "currency": settings.CASINO_DEFAULT_CURRENCY, "is_open": True}
    )
    return [f"demo poker table {table.code:<6} {table.name}, {table.currency} (id {table.pk})"]
