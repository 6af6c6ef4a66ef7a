"""Issue #24: the poker seats (``PokerSeat``) are a projection of the table and
hand streams (``PokerSeatProjector``): after hands, top-ups, sitting out and in
and standing up, the seats rebuilt from the log equal the live ones and hold
the stacks the rules give (the chips not in a pot, as the ledger's
``poker_seat`` accounts); a forged seat is named and repaired."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from games.poker import event_types as et
from games.poker import services
from games.poker.models import PokerSeat, PokerTable
from games.poker.projectors import PokerSeatProjector
from ledger.services import read_stream
from ledger.services.projectors import check_projections, rebuild
from tests.poker.tables import T0, act, advance, key, make_player, play_the_raked_hand, seat_balance, sit
from tests.poker.test_tables import AA_VS_KK, three_handed

pytestmark = pytest.mark.django_db
COLUMNS = ("id", "table_id", "player_id", "seat_number", "stack", "sitting_out", "sat_out_reason", "reserved_until",
           "joined_at", "hand_number", "hand_version")  # fmt: skip


def seats(table: PokerTable) -> dict[int, dict[str, Any]]:
    return {row["player_id"]: row for row in PokerSeat.objects.filter(table=table).values(*COLUMNS)}


def stacks(table: PokerTable) -> dict[int, int]:
    return dict(PokerSeat.objects.filter(table=table).values_list("seat_number", "stack"))


def a_played_table() -> tuple[PokerTable, list[int]]:
    """The raked three-handed hand played (seat 1: 910, seat 2: 970, seat 3: 1115),
    then seat 1 tops up 90, seat 2 sits out, seat 3 sits out and in again, a fourth
    player sits down, and seat 2 stands up."""
    table, players = three_handed()
    table = advance(table, cards=AA_VS_KK)
    play_the_raked_hand(table, *players)
    services.top_up(table_id=table.pk, player_id=players[0], amount=90, idempotency_key=key(), now=T0)
    services.sit_out(table_id=table.pk, player_id=players[1], now=T0)
    services.sit_out(table_id=table.pk, player_id=players[2], now=T0)
    services.sit_in(table_id=table.pk, player_id=players[2], now=T0)
    fourth = make_player()
    sit(table, fourth, 4, buy_in=500)
    services.stand_up(table_id=table.pk, player_id=players[1], idempotency_key=key(), now=T0)
    return table, [*players, fourth]


def test_after_hands_top_ups_sitting_out_and_in_and_a_stand_up_the_rebuilt_seats_equal_the_live_ones() -> None:
    table, players = a_played_table()
    assert stacks(table) == {1: 1000, 3: 1115, 4: 500}  # 910 + 90; the winner's; the newcomer's buy-in
    for player in (players[0], players[2], players[3]):
        seat = PokerSeat.objects.get(table=table, player_id=player)
        assert seat.stack == seat_balance(table, player)  # the chips not in a pot
        assert not seat.sitting_out
    assert check_projections() == []
    live = seats(table)
    result = rebuild(check=False)
    assert result.differences == []
    assert result.rows["poker_seat"] == 3
    assert seats(table) == live  # row for row, the ids too (the hand players' links refer to them)


def test_in_a_hand_the_stacks_are_the_chips_not_in_the_pot() -> None:
    table, players = three_handed()
    table = advance(table, cards=AA_VS_KK)  # blinds 5 and 10 posted by seats 2 and 3
    assert stacks(table) == {1: 1000, 2: 995, 3: 990}
    act(table, players[0], "raise", 30)
    assert stacks(table) == {1: 970, 2: 995, 3: 990}
    assert all(PokerSeat.objects.get(table=table, player_id=p).stack == seat_balance(table, p) for p in players)
    assert check_projections() == []
    live = seats(table)
    rebuild(check=False)
    assert seats(table) == live
    act(table, players[1], "fold")  # play goes on on the rebuilt rows
    assert stacks(table)[2] == 995


def test_a_seat_taken_again_during_the_hand_is_not_touched_by_it() -> None:
    """Issue #20: the hand's events touch only the sitting dealt in; the player's
    new sitting (a new buy-in) is not in the hand."""
    table, players = three_handed()
    table = advance(table, cards=AA_VS_KK)
    act(table, players[0], "fold")
    services.stand_up(table_id=table.pk, player_id=players[0], idempotency_key=key(), now=T0)
    sit(table, players[0], 5, buy_in=300)
    act(table, players[1], "call")
    act(table, players[2], "check")
    again = PokerSeat.objects.get(table=table, player_id=players[0])
    assert (again.seat_number, again.stack, again.hand_number) == (5, 300, 0)
    assert check_projections() == []


def test_each_event_applied_twice_in_a_row_rebuilds_the_same_seats() -> None:
    """Idempotence: replayed from an empty table, every event of the table's and
    its hands' streams applied again right after itself (a retried batch, by
    this projector and by a fresh one) changes nothing."""
    table, _ = a_played_table()
    before = seats(table)
    streams = [et.table_stream(table.pk), *(et.hand_stream(h) for h in table.hands.values_list("hand_id", flat=True))]
    log = sorted((e for stream in streams for e in read_stream(stream_id=stream)), key=lambda e: e.position)
    projector = PokerSeatProjector()
    projector.reset()
    assert seats(table) == {}
    for event in log:
        if projector.wants(event):
            projector.apply_many([event])
            projector.apply_many([event])
            PokerSeatProjector().apply_many([event])
    assert seats(table) == before
    assert check_projections() == []


def test_a_changed_seat_is_named_by_check_and_verify_ledger_and_repaired_by_a_rebuild(
    capsys: pytest.CaptureFixture[str],
) -> None:
    table, players = a_played_table()
    seat = PokerSeat.objects.get(table=table, player_id=players[2])
    with connection.cursor() as cursor:
        cursor.execute("UPDATE games_pokerseat SET stack = 7 WHERE id = %s", [seat.pk])
    named = f"games_pokerseat [poker_seat] row table_id={table.pk}, player_id={players[2]}: stack live 7, rebuilt 1115"
    assert [str(d) for d in check_projections()] == [named]
    with pytest.raises(CommandError, match="projections differ from their rebuild"):
        call_command("rebuild_projections", "--check")
    assert named in capsys.readouterr().err
    assert PokerSeat.objects.get(pk=seat.pk).stack == 7  # --check changes nothing
    with pytest.raises(CommandError):
        call_command("verify_ledger")
    assert named in capsys.readouterr().err
    call_command("rebuild_projections")
    assert PokerSeat.objects.get(pk=seat.pk).stack == 1115
    assert check_projections() == []


def test_a_deleted_seat_is_missing_and_restored() -> None:
    table, players = a_played_table()
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM games_pokerseat WHERE table_id = %s AND player_id = %s", [table.pk, players[3]])
    assert [str(d) for d in check_projections()] == [
        f"games_pokerseat [poker_seat] row table_id={table.pk}, player_id={players[3]}: missing (the log has it)"
    ]
    rebuild(check=False)
    assert stacks(table) == {1: 1000, 3: 1115, 4: 500}
