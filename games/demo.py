"""Demo data: one open live table per game, so ``make run`` deals at once."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from casino.demo import DemoLogins
from games.models import HouseTable

WIDE = {"min": 100, "max": 100_000}
DEMO_TABLES: list[dict[str, Any]] = [
    {
        "code": "UTH1",
        "name": "Ultimate Texas Hold'em (demo)",
        "game": "uth",
        "limits": {"ante": WIDE, "best_five": WIDE},
        "pay_tables": {"ante_plus": 1, "best_five": 1},
    },
    {
        "code": "CH1",
        "name": "Casino Hold'em (demo)",
        "game": "casino_holdem",
        "limits": {"ante": WIDE, "bonus": WIDE},
        "pay_tables": {"ante": 1, "bonus": 1},
    },
    {
        "code": "XH1",
        "name": "Xtreme Hold'em (demo)",
        "game": "xtreme",
        "limits": {"ante": WIDE, "player_bonus": WIDE, "hole_card_bonus": WIDE},
        "pay_tables": {"xtra_bonus": 1, "player_bonus": 1, "hole_card_bonus": 1},
    },
]


def seed_tables(logins: DemoLogins) -> list[str]:
    """Create the demo tables once (open, shared hand); the dealer worker deals at
    them as soon as it starts (``games.tasks``: worker ready -> start open tables)."""
    lines = []
    for spec in DEMO_TABLES:
        table, _ = HouseTable.objects.get_or_create(
            code=spec["code"], defaults={**spec, "currency": settings.CASINO_DEFAULT_CURRENCY, "is_open": True}
        )
        lines.append(f"demo table {table.code:<5}            id {table.pk}, ws://<host>/ws/tables/{table.pk}/")
    return lines
