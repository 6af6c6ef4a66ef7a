"""``Problem``: one thing ``verify_ledger`` finds wrong. Its own module so that
``verify`` and the checks it runs (``verify_legs``) both import it and not each
other."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing that is wrong; ``event_id`` names the bad event where one is to blame."""

    check: str
    message: str
    event_id: int | None = None

    def __str__(self) -> str:
        where = f"event {self.event_id}: " if self.event_id is not None else ""
        return f"[{self.check}] {where}{self.message}"
