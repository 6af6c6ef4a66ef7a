"""Simulated deals: dealing batches of main-game rounds and settling them, in NumPy.

Shared by the simulation (``simulation.simulate``) and the strategy training
(``strategy.train_*``). Dealing is a partial Fisher-Yates shuffle per round from
NumPy's seeded PCG64 generator (reproducible; not the live secure generator).
Settlement reads the game definition's own main-wager rule tables (``MainRule``)
and pay tables, the data live settlement reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from games.cards.batch import evaluate_batch
from games.house.rules.definitions import Action, GameDefinition, WagerKind
from games.house.rules.outcomes import categories
from games.house.rules.paytables import CATEGORIES, PayTable

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]

RESULTS = ("win", "tie", "lose", "fold")


@dataclass(frozen=True)
class Deal:
    """A batch of rounds: ``player`` (N,2), ``dealer`` (N,2), ``board`` (N,5) card
    indices, and the player's 7-card evaluator ranks ``player_rank`` (N,)."""

    player: IntArray
    dealer: IntArray
    board: IntArray
    player_rank: IntArray


def deal_batch(rng: np.random.Generator, n: int) -> IntArray:
    """(n, 9) distinct card indices per row: a partial Fisher-Yates shuffle of a fresh deck."""
    deck = np.tile(np.arange(52, dtype=np.int8), (n, 1))  # int8: 52 bytes per round
    rows = np.arange(n)
    for i in range(9):
        j = rng.integers(i, 52, size=n)
        picked = deck[rows, j]
        deck[rows, j] = deck[rows, i]
        deck[rows, i] = picked
    return deck[:, :9].astype(np.int64)


def dealt_rounds(rounds: int, seed: int, batch: int) -> Iterator[tuple[Deal, IntArray]]:
    """``rounds`` dealt rounds in batches from a seeded generator: the ``Deal`` (with
    the player's 7-card ranks) and the dealer's 7-card ranks."""
    rng = np.random.default_rng(seed)
    done = 0
    while done < rounds:
        n = min(batch, rounds - done)
        cards = deal_batch(rng, n)
        player, dealer, board = cards[:, 0:2], cards[:, 2:4], cards[:, 4:9]
        player_rank = np.asarray(evaluate_batch(np.concatenate([player, board], axis=1)), dtype=np.int64)
        dealer_rank = np.asarray(evaluate_batch(np.concatenate([dealer, board], axis=1)), dtype=np.int64)
        yield Deal(player, dealer, board, player_rank), dealer_rank
        done += n


def _action_factor(action: Action, table_factor: FloatArray) -> FloatArray:
    if action is Action.TABLE:
        return table_factor
    value = {Action.EVEN: 2.0, Action.PUSH: 1.0, Action.LOSE: 0.0}[action]
    return np.full(len(table_factor), value)


def settle_deals(
    definition: GameDefinition,
    tables: dict[str, PayTable],
    player_rank: IntArray,
    dealer_rank: IntArray,
    multiplier: IntArray,
    folded: BoolArray,
) -> dict[str, tuple[FloatArray, FloatArray]]:
    """Per main wager: (stake, returned) per round, in antes, from the game's rule tables."""
    qualified = dealer_rank >= definition.qualifier.threshold_rank()
    result = np.where(folded, 3, np.where(player_rank > dealer_rank, 0, np.where(player_rank == dealer_rank, 1, 2)))
    cats = categories(player_rank)
    out: dict[str, tuple[FloatArray, FloatArray]] = {}
    for wager in definition.wagers:
        rule = wager.main_rule
        if rule is None:
            continue
        stake = multiplier.astype(np.float64) if wager.kind is WagerKind.DECISION else np.ones(len(player_rank))
        if wager.name in tables:
            lut = np.array([float(tables[wager.name].pay_for(c).return_multiple) for c in CATEGORIES])
            table_factor = lut[cats]
        else:
            table_factor = np.ones(len(player_rank))
        factor = np.zeros(len(player_rank))
        for code, name in enumerate(RESULTS):
            for q in (True, False):
                mask = (result == code) & (qualified == q)
                if mask.any():
                    factor[mask] = _action_factor(rule.action(name, q), table_factor[mask])
        out[wager.name] = (stake, stake * factor)
    return out
