"""Documented main-game strategies, vectorised over batches of dealt rounds.

A strategy takes a ``Deal`` (arrays of card indices) and returns, per round, the
call/play multiplier of the ante (4, 3, 2, 1 or 0) and whether the player folded.
The rules and their sources are in ``docs/game-math.md`` (section "Strategies").

- ``uth_basic`` (UTH and Xtreme Hold'em, whose main games are the same): the
  widely published Wizard of Odds basic strategy for Ultimate Texas Hold'em.
- ``ch_basic`` (Casino Hold'em): the commonly published simple call/fold rules.
- ``always_max`` / ``always_call``: raise 4x before the flop / always call: a
  baseline, not a recommendation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from games.domain.batch import evaluate_batch
from games.domain.outcomes import card_rank_table, card_suit_table, categories
from games.domain.paytables import CATEGORIES

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

TWO_PAIR = CATEGORIES.index("two_pair")
THREE_OF_A_KIND = CATEGORIES.index("three_of_a_kind")
PAIR = CATEGORIES.index("pair")
HIGH_CARD = CATEGORIES.index("high_card")

OUTS_LIMIT = 21  # UTH river: call with fewer than 21 dealer outs
OUTS_CHUNK = 50_000


@dataclass(frozen=True)
class Deal:
    """A batch of rounds: ``player`` (N,2), ``dealer`` (N,2), ``board`` (N,5) card
    indices, and the player's 7-card evaluator ranks ``player_rank`` (N,)."""

    player: IntArray
    dealer: IntArray
    board: IntArray
    player_rank: IntArray


Strategy = Callable[[Deal], tuple[IntArray, BoolArray]]


def _ranks(cards: IntArray) -> IntArray:
    return card_rank_table()[cards]


def _suit_codes(cards: IntArray) -> IntArray:
    letters = card_suit_table()[cards]
    return np.searchsorted(np.array(["c", "d", "h", "s"]), letters).astype(np.int64)


def preflop_raise(player: IntArray) -> BoolArray:
    """UTH 4x before the flop: pair of 3s+, any ace, K-x suited, K5+, Q6s+, Q8+, J8s+, JT+."""
    ranks = _ranks(player)
    high, low = ranks.max(axis=1), ranks.min(axis=1)
    suits = _suit_codes(player)
    suited = suits[:, 0] == suits[:, 1]
    pair = high == low
    return (
        (pair & (high >= 3))
        | (high == 14)
        | ((high == 13) & (suited | (low >= 5)))
        | ((high == 12) & ((suited & (low >= 6)) | (low >= 8)))
        | ((high == 11) & ((suited & (low >= 8)) | (low >= 10)))
    )


def _hidden_pair(player: IntArray, shown: IntArray) -> BoolArray:
    """A hole card pairs a community card shown so far."""
    hole = _ranks(player)
    board = _ranks(shown)
    return (hole[:, :1] == board).any(axis=1) | (hole[:, 1:2] == board).any(axis=1)


def _board_category(shown: IntArray) -> IntArray:
    """Category index of the community cards alone (3 cards: trips, pair or high card)."""
    if shown.shape[1] >= 5:
        return categories(np.asarray(evaluate_batch(shown), dtype=np.int64))
    ranks = np.sort(_ranks(shown), axis=1)
    same = (ranks[:, 1:] == ranks[:, :-1]).sum(axis=1)
    return np.where(same == 2, THREE_OF_A_KIND, np.where(same == 1, PAIR, HIGH_CARD))


def flop_raise(player: IntArray, flop: IntArray) -> BoolArray:
    """UTH 2x on the flop: two pair or better made with a hole card; a hidden pair
    (a hole card pairs the flop, or a pocket pair other than deuces); four to a
    flush with a hidden ten or better of that suit."""
    five = np.concatenate([player, flop], axis=1)
    cat = categories(np.asarray(evaluate_batch(five), dtype=np.int64))
    made = (cat <= TWO_PAIR) & (cat < _board_category(flop))
    hole = _ranks(player)
    pocket = (hole[:, 0] == hole[:, 1]) & (hole[:, 0] > 2)
    suits = _suit_codes(five)
    counts = np.stack([(suits == s).sum(axis=1) for s in range(4)], axis=1)
    flush_suit = counts.argmax(axis=1)
    four_flush = counts.max(axis=1) >= 4
    hole_suits = suits[:, :2]
    hidden_ten = ((hole_suits == flush_suit[:, None]) & (hole >= 10)).any(axis=1)
    return made | _hidden_pair(player, flop) | pocket | (four_flush & hidden_ten)


def dealer_outs(player: IntArray, board: IntArray, player_rank: IntArray) -> IntArray:
    """Per round, how many of the 45 unseen cards would give the dealer (board plus
    that card) a hand at least as good as the player's: the UTH river "outs"."""
    n = len(player)
    known = np.zeros((n, 52), dtype=bool)
    rows = np.arange(n)[:, None]
    known[rows, player] = True
    known[rows, board] = True
    unseen = np.nonzero(~known)[1].reshape(n, 45)
    six = np.empty((n, 45, 6), dtype=np.uint8)
    six[:, :, :5] = board[:, None, :]
    six[:, :, 5] = unseen
    ranks = np.asarray(evaluate_batch(six.reshape(n * 45, 6)), dtype=np.int64).reshape(n, 45)
    return (ranks >= player_rank[:, None]).sum(axis=1)


def river_call(player: IntArray, board: IntArray, player_rank: IntArray) -> BoolArray:
    """UTH 1x at the river: a hidden pair or better, or fewer than 21 dealer outs."""
    hole = _ranks(player)
    player_cat = categories(player_rank)
    better_than_board = (player_cat < _board_category(board)) & (player_cat <= PAIR)
    call = _hidden_pair(player, board) | (hole[:, 0] == hole[:, 1]) | better_than_board
    undecided = np.nonzero(~call)[0]
    for start in range(0, len(undecided), OUTS_CHUNK):
        index = undecided[start : start + OUTS_CHUNK]
        call[index] = dealer_outs(player[index], board[index], player_rank[index]) < OUTS_LIMIT
    return call


def uth_basic(deal: Deal) -> tuple[IntArray, BoolArray]:
    n = len(deal.player)
    multiplier = np.zeros(n, dtype=np.int64)
    pre = preflop_raise(deal.player)
    multiplier[pre] = 4
    rest = np.nonzero(~pre)[0]
    flop = flop_raise(deal.player[rest], deal.board[rest, :3])
    multiplier[rest[flop]] = 2
    rest = rest[~flop]
    river = river_call(deal.player[rest], deal.board[rest], deal.player_rank[rest])
    multiplier[rest[river]] = 1
    folded = np.zeros(n, dtype=bool)
    folded[rest[~river]] = True
    return multiplier, folded


def _straight_draw(five: IntArray) -> BoolArray:
    """Open-ended four-card straight (both ends can complete it) or better."""
    ranks = _ranks(five)
    present = np.zeros((len(five), 15), dtype=bool)  # index 1 = ace low
    present[np.arange(len(five))[:, None], ranks] = True
    present[:, 1] = present[:, 14]
    draw = np.zeros(len(five), dtype=bool)
    for low in range(2, 11):  # windows low..low+3 with low-1 >= 1 and low+4 <= 14
        draw |= present[:, low : low + 4].all(axis=1)
    return draw


def ch_call(player: IntArray, flop: IntArray) -> BoolArray:
    """Casino Hold'em call after the flop: a pair or better made with a hole card,
    four to a flush, an open-ended straight draw, an ace or king in the hand, or
    two hole cards above every flop card. Otherwise fold."""
    five = np.concatenate([player, flop], axis=1)
    cat = categories(np.asarray(evaluate_batch(five), dtype=np.int64))
    made = (cat <= PAIR) & (cat < _board_category(flop))
    suits = _suit_codes(five)
    four_flush = np.stack([(suits == s).sum(axis=1) for s in range(4)], axis=1).max(axis=1) >= 4
    hole = _ranks(player)
    high_card = hole.max(axis=1) >= 13
    overcards = hole.min(axis=1) > _ranks(flop).max(axis=1)
    return made | four_flush | _straight_draw(five) | high_card | overcards


def ch_basic(deal: Deal) -> tuple[IntArray, BoolArray]:
    call = ch_call(deal.player, deal.board[:, :3])
    return np.where(call, 2, 0).astype(np.int64), ~call


def always_max(deal: Deal) -> tuple[IntArray, BoolArray]:
    n = len(deal.player)
    return np.full(n, 4, dtype=np.int64), np.zeros(n, dtype=bool)


def always_call(deal: Deal) -> tuple[IntArray, BoolArray]:
    n = len(deal.player)
    return np.full(n, 2, dtype=np.int64), np.zeros(n, dtype=bool)


STRATEGIES: dict[str, dict[str, Strategy]] = {
    "uth": {"uth_basic": uth_basic, "always_max": always_max},
    "xtreme": {"uth_basic": uth_basic, "always_max": always_max},
    "casino_holdem": {"ch_basic": ch_basic, "always_call": always_call},
}
DEFAULT_STRATEGY = {"uth": "uth_basic", "xtreme": "uth_basic", "casino_holdem": "ch_basic"}
