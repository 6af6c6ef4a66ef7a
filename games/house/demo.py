"""Demo tables: one open table per house-banked game, the demo player seated at each."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from casino.demo import DemoLogins
from games.house.models import HouseTable
from games.house.rules.bonus_spin import EXAMPLE_WHEEL
from games.house.rules.table_config import default_chips
from games.house.services import assign_seat

# Minor units (EUR cents): 1.00 to 500.00 on the Ante, side bets 1.00 to 100.00.
_ANTE = {"min": 100, "max": 50_000}
_SIDE = {"min": 100, "max": 10_000}
_PROGRESSIVES = {
    "reset": {"star": 1_000_000, "spade": 250_000, "heart": 100_000, "diamond": 50_000, "club": 25_000},
    "contribution_bp": {"star": 200, "spade": 150, "heart": 100, "diamond": 75, "club": 50},
}

DEMO_TABLES: list[dict[str, Any]] = [
    {
        "code": "UTH1",
        "name": "Ultimate Texas Hold'em (shared hand)",
        "game": "uth",
        "hand_mode": "shared",
        "limits": {"ante": _ANTE, "best_five": _SIDE},
        "pay_tables": {"ante_plus": 1, "best_five": 1},
    },
    {
        "code": "CHE1",
        "name": "Casino Hold'em (shared hand)",
        "game": "casino_holdem",
        "hand_mode": "shared",
        "limits": {"ante": _ANTE, "bonus": _SIDE},
        "pay_tables": {"ante": 1, "bonus": 1},
    },
    {
        "code": "XTR1",
        "name": "Xtreme Hold'em (per seat)",
        "game": "xtreme",
        "hand_mode": "per_seat",
        "max_seats": 7,
        "limits": {
            "ante": _ANTE,
            "player_bonus": _SIDE,
            "hole_card_bonus": _SIDE,
            "stax": _SIDE,
            "bonus_spin": {"min": 100, "max": 500},
        },
        "pay_tables": {"xtra_bonus": 1, "player_bonus": 1, "hole_card_bonus": 1, "stax": 1},
        "wheel": EXAMPLE_WHEEL.as_dict(),
        "progressives": _PROGRESSIVES,
    },
]


def seed_tables(logins: DemoLogins) -> list[str]:
    """Create the demo tables once (existing ones are left as they are) and seat the demo
    player. Each gets its currency's default chip set (``default_chips``)."""
    lines = []
    currency = settings.CASINO_DEFAULT_CURRENCY
    for spec in DEMO_TABLES:
        defaults = {k: v for k, v in spec.items() if k != "code"}
        table, _ = HouseTable.objects.get_or_create(
            code=spec["code"],
            defaults={"chips": default_chips(currency), **defaults, "currency": currency, "is_open": True},
        )
        assign_seat(table_id=table.pk, player_id=logins.player.pk)
        lines.append(f"demo table {table.code:<6}       {table.name}, {table.currency} (id {table.pk})")
    return lines
