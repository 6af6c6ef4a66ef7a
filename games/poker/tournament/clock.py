"""A tournament's level clock and when its step runs (docs/poker.md,
"Tournaments: play").

Reads only: the clock is the tournament row's ``clock_elapsed`` and
``clock_started_at`` (written by its projector) and its level schedule; no
lock is taken. ``schedule_tournament`` enqueues the step through
``games.tables.pacing`` when the caller's transaction commits. Both the
tournament services and the ring's hand services (at a tournament table) use
it, which is why it sits outside ``games.poker.tournament.services``.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from games.poker.tournament.models import Tournament
from games.poker.tournament.rules.levels import Level, level_for_next_hand, seconds_to_next_level
from games.tables import pacing


def clock_seconds(tournament: Tournament, now: datetime) -> int:
    """Playing seconds on the level clock (it stops while the tournament is paused)."""
    elapsed = tournament.clock_elapsed
    if tournament.clock_started_at is not None:
        elapsed += max(0.0, (now - tournament.clock_started_at).total_seconds())
    return int(elapsed)


def level_now(tournament: Tournament, now: datetime) -> tuple[int, Level]:
    """The level a hand starting now plays at (its number and blinds)."""
    schedule = tournament.schedule()
    number = level_for_next_hand(schedule, clock_seconds(tournament, now))
    return number, schedule.level(number)


def next_level_at(tournament: Tournament, now: datetime) -> datetime | None:
    """When the next level starts on the clock (``None``: last level, or the clock is stopped)."""
    if tournament.clock_started_at is None:
        return None
    left = seconds_to_next_level(tournament.schedule(), clock_seconds(tournament, now))
    return None if left is None else now + timedelta(seconds=left)


def schedule_tournament(tournament_id: int, *, at: datetime | None = None) -> None:
    """Enqueue the tournament's step (``games.poker.tournament_advance``) once the
    transaction commits, for ``at`` (now when ``None``)."""
    pacing.enqueue_on_commit(task=pacing.TOURNAMENT_ADVANCE, args=(tournament_id,), eta=at)
