"""The games app's operator admin: importing each wing's admin module registers its model admins."""

from __future__ import annotations

from games.house import admin as house_admin
from games.poker import admin as poker_admin

__all__ = ["house_admin", "poker_admin"]
