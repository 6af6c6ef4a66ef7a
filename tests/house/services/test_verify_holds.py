"""``verify_ledger`` checks every house round in play: its pending ledger holds
are exactly the wagers the player projections hold (registered by the games app;
the ledger imports no game). Forged holds and forged projections are reported,
naming the player round and the hold."""

from __future__ import annotations

import pytest
from django.conf import settings

from games.house.models import HouseTable, PlayerRound
from games.house.services import TableTick, make_decision, place_chip, undo_bet
from games.house.services.seats import leave_table
from ledger.models import Hold
from ledger.services.projectors import check_projections, rebuild
from ledger.services.verify import Problem, registered_checks, verify_ledger
from tests.house.services.conftest import key, later, make_player, make_table, open_round, play_out, step

pytestmark = pytest.mark.django_db


def house_problems() -> list[Problem]:
    return [p for p in verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) if p.check == "house_hold"]


def round_in_play() -> tuple[HouseTable, TableTick, list[PlayerRound]]:
    """Two players with an Ante (and its automatic Ante Plus) and a Best Five each,
    one chip placed and undone, the first player called 4x preflop."""
    table = make_table("uth")
    players = [make_player(table) for _ in range(2)]
    tick = open_round(table)
    for player in players:
        for spot in ("ante", "best_five"):
            place_chip(table_id=table.pk, player_id=player, spot=spot, amount=100, idempotency_key=key(),
                       now=later(tick))  # fmt: skip
    place_chip(table_id=table.pk, player_id=players[1], spot="best_five", amount=50, idempotency_key=key(),
               now=later(tick))  # fmt: skip
    undo_bet(table_id=table.pk, player_id=players[1], idempotency_key=key(), now=later(tick))
    tick = step(table, tick)
    assert tick.phase == "preflop"
    make_decision(table_id=table.pk, player_id=players[0], option="call4x", idempotency_key=key(), now=later(tick))
    rows = [PlayerRound.objects.get(round__round_id=tick.round_id, player_id=p) for p in players]
    return table, tick, rows


def assert_reported(row: PlayerRound, round_id: str, difference: str) -> None:
    """The only house problem is ``difference`` in ``row``'s wagers."""
    where = f"house player round {row.pk} (round {round_id}, player {row.player_id})"
    assert house_problems() == [Problem("house_hold", f"{where}: {difference}")]


def pending_holds() -> int:
    return Hold.objects.filter(status="pending").count()


def test_the_games_app_registers_the_check() -> None:
    assert "house_hold" in registered_checks()


def test_wagers_in_play_match_their_holds() -> None:
    round_in_play()
    assert pending_holds() == 2 + 2 + 1  # two chips each, one call; the undone chip's hold was voided
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []


def test_leaving_during_betting_or_after_it_keeps_holds_and_wagers_equal() -> None:
    """Leaving before betting closes returns the bets (their holds voided);
    after it the wagers stay in play with their holds."""
    table = make_table("uth")
    early, late, stays = (make_player(table) for _ in range(3))
    tick = open_round(table)
    for player in (early, late, stays):
        place_chip(table_id=table.pk, player_id=player, spot="ante", amount=100, idempotency_key=key(),
                   now=later(tick))  # fmt: skip
    leave_table(table_id=table.pk, player_id=early, now=later(tick))
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []
    tick = step(table, tick)
    leave_table(table_id=table.pk, player_id=late, now=later(tick))
    assert pending_holds() == 2
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []


def test_a_wager_missing_from_the_projection_is_reported() -> None:
    _, tick, (caller, _) = round_in_play()
    call_hold = caller.state["call_hold_id"]
    forged = dict(caller.state, call_amount=0, call_hold_id=None)
    PlayerRound.objects.filter(pk=caller.pk).update(state=forged)
    event = Hold.objects.get(pk=call_hold).opened_event_id
    assert_reported(caller, tick.round_id, f"hold {call_hold} (400, opened by event {event}) is pending for no wager")
    # The forged row is no projection of its events either: the rebuild names it, and repairs it.
    named = check_projections()
    assert {(d.projector, d.key["player_id"], d.column) for d in named} == {("house_player_round", caller.player_id,
                                                                            "state")}  # fmt: skip
    rebuild(check=False)
    assert house_problems() == []


def test_a_wager_whose_hold_was_resolved_behind_its_back_is_reported() -> None:
    _, tick, (_, other) = round_in_play()
    hold_id = other.state["chips"][0][2]
    Hold.objects.filter(pk=hold_id).update(status="voided")
    assert_reported(other, tick.round_id, f"the wager of hold {hold_id} (200) has no pending hold")


def test_a_forged_hold_amount_is_reported() -> None:
    _, tick, (_, other) = round_in_play()
    hold_id = other.state["chips"][1][2]
    Hold.objects.filter(pk=hold_id).update(amount=1000)
    assert_reported(other, tick.round_id, f"hold {hold_id} is pending for 1000, its wager is 100")


def test_a_pending_hold_of_a_settled_round_is_reported() -> None:
    table, tick, (caller, _) = round_in_play()
    play_out(table, tick)
    caller.refresh_from_db()
    assert caller.status == "settled"
    hold_id = caller.state["call_hold_id"]
    Hold.objects.filter(pk=hold_id).update(status="pending")
    assert house_problems() == [
        Problem(
            "house_hold",
            f"hold {hold_id} (400) is pending in round-{tick.round_id}-player-{caller.player_id}, "
            "which has no wagers in play (settled, voided or no player round)",
        )
    ]
