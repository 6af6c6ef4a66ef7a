"""``verify_ledger`` checks every poker seat's stack against its ``poker_seat``
account (registered by the games app; the ledger imports no game): a forged
stack, or chips left in an account with no seat, are reported naming the rows."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection

from games.poker import services
from games.poker.models import PokerSeat, PokerTable
from ledger.services.verify import Problem, registered_checks, verify_ledger
from tests.poker.tables import act, advance, make_player, make_table, sit

pytestmark = pytest.mark.django_db


def problems(*, projections: bool = True) -> list[Problem]:
    return verify_ledger(key=settings.CASINO_SEAL_KEY.encode(), projections=projections)


def repaired() -> None:
    """The forged seat rows rebuilt from the log: every check is clean again."""
    call_command("rebuild_projections")
    assert problems() == []


def hand_in_play() -> tuple[PokerTable, list[int]]:
    """Three players in a hand: blinds posted (seats 2 and 3), seat 1 called."""
    table = make_table()
    players = [make_player() for _ in range(3)]
    for number, player in enumerate(players, start=1):
        sit(table, player, number)
    PokerTable.objects.filter(pk=table.pk).update(button_seat=3)  # the first hand's button: seat 1, acting first
    table = advance(table)
    act(table, players[0], "call")
    return table, players


def test_the_games_app_registers_the_check() -> None:
    assert "poker_seat" in registered_checks()


def test_seats_in_a_hand_verify() -> None:
    table, _ = hand_in_play()
    assert PokerSeat.objects.filter(table=table).count() == 3
    assert problems() == []


def test_a_forged_seat_stack_is_reported_naming_the_seat() -> None:
    table, players = hand_in_play()
    seat = PokerSeat.objects.get(table=table, player_id=players[1])
    account = services.seat_account(table_id=table.pk, player_id=players[1], currency="EUR")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE games_pokerseat SET stack = stack + 250 WHERE id = %s", [seat.pk])
    assert problems(projections=False) == [
        Problem(
            "poker_seat",
            f"poker seat {seat.pk} (table {table.pk}, seat 2, player {players[1]}): stack {seat.stack + 250}, "
            f"its poker_seat account {account} holds {seat.stack}",
        )
    ]
    # The seat's projector names it too (the log has the other stack).
    assert [p.check for p in problems()] == ["poker_seat", "projection"]
    with pytest.raises(CommandError, match=f"poker seat {seat.pk} "):
        call_command("verify_ledger")
    repaired()


def test_chips_in_a_seat_account_without_a_seat_are_reported() -> None:
    table = make_table()
    player = make_player()
    sit(table, player, 3, buy_in=700)
    account = services.seat_account(table_id=table.pk, player_id=player, currency="EUR")
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM games_pokerseat WHERE table_id = %s", [table.pk])
    assert problems(projections=False) == [
        Problem(
            "poker_seat",
            f"poker_seat account {account} (poker-table:{table.pk}:player:{player}) holds 700 EUR: no seat",
        )
    ]
    assert [p.check for p in problems()] == ["poker_seat", "projection"]
    repaired()
