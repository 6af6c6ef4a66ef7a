"""Seed 001 (line 77, "Disconnection Timebank") as RULES.md reads it: a
player not present when their turn runs out gets the table's disconnection
time bank once per hand, not again at each later turn of that hand; the next
hand they are dealt into grants it again. Through the services, on PostgreSQL,
the dealer's steps at the table's deadlines; presence through its own store."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from games.poker import event_types as et
from games.poker import services
from games.poker.models import PokerHand, PokerSeat, PokerTable
from games.tables.presence import POKER, hold_socket, release_socket
from ledger.services import read_stream
from tests.db import ledger_sums
from tests.poker.tables import act, advance
from tests.poker.test_tables import AA_VS_KK, three_handed

pytestmark = pytest.mark.django_db

BANK = 20


def leaves_at(table: PokerTable, player: int, moment: datetime) -> None:
    """``player``'s websocket to the table closes at ``moment``: present then, absent after."""
    connection = f"ws-{player}-{moment.timestamp()}"
    assert hold_socket(family=POKER, table_id=table.pk, player_id=player, connection=connection, now=moment)
    release_socket(connection=connection, now=moment)


def deal_with_seat_3_leaving(table: PokerTable, player: int) -> tuple[PokerTable, str]:
    """The next hand is dealt with ``player`` (seat 3) present, who leaves at once."""
    table.refresh_from_db()
    assert table.deadline is not None
    leaves_at(table, player, table.deadline)
    table = advance(table, cards=AA_VS_KK)
    assert table.current_hand_id is not None
    return table, table.current_hand_id


def seat_3_turns(hand_id: str) -> list[tuple[str, object]]:
    """Seat 3's clock in the hand: each turn and time bank, each timeout."""
    found = []
    for event in read_stream(stream_id=et.hand_stream(hand_id)):
        if event.type == et.TURN and event.data["seat"] == 3:
            found.append(("turn", event.data.get("bank")))
        elif event.type == et.TIMED_OUT and event.data["seat"] == 3:
            found.append(("timed_out", event.data["action"]))
    return found


def test_a_disconnected_player_gets_the_bank_once_per_hand_and_again_the_next_hand() -> None:
    table, (p1, p2, p3) = three_handed(disconnection_bank_seconds=BANK)
    # Button seat 1, seat 2 small blind, seat 3 big blind (it may check preflop).
    table, first = deal_with_seat_3_leaving(table, p3)
    act(table, p1, "call")
    act(table, p2, "call")
    table.refresh_from_db()
    turn_ends = table.deadline
    assert turn_ends is not None
    table = advance(table)  # seat 3's turn ran out, it is away: turn time plus the bank
    assert table.deadline == turn_ends + timedelta(seconds=BANK)
    assert PokerHand.objects.get(hand_id=first).in_disconnection_bank
    table = advance(table)  # the bank ran out: check (allowed), seat 3 sits out; the flop
    assert PokerSeat.objects.get(table=table, player_id=p3).sitting_out
    act(table, p2, "check")
    table.refresh_from_db()
    turn_ends = table.deadline
    assert turn_ends is not None
    table = advance(table)  # the flop: seat 3's turn ran out again: no second bank, check at once
    hand = PokerHand.objects.get(hand_id=first)
    assert hand.actor_seat == 1
    assert not hand.in_disconnection_bank
    assert table.deadline == turn_ends + timedelta(seconds=table.turn_seconds)  # seat 1's own turn timer
    act(table, p1, "check")
    act(table, p2, "check")
    table = advance(table)  # the turn card: the same
    assert seat_3_turns(first) == [
        ("turn", None), ("turn", "disconnection"), ("timed_out", "check"),
        ("turn", None), ("timed_out", "check"),
        ("turn", None), ("timed_out", "check"),
    ]  # fmt: skip
    act(table, p1, "check")
    act(table, p2, "check")
    table = advance(table)  # the river
    act(table, p1, "check")
    assert PokerHand.objects.get(hand_id=first).status == "complete"

    # Back before the next hand, dealt in, away again: the bank is granted again.
    assert table.deadline is not None
    services.sit_in(table_id=table.pk, player_id=p3, now=table.deadline)
    table, second = deal_with_seat_3_leaving(table, p3)
    assert "3" in PokerHand.objects.get(hand_id=second).players
    act(table, p2, "call")  # the button (seat 2) first; seat 3 owes the rest of its small blind
    table.refresh_from_db()
    turn_ends = table.deadline
    assert turn_ends is not None
    table = advance(table)
    assert table.deadline == turn_ends + timedelta(seconds=BANK)
    assert seat_3_turns(second) == [("turn", None), ("turn", "disconnection")]
    assert ledger_sums() == {"EUR": 0}
