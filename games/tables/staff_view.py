"""How staff see the games' streams (registered with ``ledger.confidential``
at start-up, ``games.apps``): a house round or a poker hand in play exactly as a
spectator at its table sees it, through the players' own presenters (no list
of hidden fields of its own); the stored events once it is over. Every staff
surface reads events through ``ledger.confidential.staff_reader``.

- House round streams (``round-{id}``): while the round is not closed,
  ``games.house.realtime.presenters.public_delta`` with no viewer (no dealer
  card before the reveal, no board card before it is dealt to the table, no
  seat's hole cards in per-seat mode), except ``house_round.opened``, the
  configuration in force, shown whole. "Closed" is the round's own stream
  (``house_round.closed``), as for its fairness answer.
- A round's player streams (``round-{id}-player-{player}``): bets, decisions
  and settlements, which carry no card the table has not seen; shown as stored.
- Poker hand streams (``poker-hand-{id}``): while the hand has neither ended
  (``poker.hand_ended``) nor been voided, ``games.poker.realtime.presenters.redact_event``
  with no seat (every hole card hidden, the shuffle's commitment only).

Sealed values (``games.cards.vault``) read ``(sealed)`` everywhere, in play or not.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ledger.confidential import EventView, register_sealed_shape, register_staff_view

HOUSE_ROUND_PREFIX = "round-"
POKER_HAND_PREFIX = "poker-hand-"
_PLAYER_STREAM = re.compile(r"-player-\d+$")


def _as_stored(event_type: str, data: Mapping[str, Any]) -> Mapping[str, Any]:
    return data


def house_round_view(stream_id: str) -> EventView:
    """The view of one house round stream (``round-{id}``; player streams as stored)."""
    from games.house.realtime.presenters import public_delta
    from games.house.round.events import OPENED
    from games.house.round.state import replay_round
    from ledger.services import read_stream

    if _PLAYER_STREAM.search(stream_id):
        return _as_stored
    events = read_stream(stream_id=stream_id)
    if not events or replay_round(events).closed:
        return _as_stored

    def in_play(event_type: str, data: Mapping[str, Any]) -> Mapping[str, Any] | None:
        if event_type == OPENED:
            # The configuration in force (limits, pay tables, durations): no card,
            # and what a shift manager needs; the players' delta keeps only its
            # table-facing part.
            return data
        shown = public_delta(_Stored(event_type, data))
        return None if shown is None else shown["data"]

    return in_play


def poker_hand_view(stream_id: str) -> EventView:
    """The view of one poker hand stream (``poker-hand-{id}``)."""
    from games.poker import event_types as et
    from games.poker.engine.events import HandEnded
    from games.poker.realtime.presenters import redact_event
    from ledger.services import read_stream

    types = {event.type for event in read_stream(stream_id=stream_id)}
    if HandEnded.type in types or et.VOIDED in types:
        return _as_stored

    def in_play(event_type: str, data: Mapping[str, Any]) -> Mapping[str, Any] | None:
        shown = redact_event(dict(data), event_type, None)
        return None if shown is None else {key: value for key, value in shown.items() if key != "type"}

    return in_play


class _Stored:
    """The two attributes the presenters read of a stored event."""

    __slots__ = ("data", "type", "version")

    def __init__(self, event_type: str, data: Mapping[str, Any]) -> None:
        self.type, self.data, self.version = event_type, data, None


def register() -> None:
    from games.cards.vault import is_sealed

    register_sealed_shape(is_sealed)
    register_staff_view(HOUSE_ROUND_PREFIX, house_round_view)
    register_staff_view(POKER_HAND_PREFIX, poker_hand_view)
