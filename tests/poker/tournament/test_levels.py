"""The blind/ante schedule and the level clock (issue #23: "a blind/ante schedule of levels with
durations, on the table clock: blinds, antes and level changes between hands"; late registration
"up to a level")."""

from __future__ import annotations

import pytest

from casino.errors import DomainError
from games.poker.tournament.rules.levels import (
    Level,
    Schedule,
    late_registration_open,
    level_at_table,
    level_for_next_hand,
    level_number_at,
    seconds_to_next_level,
)

TEN_MINUTES = 600

SCHEDULE = Schedule.of(
    [
        Level(small_blind=10, big_blind=20, ante=0, duration_seconds=TEN_MINUTES),
        Level(small_blind=15, big_blind=30, ante=0, duration_seconds=TEN_MINUTES),
        Level(small_blind=25, big_blind=50, ante=5, duration_seconds=TEN_MINUTES),
        Level(small_blind=50, big_blind=100, ante=10, duration_seconds=900),
    ]
)


def test_the_first_level_is_in_force_when_the_clock_starts() -> None:
    assert level_number_at(SCHEDULE, 0) == 1
    assert SCHEDULE.level(1).big_blind == 20


def test_level_3_is_in_force_once_the_first_two_levels_durations_have_passed() -> None:
    assert level_number_at(SCHEDULE, 2 * TEN_MINUTES - 1) == 2
    assert level_number_at(SCHEDULE, 2 * TEN_MINUTES) == 3
    assert SCHEDULE.level(level_number_at(SCHEDULE, 2 * TEN_MINUTES)).ante == 5


def test_levels_of_different_lengths_follow_each_other() -> None:
    assert level_number_at(SCHEDULE, 3 * TEN_MINUTES) == 4
    assert SCHEDULE.starts_at(4) == 1800


def test_the_last_level_goes_on_after_its_duration() -> None:
    assert level_number_at(SCHEDULE, 10**9) == 4
    assert seconds_to_next_level(SCHEDULE, 10**9) is None


def test_seconds_to_the_next_level() -> None:
    assert seconds_to_next_level(SCHEDULE, 0) == TEN_MINUTES
    assert seconds_to_next_level(SCHEDULE, 1150) == 50


def test_a_hand_started_in_level_2_stays_level_2_after_the_clock_reaches_level_3() -> None:
    hand_level = level_for_next_hand(SCHEDULE, 1190)
    assert hand_level == 2
    # The clock passes into level 3 while the hand is being played: the hand keeps level 2.
    assert level_at_table(SCHEDULE, 1250, hand_in_progress_level=hand_level) == 2
    # Between hands the new level applies: the next hand plays level 3.
    assert level_at_table(SCHEDULE, 1250, hand_in_progress_level=None) == 3
    assert level_for_next_hand(SCHEDULE, 1250) == 3


def test_late_registration_up_to_level_2_is_open_through_level_2_and_closes_with_level_3() -> None:
    assert late_registration_open(SCHEDULE, 1, last_level=2)
    assert late_registration_open(SCHEDULE, level_number_at(SCHEDULE, 2 * TEN_MINUTES - 1), last_level=2)
    assert not late_registration_open(SCHEDULE, level_number_at(SCHEDULE, 2 * TEN_MINUTES), last_level=2)
    assert not late_registration_open(SCHEDULE, 4, last_level=2)


def test_late_registration_rejects_a_level_the_schedule_does_not_have() -> None:
    with pytest.raises(DomainError) as refused:
        late_registration_open(SCHEDULE, 1, last_level=5)
    assert getattr(refused.value, "code", None) == "tournament_unknown_level"


def level(sb: int, bb: int, ante: int = 0, seconds: int = 60) -> Level:
    return Level(small_blind=sb, big_blind=bb, ante=ante, duration_seconds=seconds)


@pytest.mark.parametrize(
    ("levels", "code"),
    [
        ([], "tournament_schedule_empty"),
        ([level(0, 20)], "tournament_level_invalid_blinds"),
        ([level(30, 20)], "tournament_level_invalid_blinds"),
        ([level(10, 20, ante=-1)], "tournament_level_invalid_blinds"),
        ([level(10, 20, seconds=0)], "tournament_level_invalid_duration"),
        ([level(10, 20), level(15, 30, seconds=-5)], "tournament_level_invalid_duration"),
        ([level(10, 20), level(10, 15)], "tournament_level_blinds_decrease"),
        ([level(10, 20), level(5, 20)], "tournament_level_blinds_decrease"),
        ([level(10, 20, ante=5), level(15, 30, ante=0)], "tournament_level_blinds_decrease"),
    ],
)
def test_an_invalid_schedule_is_refused_with_its_code(levels: list[Level], code: str) -> None:
    with pytest.raises(DomainError) as refused:
        Schedule.of(levels)
    assert getattr(refused.value, "code", None) == code


def test_equal_blinds_from_one_level_to_the_next_are_allowed() -> None:
    schedule = Schedule.of([level(10, 20), level(10, 20, ante=2)])
    assert level_number_at(schedule, 60) == 2


def test_negative_elapsed_time_is_refused() -> None:
    with pytest.raises(DomainError) as refused:
        level_number_at(SCHEDULE, -1)
    assert getattr(refused.value, "code", None) == "tournament_invalid_elapsed"


def test_a_hand_in_progress_cannot_claim_a_level_the_schedule_does_not_have() -> None:
    with pytest.raises(DomainError) as refused:
        level_at_table(SCHEDULE, 0, hand_in_progress_level=9)
    assert getattr(refused.value, "code", None) == "tournament_unknown_level"
