"""What staff see of a house round in play (``games.tables.staff_view``, registered
at start-up by ``games.apps``): while the round is not closed,
``games.house.realtime.presenters.public_delta`` with no viewer (no dealer card
before the reveal, no board card before it is dealt to the table, no seat's hole
cards in per-seat mode), except ``house_round.opened``, the configuration in
force, shown whole. "Closed" is the round's own stream (``house_round.closed``),
as for its fairness answer. A round's player streams
(``round-{id}-player-{player}``: bets, decisions and settlements, which carry no
card the table has not seen) are shown as stored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from games.house.realtime.presenters import public_delta
from games.house.round.events import OPENED
from games.house.round.state import replay_round
from games.tables.staff_view import as_stored
from ledger.confidential import EventView, register_staff_view
from ledger.services import read_stream

HOUSE_ROUND_PREFIX = "round-"
_PLAYER_STREAM = re.compile(r"-player-\d+$")


def house_round_view(stream_id: str) -> EventView:
    """The view of one house round stream (``round-{id}``; player streams as stored)."""
    if _PLAYER_STREAM.search(stream_id):
        return as_stored
    events = read_stream(stream_id=stream_id)
    if not events or replay_round(events).closed:
        return as_stored

    def in_play(event_type: str, data: Mapping[str, Any]) -> Mapping[str, Any] | None:
        if event_type == OPENED:
            # The configuration in force (limits, pay tables, durations): no card,
            # and what a shift manager needs; the players' delta keeps only its
            # table-facing part.
            return data
        shown = public_delta(_Stored(event_type, data))
        return None if shown is None else shown["data"]

    return in_play


class _Stored:
    """A stored event as the presenters read it: its type and data (no version)."""

    __slots__ = ("data", "type", "version")

    def __init__(self, event_type: str, data: Mapping[str, Any]) -> None:
        self.type, self.data, self.version = event_type, data, None


def register() -> None:
    register_staff_view(HOUSE_ROUND_PREFIX, house_round_view)
