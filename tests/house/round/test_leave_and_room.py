"""The pure rules behind a per-seat round's limit (issue #20): who may still join
the round with a first chip (``check_room``) and what leaving the table does to
the player's bets (``decide_leave``; seed 000, "Place Bets": leaving while betting
time remains declines the bets; RULES.md: once bets close the round proceeds)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from casino.errors import DomainError
from games.house.round.commands import check_room, decide_leave, decide_place_chip
from games.house.round.dealer import decide_close_betting, decide_open, decide_pause
from games.house.round.state import PER_SEAT_MAX, PlayerState, RoundState, apply_player
from tests.house.round.test_legality import DECK, STAND_IN_DEAL, at, config, fold_round


def betting(*, hand_mode: str = "per_seat", max_seats: int = PER_SEAT_MAX) -> RoundState:
    opened = decide_open(replace(config("xtreme"), hand_mode=hand_mode, max_seats=max_seats), now=at(0),
                         **STAND_IN_DEAL)  # fmt: skip
    return fold_round(RoundState(), {}, opened)


def with_ante(state: RoundState, player_id: int) -> PlayerState:
    outcome = decide_place_chip(state, PlayerState(player_id), spot="ante", amount=100, balance=10_000,
                                hold_id=f"h{player_id}", now=at(1))  # fmt: skip
    return apply_player(PlayerState(player_id), outcome.events[0])


def test_a_first_chip_needs_a_free_hand_in_a_per_seat_round() -> None:
    state = betting(max_seats=3)
    check_room(state, PlayerState(9), others=2)
    with pytest.raises(DomainError) as refused:
        check_room(state, PlayerState(9), others=3)
    assert refused.value.code == "round_full"
    assert refused.value.details == {"participants": 3, "limit": 3}
    check_room(state, with_ante(state, 9), others=3)  # already in the round: more chips are fine
    with pytest.raises(DomainError):
        check_room(betting(max_seats=40), PlayerState(9), others=PER_SEAT_MAX)  # never past the deck
    check_room(betting(hand_mode="shared"), PlayerState(9), others=10_000)  # one shared hand: no limit


def test_leaving_before_betting_closes_removes_every_chip() -> None:
    state = betting()
    player = with_ante(state, 7)
    [removed] = decide_leave(state, player, now=at(29))
    assert removed.type == "house_bet.removed"
    assert removed.stream == 7
    assert removed.data["reason"] == "leave"
    assert removed.data["hold_ids"] == ["h7"]
    assert removed.data["totals"] == {"ante": 100, "xtra_bonus": 100}
    assert apply_player(player, removed).chips == ()
    assert decide_leave(state, PlayerState(8), now=at(29)) == []  # nothing to return


def test_leaving_once_betting_closed_leaves_the_wagers_in_play() -> None:
    state = betting()
    player = with_ante(state, 7)
    assert decide_leave(state, player, now=at(30)) == []  # the deadline passed: closed by the server's clock
    dealt = fold_round(state, {7: player}, decide_close_betting(state, {7: player}, now=at(30), deck=DECK))
    assert decide_leave(dealt, player, now=at(31)) == []


def test_a_pause_keeps_betting_unclosed_only_with_time_left() -> None:
    state = betting()
    player = with_ante(state, 7)
    paused = fold_round(state, {}, decide_pause(state, actor="op", reason="camera", now=at(20)))
    assert len(decide_leave(paused, player, now=at(500))) == 1  # resumes with 10 s of betting left
    late = fold_round(state, {}, decide_pause(state, actor="op", reason="camera", now=at(30)))
    assert decide_leave(late, player, now=at(31)) == []  # paused after betting time ran out
