"""What both families' seat tables share (``games.house.models.TableSeat``,
``games.poker.models.PokerSeat``): a player holds at most one seat at a table,
and a seat number at most one player."""

from __future__ import annotations

from django.db import models


def seat_constraints(prefix: str = "") -> list[models.BaseConstraint]:
    """The seat table's two unique constraints, named ``<prefix>one_seat_per_table``
    and ``<prefix>seat_number_unique`` (the names are the database's: never rename)."""
    return [
        models.UniqueConstraint(fields=["table", "player"], name=f"{prefix}one_seat_per_table"),
        models.UniqueConstraint(fields=["table", "seat_number"], name=f"{prefix}seat_number_unique"),
    ]
