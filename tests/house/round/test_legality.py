"""Legality has one source: an option is offered iff ``decide_decision`` accepts
it, over a range of round and player states (RULES.md, "Decisions"), including
past the decision deadline, paused rounds, players outside the round, players
who already decided, called or folded, and balances that do not cover a call."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from casino.errors import DomainError
from games.cards.cards import parse_cards
from games.house.round.commands import decide_decision, decide_place_chip, offered_options
from games.house.round.dealer import decide_advance, decide_close_betting, decide_open, decide_pause
from games.house.round.events import Event
from games.house.round.state import PlayerState, RoundConfig, RoundState, apply_player, apply_round
from games.house.rules.registry import game

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
DECK = parse_cards([r + s for s in "shdc" for r in "23456789TJQKA"])


def at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat()


def config(code: str) -> RoundConfig:
    definition = game(code)
    return RoundConfig(
        round_id="R1", table_id=1, table_code="T1", game_number="R1", game=code, hand_mode="shared",
        currency="EUR", currency_unit=100, limits={"ante": {"min": 100, "max": 10_000}},
        pay_tables={w.name: 1 for w in definition.wagers if w.needs_pay_table}, wheel={}, progressives={},
        betting_seconds=30, warning_seconds=5, decision_seconds=20, deal_pause_seconds=0, between_rounds_seconds=5,
    )  # fmt: skip


# ``decide_open``'s deal: a stand-in (the sealed deck is opaque to the domain).
STAND_IN_DEAL: dict[str, Any] = {"commitment": "0" * 64, "sealed_deck": {"scheme": "test"}}


def fold_round(state: RoundState, players: dict[int, PlayerState], events: list[Event]) -> RoundState:
    for event in events:
        if event.stream == "round":
            state = apply_round(state, event)
        else:
            players[int(event.stream)] = apply_player(players[int(event.stream)], event)
    return state


def first_window(code: str) -> tuple[RoundState, dict[int, PlayerState]]:
    """Players 1-3 bet 100 on the Ante; player 4 bets nothing; the first window is open."""
    state = fold_round(RoundState(), {}, decide_open(config(code), now=at(0), **STAND_IN_DEAL))
    players = {pid: PlayerState(pid) for pid in (1, 2, 3, 4)}
    for pid in (1, 2, 3):
        outcome = decide_place_chip(state, players[pid], spot="ante", amount=100, balance=10_000,
                                    hold_id=f"h{pid}", now=at(1))  # fmt: skip
        fold_round(state, players, outcome.events)
    state = fold_round(state, players, decide_close_betting(state, players, now=at(31), deck=DECK))
    return state, players


def assert_offered_iff_accepted(state: RoundState, player: PlayerState, *, balance: int, now: str) -> list[str]:
    assert state.config is not None
    names = sorted({o.name for p in state.config.definition.decision_points for o in p.options} | {"nonsense"})
    offered = offered_options(state, player, balance=balance, now=now)
    for name in names:
        if name in offered:
            [event] = decide_decision(state, player, option=name, balance=balance, hold_id="hx", now=now)
            assert event.data["option"] == name
        else:
            with pytest.raises(DomainError):
                decide_decision(state, player, option=name, balance=balance, hold_id="hx", now=now)
    return offered


@pytest.mark.parametrize("code", ["uth", "casino_holdem", "xtreme"])
def test_an_option_is_offered_exactly_when_the_decision_would_be_accepted(code: str) -> None:
    state, players = first_window(code)
    assert state.deadline is not None
    deadline = (datetime.fromisoformat(state.deadline) - T0).total_seconds()
    inside, past = at(deadline - 1), at(deadline + 1)
    point = state.config.definition.decision_point(state.phase) if state.config else None
    assert point is not None
    everything = [o.name for o in point.options]

    # In the window, with a balance that covers everything: every option.
    assert assert_offered_iff_accepted(state, players[1], balance=10**9, now=inside) == everything
    # Past the deadline (the window not yet advanced): none, and the command refuses them all.
    assert assert_offered_iff_accepted(state, players[1], balance=10**9, now=past) == []
    # Exactly at the deadline: closed too.
    assert assert_offered_iff_accepted(state, players[1], balance=10**9, now=state.deadline) == []
    # A balance that covers no call: only the options that hold nothing.
    free = [o.name for o in point.options if o.multiplier == 0]
    assert assert_offered_iff_accepted(state, players[1], balance=0, now=inside) == free
    # Not in the round: nothing.
    assert assert_offered_iff_accepted(state, players[4], balance=10**9, now=inside) == []

    # Once decided on this street: nothing more on it.
    made = decide_decision(state, players[2], option=free[0], balance=10**9, hold_id="h", now=inside)
    fold_round(state, players, made)
    assert assert_offered_iff_accepted(state, players[2], balance=10**9, now=inside) == []
    # After a call (or a fold): nothing for the rest of the round.
    call = next(o.name for o in point.options if o.multiplier)
    fold_round(state, players, decide_decision(state, players[3], option=call, balance=10**9, hold_id="h", now=inside))
    assert assert_offered_iff_accepted(state, players[3], balance=10**9, now=inside) == []

    # Paused: nothing.
    paused = fold_round(state, dict(players), decide_pause(state, actor="op", reason="test", now=inside))
    assert assert_offered_iff_accepted(paused, players[1], balance=10**9, now=inside) == []

    # The next street (if the game has one): its options, by the same checks.
    advanced = fold_round(state, players, decide_advance(state, players, now=past, deck=[str(c) for c in DECK]))
    if advanced.phase != state.phase and advanced.deadline is not None:
        assert advanced.config is not None
        later = at((datetime.fromisoformat(advanced.deadline) - T0).total_seconds() - 1)
        offered = assert_offered_iff_accepted(advanced, players[1], balance=10**9, now=later)
        assert offered == [o.name for o in advanced.config.definition.decision_point(advanced.phase).options]


def test_nothing_is_offered_while_betting() -> None:
    state = fold_round(RoundState(), {}, decide_open(config("uth"), now=at(0), **STAND_IN_DEAL))
    player = PlayerState(1)
    assert assert_offered_iff_accepted(state, player, balance=10**9, now=at(1)) == []
