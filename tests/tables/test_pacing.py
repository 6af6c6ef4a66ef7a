"""The one table clock (``games.tables.pacing``): game numbers unique across both
families, in the format RULES.md gives (``UTH1-20261122-134501``)."""

from __future__ import annotations

import importlib
import re
from datetime import datetime, timedelta, timezone

import pytest
from django.db import transaction

from games.house.services import dealer, start_table
from games.poker.models import PokerHand
from games.tables import pacing
from tests.house.services.conftest import T0
from tests.house.services.conftest import make_table as make_house_table
from tests.poker.tables import advance, heads_up_dealt, make_player, sit
from tests.poker.tables import make_table as make_poker_table

pytestmark = pytest.mark.django_db

NUMBER = re.compile(r"^[A-Z0-9]{1,12}-\d{8}-\d{6}(-[1-9]\d*)?$")


def deal_a_poker_hand(code: str) -> str:
    """Two players sit down at ``T0``; the hand is dealt at the table's deadline. Its id."""
    table = heads_up_dealt(code=code)
    return table.current_hand_id


def test_the_game_number_is_the_table_code_and_the_gmt_second() -> None:
    cest = timezone(timedelta(hours=2))
    assert pacing.game_number(table_code="UTH1", now=T0.astimezone(cest)) == "UTH1-20261122-134501"
    assert NUMBER.match(pacing.game_number(table_code="NL1", now=T0))


def test_a_house_round_never_takes_a_poker_hands_number() -> None:
    hand_id = deal_a_poker_hand("SAME1")
    moment = PokerHand.objects.get(hand_id=hand_id).started_at
    assert hand_id == f"SAME1-{moment:%Y%m%d-%H%M%S}"
    house = make_house_table("uth", code="SAME1")
    tick = start_table(table_id=house.pk, now=moment)
    assert tick.game_number == f"{hand_id}-2"
    assert NUMBER.match(tick.game_number)


def test_a_poker_hand_never_takes_a_house_rounds_number() -> None:
    # The poker table deals at its deadline (T0 + the pause between hands): the
    # house round opens in that very second.
    house = make_house_table("uth", code="SAME2")
    table = make_poker_table(code="SAME2")
    dealt_at = T0 + timedelta(seconds=table.between_hands_seconds)
    tick = start_table(table_id=house.pk, now=dealt_at)
    assert tick.game_number == f"SAME2-{dealt_at:%Y%m%d-%H%M%S}"
    for seat in (1, 2):
        sit(table, make_player(), seat)
    table = advance(table)
    assert table.current_hand_id == f"{tick.game_number}-2"
    assert NUMBER.match(table.current_hand_id)
    # and a third start in that second takes the next free suffix, whichever family
    assert pacing.game_number(table_code="SAME2", now=dealt_at) == f"{tick.game_number}-3"


class Recorder:
    """Stands in for a family's Celery advance task: records what was enqueued."""

    def __init__(self) -> None:
        self.sent: list[tuple[tuple[int, int], datetime | None]] = []

    def apply_async(self, args: tuple[int, int], eta: datetime | None = None) -> None:
        self.sent.append((args, eta))


@pytest.mark.parametrize("path", [pacing.HOUSE_ADVANCE, pacing.POKER_ADVANCE])
def test_the_advance_is_enqueued_for_the_deadline_only_when_the_step_commits(
    monkeypatch, django_capture_on_commit_callbacks, path: str
) -> None:
    module, _, name = path.partition(":")
    recorder = Recorder()
    monkeypatch.setattr(importlib.import_module(module), name, recorder)
    deadline = T0 + timedelta(seconds=5)
    with django_capture_on_commit_callbacks(execute=True):
        pacing.schedule_advance(task=path, table_id=7, expected_seq=3, deadline=deadline)
        pacing.schedule_advance(task=path, table_id=8, expected_seq=1, deadline=None)  # the table waits
        assert recorder.sent == []  # not before the commit
    assert recorder.sent == [((7, 3), deadline)]

    def rolled_back_step() -> None:
        with transaction.atomic():
            pacing.schedule_advance(task=path, table_id=9, expected_seq=4, deadline=deadline)
            raise RuntimeError("the step rolls back")

    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError):
        rolled_back_step()
    assert recorder.sent == [((7, 3), deadline)]
    with django_capture_on_commit_callbacks(execute=True):
        pacing.advance_now(task=path, table_id=7, expected_seq=4)
    assert recorder.sent == [((7, 3), deadline), ((7, 4), None)]


def test_the_wings_schedule_their_own_task_through_the_clock(monkeypatch, django_capture_on_commit_callbacks) -> None:
    """Seating the second poker player schedules ``games.poker.advance`` for the
    deal; opening a house round schedules ``games.advance`` for its betting
    deadline; each carries the phase sequence it recorded."""
    house_task, poker_task = Recorder(), Recorder()
    monkeypatch.setattr(importlib.import_module("games.house.tasks"), "advance_table_task", house_task)
    monkeypatch.setattr(importlib.import_module("games.poker.tasks"), "advance_poker_table_task", poker_task)
    table = make_poker_table(code="CLK1")
    with django_capture_on_commit_callbacks(execute=True):
        sit(table, make_player(), 1)
    assert poker_task.sent == []  # one player: the table waits
    with django_capture_on_commit_callbacks(execute=True):
        sit(table, make_player(), 2)
    table.refresh_from_db()
    assert table.phase == "between"
    assert poker_task.sent == [((table.pk, table.phase_seq), T0 + timedelta(seconds=table.between_hands_seconds))]
    house = make_house_table("uth", code="CLK1")
    with django_capture_on_commit_callbacks(execute=True):
        tick = dealer.start(table_id=house.pk, now=T0)
    assert house_task.sent == [((house.pk, tick.phase_seq), tick.deadline)]
    assert tick.deadline is not None
