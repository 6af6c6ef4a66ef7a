"""``poker_export HAND_ID`` writes PHH that replays (``poker_replay``) to the
played hand's final stacks and rake (issue 7, "Hand histories")."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from games.poker.models import PokerHand, PokerSeat
from tests.poker.tables import advance, play_the_raked_hand
from tests.poker.test_tables import AA_VS_KK, three_handed

pytestmark = pytest.mark.django_db


def _replay(path: Path, *options: str) -> dict[str, object]:
    out = StringIO()
    call_command("poker_replay", str(path), *options, stdout=out)
    return dict(json.loads(out.getvalue().strip().splitlines()[-1]))


def test_exported_hand_replays_to_the_same_stacks(tmp_path: Path) -> None:
    table, (p1, p2, p3) = three_handed()
    table = advance(table, cards=AA_VS_KK)
    hand_id = table.current_hand_id
    play_the_raked_hand(table, p1, p2, p3)
    path = tmp_path / "hand.phh"
    call_command("poker_export", hand_id, "--output", str(path), stdout=StringIO())
    text = path.read_text()
    assert "variant = 'NT'" in text or 'variant = "NT"' in text
    # PHH order: first left of the button (seat 2), then seat 3, the button (seat 1) last.
    stacks = [PokerSeat.objects.get(table=table, seat_number=n).stack for n in (2, 3, 1)]
    raked = _replay(path, "--rake", "seed001")
    assert raked["finishing_stacks"] == stacks
    assert raked["rake"] == PokerHand.objects.get(hand_id=hand_id).rake == 5
    # Without rake (a PHH file carries none) the winner keeps the whole pot.
    unraked = _replay(path)
    assert unraked["finishing_stacks"] == [stacks[0], stacks[1] + 5, stacks[2]]


def test_export_of_an_unknown_hand_fails() -> None:
    with pytest.raises(CommandError, match="poker_hand_not_found"):
        call_command("poker_export", "NOPE-1", stdout=StringIO())
