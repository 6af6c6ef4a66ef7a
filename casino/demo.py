"""Demo data for the embedded default: logins, two funded players (a poker hand
needs two), one table per game.

``seed_demo`` is idempotent: running it again changes nothing that exists.
Each app contributes a seeder listed in ``DEMO_SEEDERS``; a seeder takes the
``DemoLogins`` and returns lines to print for the person starting the system.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser
from django.db import transaction

OPERATOR_USERNAME = "operator"
OPERATOR_PASSWORD = "operator-demo-password"
PLAYER_USERNAME = "demo"
PLAYER_PASSWORD = "demo-player-password"
# The second player: the poker ring game deals only with two or more seated.
OPPONENT_USERNAME = "demo2"
OPPONENT_PASSWORD = "demo2-player-password"

# "module:function" of every app's seeder, run in order after the logins exist.
DEMO_SEEDERS: list[str] = [
    "ledger.demo:seed_wallet",
    "games.house.demo:seed_tables",
    "games.poker.demo:seed_poker_tables",
    "games.poker.demo_bots:seed_demo_tournament",
    "compliance.demo:seed_roles",
]


@dataclass(frozen=True)
class DemoLogins:
    operator: AbstractUser
    player: AbstractUser
    opponent: AbstractUser

    @property
    def players(self) -> tuple[AbstractUser, AbstractUser]:
        return self.player, self.opponent


def _ensure_user(username: str, password: str, *, staff: bool) -> AbstractUser:
    user_model = get_user_model()
    user, created = user_model.objects.get_or_create(username=username)
    if created:
        user.set_password(password)
        user.is_staff = staff
        user.is_superuser = staff
        user.save()
    return user


@transaction.atomic
def seed_demo() -> list[str]:
    """Create the demo logins and let every app add its demo data."""
    logins = DemoLogins(
        operator=_ensure_user(OPERATOR_USERNAME, OPERATOR_PASSWORD, staff=True),
        player=_ensure_user(PLAYER_USERNAME, PLAYER_PASSWORD, staff=False),
        opponent=_ensure_user(OPPONENT_USERNAME, OPPONENT_PASSWORD, staff=False),
    )
    lines = [
        f"operator login (admin site): {OPERATOR_USERNAME} / {OPERATOR_PASSWORD}",
        f"demo player login:           {PLAYER_USERNAME} / {PLAYER_PASSWORD}",
        f"second demo player login:    {OPPONENT_USERNAME} / {OPPONENT_PASSWORD}",
    ]
    for dotted in DEMO_SEEDERS:
        module_name, func_name = dotted.split(":")
        lines.extend(getattr(importlib.import_module(module_name), func_name)(logins))
    return lines
