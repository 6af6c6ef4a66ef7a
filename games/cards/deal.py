"""Where each dealt card came from in the shuffled deck (the deal order of a
provably-fair deal, docs/fairness.md)."""

from __future__ import annotations

from typing import NamedTuple


class DealtCard(NamedTuple):
    """Deck ``position`` (0 = the top card) went to ``to`` as its ``slot``-th card.

    ``to`` is the game's name for the place: house rounds ``shared``,
    ``player:<id>``, ``dealer``, ``board``; poker hands ``seat:<n>``, ``burn``,
    ``board``."""

    position: int
    card: str
    to: str
    slot: int

    def as_json(self) -> dict[str, int | str]:
        return {"position": self.position, "card": self.card, "to": self.to, "slot": self.slot}
