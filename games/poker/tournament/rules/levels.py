"""A tournament's blind/ante schedule and its level clock (pure).

A schedule is a sequence of levels, numbered from 1, each with a small blind,
a big blind, an ante (every player's, 0 for none) and a duration in seconds.
The level clock is the tournament's *playing* time: the caller passes the
elapsed seconds with every pause already taken out (an operator's pause stops
the clock; this module holds no clock of its own).

Rules implemented:

- Level ``k`` is in force from the sum of the durations of levels ``1 .. k-1``
  (inclusive) until the sum of the durations of levels ``1 .. k`` (exclusive):
  with levels of 600 s, level 3 starts at exactly 1,200 s.
- The last level never ends: once its duration is over the tournament stays at
  it (a schedule is written long enough to finish; this is the fallback).
- A level change takes effect between hands only: a hand plays at the level in
  force on the clock when it starts (``level_for_next_hand``) and keeps that
  level (blinds, ante) to its end, however long it lasts.
- Late registration "up to a level" ``L``: registration stays open through the
  whole of level ``L`` and closes when level ``L + 1`` starts.
- Validation: at least one level; every blind positive and the big blind at
  least the small blind; the ante zero or more; every duration positive; from
  one level to the next neither blind nor the ante goes down (equal is allowed,
  e.g. a level that only adds an ante).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from games.poker.engine.errors import PokerError


class InvalidSchedule(PokerError, code="tournament_invalid_schedule"):
    """The blind/ante schedule is not valid."""


class NoLevels(InvalidSchedule, code="tournament_schedule_empty"):
    """A schedule needs at least one level."""


class InvalidBlinds(InvalidSchedule, code="tournament_level_invalid_blinds"):
    """A level's blinds must be positive, with the big blind at least the small blind, and the ante not negative."""


class InvalidDuration(InvalidSchedule, code="tournament_level_invalid_duration"):
    """A level's duration must be a positive number of seconds."""


class DecreasingBlinds(InvalidSchedule, code="tournament_level_blinds_decrease"):
    """A level's small blind, big blind and ante must not be lower than the previous level's."""


class InvalidElapsed(PokerError, code="tournament_invalid_elapsed"):
    """The level clock's elapsed playing time must be zero or more seconds."""


class UnknownLevel(PokerError, code="tournament_unknown_level"):
    """The schedule has no level with that number."""


@dataclass(frozen=True)
class Level:
    """One level of the schedule: blinds and ante in tournament chips, duration in seconds."""

    small_blind: int
    big_blind: int
    ante: int
    duration_seconds: int


@dataclass(frozen=True)
class Schedule:
    """The levels in order (level number ``k`` is ``levels[k - 1]``); validated when built."""

    levels: tuple[Level, ...]

    def __post_init__(self) -> None:
        if not self.levels:
            raise NoLevels()
        previous: Level | None = None
        for number, level in enumerate(self.levels, start=1):
            if not (0 < level.small_blind <= level.big_blind) or level.ante < 0:
                raise InvalidBlinds(level=number)
            if level.duration_seconds <= 0:
                raise InvalidDuration(level=number)
            if previous is not None and (
                level.small_blind < previous.small_blind
                or level.big_blind < previous.big_blind
                or level.ante < previous.ante
            ):
                raise DecreasingBlinds(level=number)
            previous = level

    @classmethod
    def of(cls, levels: Iterable[Level]) -> Schedule:
        return cls(tuple(levels))

    def level(self, number: int) -> Level:
        """Level ``number`` (1-based); ``tournament_unknown_level`` if there is none."""
        if not 1 <= number <= len(self.levels):
            raise UnknownLevel(level=number, levels=len(self.levels))
        return self.levels[number - 1]

    def starts_at(self, number: int) -> int:
        """Playing seconds at which level ``number`` starts (level 1 at 0)."""
        self.level(number)
        return sum(level.duration_seconds for level in self.levels[: number - 1])


def level_number_at(schedule: Schedule, elapsed_seconds: int) -> int:
    """The number of the level in force on the level clock (pauses already excluded)."""
    if elapsed_seconds < 0:
        raise InvalidElapsed(elapsed_seconds=elapsed_seconds)
    end = 0
    for number, level in enumerate(schedule.levels, start=1):
        end += level.duration_seconds
        if elapsed_seconds < end:
            return number
    return len(schedule.levels)


def level_for_next_hand(schedule: Schedule, elapsed_seconds: int) -> int:
    """The level a hand starting now plays at: the one in force on the clock.

    The hand keeps it until it ends; a level that starts during the hand applies
    from the next hand. The service records the number with the hand."""
    return level_number_at(schedule, elapsed_seconds)


def level_at_table(schedule: Schedule, elapsed_seconds: int, hand_in_progress_level: int | None) -> int:
    """The level a table plays at now: a hand in progress keeps the level it started
    at (``hand_in_progress_level``); between hands (``None``) the clock's level."""
    if hand_in_progress_level is not None:
        schedule.level(hand_in_progress_level)
        return hand_in_progress_level
    return level_for_next_hand(schedule, elapsed_seconds)


def seconds_to_next_level(schedule: Schedule, elapsed_seconds: int) -> int | None:
    """Playing seconds until the next level starts; ``None`` at the last level."""
    number = level_number_at(schedule, elapsed_seconds)
    if number == len(schedule.levels):
        return None
    return schedule.starts_at(number + 1) - elapsed_seconds


def late_registration_open(schedule: Schedule, level_number: int, last_level: int) -> bool:
    """Whether late registration is open at ``level_number`` when it runs up to ``last_level``
    (inclusive: it closes when level ``last_level + 1`` starts)."""
    schedule.level(level_number)
    schedule.level(last_level)
    return level_number <= last_level
