"""What both families' projectors share (``ledger.services.projectors``):
the rows a projector holds, read from the database at most once per key."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

KeyT = TypeVar("KeyT", bound=Hashable)
RowT = TypeVar("RowT")


def held_row(rows: dict[KeyT, RowT], key: KeyT, read: Callable[[], RowT | None]) -> RowT | None:
    """``rows[key]``; else the row ``read()`` finds, then held in ``rows``; ``None``
    when there is none (not held: a later call reads again)."""
    if key not in rows:
        row = read()
        if row is None:
            return None
        rows[key] = row
    return rows[key]
