"""The optimal strategies, read from the exact analysis's tables (``exact_main``).

``uth_exact`` (Ultimate Texas Hold'em and Xtreme Hold'em, whose main games are the
same) and ``ch_exact`` (Casino Hold'em) decide every round as the perfect strategy
of ``exact_main.exact_main_rtp`` does: the preflop decision by starting hand (169
classes), the flop decision by (flop class, hole pair) and the UTH river decision
by (board class, hole pair), each looked up in the suit-canonical frame the
analysis uses (the flop or board's suits renamed to its class's representative,
the hole cards renamed with it). Ties go to the passive option, as in the analysis.

The tables ship with the code in ``data/uth_exact.npz`` and ``data/ch_exact.npz``
(``save_tables`` writes them from a full analysis; ``manage.py rtp GAME main
--data FILE``), so the strategies need no enumeration run:

- ``preflop`` (169,) int8: the multiplier bet before the flop per starting-hand
  class (``exact_main.hand_classes`` order; 0 = check); UTH only.
- ``flop`` (1755, 166) uint8: per flop class (``exact_main.suit_classes(3)``),
  ``np.packbits`` of the flop bet bit per hole pair index (1326, lexicographic
  pairs of card indices in the representative's frame).
- ``river`` (134459, 136) uint8: per board class (``suit_classes(5)``), packbits
  of the river call bit per hole pair of the 47 cards off the board, the pair
  (i < j, positions among those 47 cards in card order) at ``j (j - 1) / 2 + i``;
  UTH only.
- ``flop_multiplier``, ``river_multiplier``, ``game``, ``paytable``, ``rtp_per_ante``
  (the exact figure as "numerator/denominator") and ``summary`` (the analysis's JSON:
  its figures, decision shares and timeout costs).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from games.house.math.deals import BoolArray, Deal, IntArray
from games.house.math.exact_main import (
    ExactMainResult,
    card_perms,
    colex,
    hand_classes,
    pair_index,
    pair_perms,
    suit_classes,
)

DATA = Path(__file__).with_name("data")
TABLE_PATHS = {"uth": DATA / "uth_exact.npz", "casino_holdem": DATA / "ch_exact.npz"}
U8 = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class ExactTables:
    game: str
    paytable: str
    rtp_per_ante: str
    summary: str  # the analysis's JSON (``ExactMainResult.as_dict``): its figures and decision shares
    preflop: npt.NDArray[np.int8]  # (169,) multiplier; empty for a flop-only game
    flop: U8  # (flop classes, 166) packed bet bits
    river: U8  # (board classes, 136) packed call bits; empty for a flop-only game
    flop_multiplier: int
    river_multiplier: int

    def preflop_multiplier(self, player: IntArray) -> IntArray:
        """The multiplier bet before the flop (0: check) per round."""
        hclass, _ = hand_classes()
        out: IntArray = self.preflop[hclass[pair_index()[player[:, 0], player[:, 1]]]].astype(np.int64)
        return out

    def flop_bets(self, player: IntArray, flop: IntArray) -> BoolArray:
        """Per round: the flop bet (UTH 2x, Casino Hold'em call) is the optimum."""
        classes = suit_classes(3)
        where = colex(np.sort(flop, axis=1))
        cls = classes.class_of[where].astype(np.int64)
        perm = classes.perm_of[where].astype(np.int64)
        pair = pair_perms()[perm, pair_index()[player[:, 0], player[:, 1]]]
        return _bit(self.flop, cls, pair)

    def river_calls(self, player: IntArray, board: IntArray) -> BoolArray:
        """Per round: calling at the river is the optimum (UTH)."""
        classes = suit_classes(5)
        where = colex(np.sort(board, axis=1))
        cls = classes.class_of[where].astype(np.int64)
        perm = classes.perm_of[where].astype(np.int64)
        cp = card_perms().astype(np.int64)
        a, b = cp[perm, player[:, 0]], cp[perm, player[:, 1]]
        reps = classes.reps[cls]
        return _bit(self.river, cls, river_pair_slot(reps, a, b))

    def decide(self, deal: Deal) -> tuple[IntArray, BoolArray]:
        n = len(deal.player)
        multiplier = np.zeros(n, dtype=np.int64)
        folded = np.zeros(n, dtype=bool)
        rest = np.arange(n)
        if len(self.preflop):
            pre = self.preflop_multiplier(deal.player)
            multiplier[:] = pre
            rest = np.nonzero(pre == 0)[0]
        bets = self.flop_bets(deal.player[rest], deal.board[rest, :3])
        multiplier[rest[bets]] = self.flop_multiplier
        rest = rest[~bets]
        if not len(self.river):
            folded[rest] = True
            return multiplier, folded
        calls = self.river_calls(deal.player[rest], deal.board[rest])
        multiplier[rest[calls]] = self.river_multiplier
        folded[rest[~calls]] = True
        return multiplier, folded


def _bit(packed: U8, row: IntArray, column: IntArray) -> BoolArray:
    byte = packed[row, column >> 3]
    out: BoolArray = ((byte >> (7 - (column & 7))) & 1).astype(np.bool_)
    return out


def river_pair_slot(reps: IntArray, a: IntArray, b: IntArray) -> IntArray:
    """The slot of hole cards (a, b) among the pairs of the 47 cards off each board ``reps`` (n, 5)."""
    i = a - (reps < a[:, None]).sum(axis=1)
    j = b - (reps < b[:, None]).sum(axis=1)
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    slot: IntArray = hi * (hi - 1) // 2 + lo
    return slot


def river_table(result: ExactMainResult) -> U8:
    """The river call bits of ``result`` (per board class, packed by pair index) re-packed by slot."""
    reps = result.river_reps.astype(np.int64)
    n = len(reps)
    out = np.zeros((n, (1081 + 7) // 8), dtype=np.uint8)
    pidx = pair_index()
    chunk = 4096
    for start in range(0, n, chunk):
        part = reps[start : start + chunk]
        m = len(part)
        calls = np.unpackbits(result.river_calls[start : start + chunk], axis=1)[:, :1326].astype(np.bool_)
        mask = np.ones((m, 52), dtype=np.bool_)
        mask[np.arange(m)[:, None], part] = False
        rest = np.nonzero(mask)[1].reshape(m, 47)
        jj, ii = np.tril_indices(47, -1)  # jj > ii, in slot order jj (jj - 1) / 2 + ii
        order = np.argsort(jj * (jj - 1) // 2 + ii)
        ii, jj = ii[order], jj[order]
        bits = calls[np.arange(m)[:, None], pidx[rest[:, ii], rest[:, jj]]]
        out[start : start + m] = np.packbits(bits, axis=1)
    return out


def tables_from_result(result: ExactMainResult) -> ExactTables:
    """The compact tables of an analysis (a reduced one holds only its flop and board classes)."""
    preflop = np.zeros(0, dtype=np.int8)
    multipliers = _multipliers(result.game)
    if multipliers["preflop"]:
        _, names = hand_classes()
        by_name = {row["hand"]: row["decision"] for row in result.preflop}
        preflop = np.array([multipliers["preflop"].get(by_name.get(n), 0) for n in names], dtype=np.int8)
    river = river_table(result) if len(result.river_reps) else np.zeros((0, 0), dtype=np.uint8)
    return ExactTables(
        game=result.game,
        paytable=result.paytable,
        rtp_per_ante=f"{result.rtp_per_ante.numerator}/{result.rtp_per_ante.denominator}",
        summary=json.dumps(result.as_dict()),
        preflop=preflop,
        flop=np.packbits((result.flop_decisions == 0).astype(np.uint8), axis=1),
        river=river,
        flop_multiplier=int(multipliers["flop"]),
        river_multiplier=int(multipliers["river"]),
    )


def save_tables(result: ExactMainResult, path: Path) -> Path:
    """Write the compact tables of a complete analysis (see the module docstring)."""
    if not result.complete:
        raise ValueError("the shipped tables need a complete analysis")
    tables = tables_from_result(result)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        np.savez_compressed(
            handle,
            game=np.array(tables.game),
            paytable=np.array(tables.paytable),
            rtp_per_ante=np.array(tables.rtp_per_ante),
            summary=np.array(tables.summary),
            preflop=tables.preflop,
            flop=tables.flop,
            river=tables.river,
            flop_multiplier=np.array(tables.flop_multiplier),
            river_multiplier=np.array(tables.river_multiplier),
        )
    return path


def _multipliers(game_code: str) -> dict[str, Any]:
    from games.house.math.exact_main import main_game
    from games.house.rules.registry import game

    spec = main_game(game(game_code))
    return {
        "preflop": dict(spec.preflop),
        "flop": spec.flop[0][1],
        "river": spec.river[0][1] if spec.river else 0,
    }


def load_tables(path: Path) -> ExactTables:
    with np.load(path) as data:
        return ExactTables(
            game=str(data["game"]),
            paytable=str(data["paytable"]),
            rtp_per_ante=str(data["rtp_per_ante"]),
            summary=str(data["summary"]),
            preflop=data["preflop"].astype(np.int8),
            flop=data["flop"].astype(np.uint8),
            river=data["river"].astype(np.uint8),
            flop_multiplier=int(data["flop_multiplier"]),
            river_multiplier=int(data["river_multiplier"]),
        )


@cache
def exact_tables(table_game: str) -> ExactTables:
    """The shipped tables of ``table_game`` ('uth' also serves Xtreme Hold'em)."""
    return load_tables(TABLE_PATHS[table_game])


def uth_exact(deal: Deal) -> tuple[IntArray, BoolArray]:
    return exact_tables("uth").decide(deal)


def ch_exact(deal: Deal) -> tuple[IntArray, BoolArray]:
    return exact_tables("casino_holdem").decide(deal)


# The shipped tables by table game (Xtreme Hold'em's main game is UTH's: same rules, same pay table).
TABLES_OF_GAME = {"uth": "uth", "xtreme": "uth", "casino_holdem": "casino_holdem"}


def optimal_choice(table_game: str, street: str, hole: Sequence[int], board: Sequence[int]) -> tuple[int, bool]:
    """The perfect-strategy decision at ``street`` (``preflop``, ``flop`` or
    ``river``) for the player's two ``hole`` cards and the ``board`` cards
    shown (card indices): ``(multiplier, folds)`` of the option to take
    (multiplier 0 and no fold: check). ``KeyError`` for a game without tables."""
    tables = exact_tables(TABLES_OF_GAME[table_game])
    player = np.array([list(hole)], dtype=np.int64)
    if street == "preflop":
        return int(tables.preflop_multiplier(player)[0]), False
    if street == "flop":
        bets = bool(tables.flop_bets(player, np.array([list(board[:3])], dtype=np.int64))[0])
        return (tables.flop_multiplier, False) if bets else (0, not len(tables.river))
    if street == "river":
        calls = bool(tables.river_calls(player, np.array([list(board[:5])], dtype=np.int64))[0])
        return (tables.river_multiplier, False) if calls else (0, True)
    raise ValueError(f"no decision at street {street!r}")
