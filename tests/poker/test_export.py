"""``poker_export HAND_ID`` writes PHH that replays (``poker_replay``) to the
played hand's final stacks and rake (issue 7, "Hand histories")."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from pokerkit import HandHistory

from games.cards.shuffle import SeededRandomSource
from games.poker.engine.phh import read_phh, replay_phh
from games.poker.models import PokerHand, PokerSeat
from games.poker.tournament import services as tournament_services
from games.poker.tournament.driver import TournamentDriver
from games.poker.tournament.services import start as tournament_start
from tests.poker.tables import LEVELS, T0, advance, key, make_player, make_tournament, play_the_raked_hand
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
    assert 'currency = "EUR"' in text  # a ring hand: money, no tournament
    assert "event" not in text
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


def test_a_sit_and_go_s_hands_export_as_phh_and_replay_to_the_recorded_stacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #23: a tournament table's hands export like ring hands, with the
    blinds and antes of their level (from the hand's events) and the
    tournament's PHH fields; no money currency. pokerkit reads them and
    ``poker_replay`` reaches the stacks the tables recorded."""
    # Short levels: the blinds and antes go up while the Sit & Go plays.
    levels = [{**level, "duration_seconds": 30} for level in LEVELS]
    tournament = make_tournament(max_players=6, table_seats=3, levels=levels)
    # A repeatable run: the seat draw and the decks from a seeded source.
    monkeypatch.setattr(tournament_start, "SecureRandomSource", lambda: SeededRandomSource(3))
    for player in [make_player() for _ in range(6)]:
        tournament_services.register(tournament_id=tournament.pk, player_id=player, idempotency_key=key("reg"), now=T0)
    report = TournamentDriver(tournament.pk, start=T0, seed=3, aggression=0.3, rng_source=SeededRandomSource(3)).run(
        max_rounds=5000
    )
    assert report.finished, report
    out = tmp_path / "phh"
    call_command("poker_export", "--tournament", str(tournament.pk), "--output", str(out), stdout=StringIO())
    hands = list(PokerHand.objects.filter(table__tournament=tournament, status="complete").order_by("started_at", "id"))
    files = sorted(out.glob("*.phh"))
    assert len(files) == len(hands) > 10
    levels_seen = set()
    last_level: dict[int, int] = {}
    schedule = tournament.schedule()
    for hand in hands:
        text = (out / f"{hand.hand_id}.phh").read_text()
        assert "currency" not in text
        ours = read_phh(text)
        theirs = HandHistory.loads(text)
        assert (theirs.event, theirs.table, theirs.seat_count) == (tournament.name, hand.table.table_number, 3)
        assert theirs.user_defined_fields["_tournament"] == tournament.pk
        assert theirs.user_defined_fields["_chips"] == "tournament"
        number = theirs.level
        assert number is not None
        level = schedule.level(number)
        levels_seen.add(number)
        assert number >= last_level.get(hand.table_id, 1)  # levels only go up at a table
        last_level[hand.table_id] = number
        # The hand's own blinds and antes: those of its level (the table's fields move on).
        assert theirs.blinds_or_straddles is not None
        assert sorted(b for b in theirs.blinds_or_straddles if b) == [level.small_blind, level.big_blind]
        assert set(theirs.antes) == {level.ante}
        assert ours.config.small_blind == level.small_blind
        # The stacks the table recorded, in PHH order (the hand's seats).
        by_seat = dict(hand.participants.values_list("seat_number", "stack_after"))
        assert theirs.seats is not None
        recorded = [by_seat[seat] for seat in theirs.seats]
        assert theirs.finishing_stacks == recorded
        assert _replay(out / f"{hand.hand_id}.phh")["finishing_stacks"] == recorded
        *_, final = theirs
        _, replayed = replay_phh(text)
        if replayed.split_pots:  # docs/poker.md: pokerkit may split tied side pots' odd chips otherwise
            assert sum(final.stacks) == sum(stack or 0 for stack in recorded)
        else:
            assert list(final.stacks) == recorded
    assert levels_seen == {1, 2, 3}, levels_seen
    # A voided hand is never exported; a ring hand keeps its currency.
    assert not PokerHand.objects.filter(table__tournament=tournament, status="voided").exists()


def test_export_refuses_a_hand_and_a_tournament_together() -> None:
    with pytest.raises(CommandError, match="not both"):
        call_command("poker_export", "X-1", "--tournament", "1", "--output", "x", stdout=StringIO())
    with pytest.raises(CommandError, match="tournament_not_found"):
        call_command("poker_export", "--tournament", "999999", "--output", "x", stdout=StringIO())
