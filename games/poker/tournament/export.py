"""PHH metadata of a tournament hand (``poker_export``, issue #23).

A tournament table's hand exports like a ring hand: its blinds and antes are
the hand's own (``poker.hand_started``: the level in force at the deal, not the
table's current fields). PHH's optional fields carry the tournament: ``event``
(the tournament's name), ``level`` (the level the hand was dealt at), ``table``
(the tournament's table number) and ``seat_count``; user-defined fields carry
what PHH has no field for (``_tournament``: the id, ``_chips``: the stacks are
tournament chips). No ``currency``: the chips are no money (the ledger's XXX).
"""

from __future__ import annotations

from typing import Any

from games.poker import event_types as et
from games.poker.engine.events import HandStarted
from games.poker.models import PokerHand
from ledger.models import Event

CHIPS_NOTE = "tournament"


def _blinds(started: HandStarted) -> tuple[int, int, int]:
    posted = [amount for amount in started.blinds_or_straddles if amount > 0]
    return (min(posted) if posted else 0), (max(posted) if posted else 0), started.ante


def hand_level(hand: PokerHand, started: HandStarted, first_event_id: int) -> int | None:
    """The level ``hand`` was dealt at: as its deal recorded it (``tournament_level``
    in ``poker_hand.shuffled``); for a hand dealt before that was recorded, the level the tournament's stream had
    announced before the hand's first event (``started``: level 1,
    ``level_started``: its number), or the next level with the hand's blinds
    and ante (a table may deal at a new level before the tournament's step
    records it: the dealer reads the level clock). ``None`` when no level of
    the schedule has the hand's blinds (nothing is claimed)."""
    tournament = hand.table.tournament
    assert tournament is not None
    shuffled = Event.objects.filter(stream_id=et.hand_stream(hand.hand_id), type=et.SHUFFLED).values_list(
        "data", flat=True
    )
    recorded = next((d.get("tournament_level") for d in shuffled if isinstance(d, dict)), None)
    if isinstance(recorded, int):
        return recorded  # recorded with the deal
    announced = 1
    marks = Event.objects.filter(
        stream_id=et.tournament_stream(tournament.pk),
        type__in=(et.TOURNAMENT_STARTED, et.TOURNAMENT_LEVEL),
        id__lt=first_event_id,
    ).order_by("-id")
    last = marks.values_list("data", flat=True).first()
    if isinstance(last, dict) and isinstance(last.get("level"), int):
        announced = last["level"]
    blinds = _blinds(started)
    schedule = tournament.schedule()
    numbered = list(enumerate(schedule.levels, start=1))
    for number, level in [*numbered[announced - 1 :], *numbered[: announced - 1]]:
        if (level.small_blind, level.big_blind, level.ante) == blinds:
            return number
    return None


def tournament_fields(hand: PokerHand, started: HandStarted, first_event_id: int) -> dict[str, Any]:
    """The PHH fields of a tournament hand (empty for a ring table's hand)."""
    table = hand.table
    tournament = table.tournament
    if tournament is None:
        return {}
    fields: dict[str, Any] = {"event": tournament.name}
    level = hand_level(hand, started, first_event_id)
    if level is not None:
        fields["level"] = level
    if table.table_number is not None:
        fields["table"] = table.table_number
    fields["seat_count"] = tournament.table_seats
    fields["_tournament"] = tournament.pk
    fields["_chips"] = CHIPS_NOTE
    return fields
