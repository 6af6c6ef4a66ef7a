"""``manage.py bench poker``: our pure hold'em engine against pokerkit on the
same scripted hand, side by side in one run.

The hand: six players, no-limit 1/2, stacks 200; everyone calls preflop
(the big blind checks), everyone checks the flop, turn and river, showdown.
Both engines deal from the same shuffled deck (a fresh one per hand, the
same sequence for both), burn the same cards and evaluate the showdown; the
final stacks are checked equal. Ours runs ``step`` (``decide`` and the state
its events lead to; the events are built and kept) for every command; pokerkit runs with its automations (all but the
hole dealing, which is one call per card so that it deals from our deck).
Options (``-o KEY=VALUE``): ``hands`` (ours, default 3000), ``pokerkit_hands``
(default 100), ``seed`` (2026).
"""

from __future__ import annotations

import random
import time
from typing import Any

from casino.bench import BenchResult, Writer, benchmark
from games.domain.poker.engine import (
    Act,
    Action,
    HandState,
    Phase,
    SeatSpec,
    StartHand,
    default_strength,
    next_deal,
    step,
)
from games.domain.poker.rules import HandConfig, Variant

PLAYERS = 6
STACK = 200
CONFIG = HandConfig(variant=Variant.NO_LIMIT, blinds_or_straddles=(1, 2))
SEATS = tuple(SeatSpec(seat, f"p{seat}", STACK) for seat in range(1, PLAYERS + 1))
DECK = tuple(r + s for r in "23456789TJQKA" for s in "shdc")


CALLS = {seat.seat: Act(seat.seat, Action.CALL) for seat in SEATS}
CHECKS = {seat.seat: Act(seat.seat, Action.CHECK) for seat in SEATS}


def play_engine(deck: tuple[str, ...]) -> HandState:
    """The scripted hand through ``step`` (commands are immutable, so the
    client's call and check commands are built once)."""
    state, _ = step(None, StartHand("bench", CONFIG, SEATS, PLAYERS), strength=default_strength)
    complete, betting = Phase.COMPLETE, Phase.BETTING
    while state.phase is not complete:
        if state.phase is betting:
            player = state.players[state.to_act]
            command: Any = (CALLS if player.bet < state.max_bet else CHECKS)[player.seat]
        else:
            command = next_deal(state, deck)
        state, _ = step(state, command, strength=default_strength)
    return state


def play_pokerkit(deck: tuple[str, ...]) -> tuple[int, ...]:
    """The same hand through pokerkit (its standard automations, our deck)."""
    from pokerkit import Automation

    from games.poker.pokerkit_bridge import FULL_AUTOMATIONS, create_state, use_deck

    automations = tuple(a for a in FULL_AUTOMATIONS if a is not Automation.HOLE_DEALING)
    pk = create_state(CONFIG, (STACK,) * PLAYERS, automations=automations)
    use_deck(pk, deck)  # before any card is dealt
    while pk.can_deal_hole():
        pk.deal_hole()  # one card at a time round the table, from the top of our deck
    while pk.status:
        pk.check_or_call()
    return tuple(pk.stacks)


def _decks(count: int, seed: int) -> list[tuple[str, ...]]:
    rng = random.Random(seed)
    decks = []
    for _ in range(count):
        deck = list(DECK)
        rng.shuffle(deck)
        decks.append(tuple(deck))
    return decks


@benchmark("poker")
def bench_poker(
    *, out: Writer, hands: int = 3000, pokerkit_hands: int = 100, seed: int = 2026, **options: Any
) -> BenchResult:
    """Hold'em engine vs pokerkit: a scripted 6-handed no-limit hand (hands/s)."""
    decks = _decks(max(hands, pokerkit_hands), seed)
    default_strength(list(DECK[:7]))  # build the evaluator tables outside the timing
    for deck in decks[:20]:  # the same hands, same results
        if play_engine(deck).stacks != play_pokerkit(deck):
            raise AssertionError("engine and pokerkit disagree on the scripted hand")
    out.write(f"engine: {hands} hands ...\n")
    started = time.perf_counter()
    for deck in decks[:hands]:
        play_engine(deck)
    engine_seconds = time.perf_counter() - started
    out.write(f"pokerkit: {pokerkit_hands} hands ...\n")
    started = time.perf_counter()
    for deck in decks[:pokerkit_hands]:
        play_pokerkit(deck)
    pokerkit_seconds = time.perf_counter() - started
    engine_rate = hands / engine_seconds
    pokerkit_rate = pokerkit_hands / pokerkit_seconds
    ratio = engine_rate / pokerkit_rate
    rows = [
        ["engine (step)", hands, engine_seconds, engine_rate],
        ["pokerkit 0.7.7", pokerkit_hands, pokerkit_seconds, pokerkit_rate],
    ]
    figures = {
        "engine_hands_per_s": round(engine_rate, 1),
        "pokerkit_hands_per_s": round(pokerkit_rate, 1),
        "ratio": round(ratio, 1),
        "target_ratio": 50,
    }
    return BenchResult(
        "Scripted 6-handed no-limit hand: all call preflop, check to showdown",
        ["engine", "hands", "seconds", "hands_per_s"],
        rows,
        figures,
        notes=[f"ratio {ratio:.1f}x (target >= 50x); machine shared with other work"],
    )
