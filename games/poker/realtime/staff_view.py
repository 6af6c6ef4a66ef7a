"""What staff see of a poker hand in play (``games.tables.staff_view``, registered
at start-up by ``games.apps``): while the hand has neither ended
(``poker.hand_ended``) nor been voided, ``games.poker.realtime.presenters.redact_event``
with no seat (every hole card hidden, the shuffle's commitment only); the stored
events once it is over.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from games.poker import event_types as et
from games.poker.engine.events import HandEnded
from games.poker.realtime.presenters import redact_event
from games.tables.staff_view import as_stored
from ledger.confidential import EventView, register_staff_view
from ledger.services import read_stream

POKER_HAND_PREFIX = "poker-hand-"


def poker_hand_view(stream_id: str) -> EventView:
    """The view of one poker hand stream (``poker-hand-{id}``)."""
    types = {event.type for event in read_stream(stream_id=stream_id)}
    if HandEnded.type in types or et.VOIDED in types:
        return as_stored

    def in_play(event_type: str, data: Mapping[str, Any]) -> Mapping[str, Any] | None:
        shown = redact_event(dict(data), event_type, None)
        return None if shown is None else {key: value for key, value in shown.items() if key != "type"}

    return in_play


def register() -> None:
    register_staff_view(POKER_HAND_PREFIX, poker_hand_view)
