"""How staff see the games' streams (registered with ``ledger.confidential``
at start-up, ``games.apps``): a house round or a poker hand in play exactly as a
spectator at its table sees it, through the players' own presenters (no list of
hidden fields of its own); the stored events once it is over. Every staff
surface reads events through ``ledger.confidential.staff_reader``. Each
family's view is in its wing: ``games.house.realtime.staff_view``,
``games.poker.realtime.staff_view``. Sealed values (``games.cards.vault``) read
``(sealed)`` everywhere, in play or not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ledger.confidential import register_sealed_shape


def as_stored(event_type: str, data: Mapping[str, Any]) -> Mapping[str, Any]:
    """The view of a stream staff see as stored (a deal that is over, a player stream)."""
    return data


def register() -> None:
    """Sealed values read ``(sealed)`` on every staff surface."""
    from games.cards.vault import is_sealed

    register_sealed_shape(is_sealed)
