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

import base64
import json
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

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
    that card) a hand that beats the player's: the UTH river "dealer outs". A card
    that only ties is not an out (a tie pushes every main wager)."""
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
    return (ranks > player_rank[:, None]).sum(axis=1)


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


def _rank_presence(cards: IntArray) -> BoolArray:
    """(N, 15) rank presence; index 1 repeats the ace for the wheel."""
    present = np.zeros((len(cards), 15), dtype=bool)
    present[np.arange(len(cards))[:, None], _ranks(cards)] = True
    present[:, 1] = present[:, 14]
    return present


def straight_draw(five: IntArray) -> IntArray:
    """2: open-ended four-card straight (completable at either end); 1: any other
    four of five consecutive ranks (gutshot, or one-ended); 0: neither."""
    present = _rank_presence(five)
    open_ended = np.zeros(len(five), dtype=bool)
    for low in range(2, 11):  # low..low+3 with low-1 >= 1 (ace low) and low+4 <= 14
        open_ended |= present[:, low : low + 4].all(axis=1)
    four_of_five = np.zeros(len(five), dtype=bool)
    for low in range(1, 11):
        four_of_five |= present[:, low : low + 5].sum(axis=1) >= 4
    return np.where(open_ended, 2, np.where(four_of_five, 1, 0))


def flush_draw(player: IntArray, five: IntArray) -> IntArray:
    """2: four (or more) cards of one suit; 1: three of a suit including both hole cards; 0."""
    suits = _suit_codes(five)
    counts = np.stack([(suits == s).sum(axis=1) for s in range(4)], axis=1)
    hole = _suit_codes(player)
    suited = hole[:, 0] == hole[:, 1]
    backdoor = suited & (counts[np.arange(len(five)), hole[:, 0]] >= 3)
    return np.where(counts.max(axis=1) >= 4, 2, np.where(backdoor, 1, 0))


CH_SUIT_CLASSES = 6
CH_KEY_SIZE = 13**5 * CH_SUIT_CLASSES
CH_COARSE_SIZE = 3 * 13 * 13 * 3 * 3


def suit_class(player: IntArray, flop: IntArray) -> IntArray:
    """The flush picture after the flop: 4 a made flush, 3 four of a suit, 2 three of
    a suit with both hole cards, 1 three of a suit with one hole card, 5 a
    one-suit flop without a hole card of its suit, 0 none of these."""
    hole = _suit_codes(player)
    board = _suit_codes(flop)
    best = np.zeros(len(player), dtype=np.int64)
    for suit in range(4):
        in_hole = (hole == suit).sum(axis=1)
        in_board = (board == suit).sum(axis=1)
        total = in_hole + in_board
        cls = np.select(
            [total >= 5, total == 4, (total == 3) & (in_hole == 2), (total == 3) & (in_hole == 1), in_board == 3],
            [4, 3, 2, 1, 5],
            0,
        )
        # Keep the strongest picture (5 is the weakest flush picture, after 0).
        order = np.array([0, 2, 3, 4, 5, 1])
        best = np.where(order[cls] > order[best], cls, best)
    return best


def ch_keys(player: IntArray, flop: IntArray) -> tuple[IntArray, IntArray]:
    """Casino Hold'em flop classes: (fine, coarse) keys per round.

    Fine: the exact ranks (two hole cards, sorted; three flop cards, sorted) and the
    flush picture (``suit_class``): pairs and straight draws follow from the ranks.
    Coarse (for fine classes too rare to learn): what the hand made with a hole
    card (0 nothing, 1 a pair, 2 two pair or better), the two hole ranks, the flush
    draw (0/1 backdoor/2 four-flush) and the straight draw (0/1 gutshot/2 open-ended)."""
    five = np.concatenate([player, flop], axis=1)
    cat = categories(np.asarray(evaluate_batch(five), dtype=np.int64))
    board = _board_category(flop)
    made = np.where((cat < board) & (cat < PAIR), 2, np.where((cat < board) & (cat == PAIR), 1, 0))
    hole = np.sort(_ranks(player), axis=1) - 2
    coarse = (((made * 13 + hole[:, 1]) * 13 + hole[:, 0]) * 3 + flush_draw(player, five)) * 3 + straight_draw(five)
    shown = np.sort(_ranks(flop), axis=1) - 2
    ranks = (((hole[:, 1] * 13 + hole[:, 0]) * 13 + shown[:, 2]) * 13 + shown[:, 1]) * 13 + shown[:, 0]
    return ranks * CH_SUIT_CLASSES + suit_class(player, flop), coarse


@dataclass(frozen=True)
class CallTable:
    """Which Casino Hold'em flop classes call: per fine class, or per coarse class
    where the fine class had too few training rounds."""

    fine: BoolArray  # CH_KEY_SIZE (calls where known)
    fine_known: BoolArray
    coarse: BoolArray  # CH_COARSE_SIZE
    rounds: int
    seed: int

    def calls(self, player: IntArray, flop: IntArray) -> BoolArray:
        fine, coarse = ch_keys(player, flop)
        return np.where(self.fine_known[fine], self.fine[fine], self.coarse[coarse])

    def to_json(self) -> str:
        return json.dumps(
            {
                "description": "Casino Hold'em call table: see games.math.strategy.train_ch_call_table",
                "rounds": self.rounds,
                "seed": self.seed,
                "min_fine_rounds": CH_MIN_FINE_ROUNDS,
                "fine_call": _bits(self.fine),
                "fine_known": _bits(self.fine_known),
                "coarse_call": _bits(self.coarse),
            }
        )

    @staticmethod
    def from_json(text: str) -> CallTable:
        data = json.loads(text)
        return CallTable(
            fine=_unbits(data["fine_call"], CH_KEY_SIZE),
            fine_known=_unbits(data["fine_known"], CH_KEY_SIZE),
            coarse=_unbits(data["coarse_call"], CH_COARSE_SIZE),
            rounds=int(data["rounds"]),
            seed=int(data["seed"]),
        )


def _bits(array: BoolArray) -> str:
    return base64.b64encode(zlib.compress(np.packbits(array).tobytes(), 9)).decode()


def _unbits(text: str, size: int) -> BoolArray:
    raw = np.frombuffer(zlib.decompress(base64.b64decode(text)), dtype=np.uint8)
    return np.unpackbits(raw)[:size].astype(bool)


CH_MIN_FINE_ROUNDS = 200
CH_TABLE_PATH = Path(__file__).with_name("data") / "ch_call_table.json"


def train_ch_call_table(
    rounds: int, seed: int, *, batch: int = 250_000, progress: Callable[[int], None] | None = None
) -> CallTable:
    """Derive the Casino Hold'em call table from simulated rounds.

    Every round is played as a call; per flop class the mean net of calling (in
    antes) is compared with folding's -1 and the class calls when calling is
    better. Classes with fewer than ``CH_MIN_FINE_ROUNDS`` rounds fall back to
    their coarse class. Settlement is the game definition's own (``settle_batch``)."""
    from games.domain.house_games import CASINO_HOLDEM
    from games.math.simulation import deal_batch, settle_batch

    tables = CASINO_HOLDEM.default_pay_tables()
    rng = np.random.default_rng(seed)
    fine_sum = np.zeros(CH_KEY_SIZE)
    fine_n = np.zeros(CH_KEY_SIZE, dtype=np.int64)
    coarse_sum = np.zeros(CH_COARSE_SIZE)
    coarse_n = np.zeros(CH_COARSE_SIZE, dtype=np.int64)
    done = 0
    while done < rounds:
        n = min(batch, rounds - done)
        cards = deal_batch(rng, n)
        player, dealer, board = cards[:, 0:2], cards[:, 2:4], cards[:, 4:9]
        player_rank = np.asarray(evaluate_batch(np.concatenate([player, board], axis=1)), dtype=np.int64)
        dealer_rank = np.asarray(evaluate_batch(np.concatenate([dealer, board], axis=1)), dtype=np.int64)
        settled = settle_batch(
            CASINO_HOLDEM, tables, player_rank, dealer_rank, np.full(n, 2, dtype=np.int64), np.zeros(n, dtype=bool)
        )
        net = sum(r - s for s, r in settled.values())
        fine, coarse = ch_keys(player, board[:, :3])
        fine_sum += np.bincount(fine, weights=net, minlength=CH_KEY_SIZE)
        fine_n += np.bincount(fine, minlength=CH_KEY_SIZE)
        coarse_sum += np.bincount(coarse, weights=net, minlength=CH_COARSE_SIZE)
        coarse_n += np.bincount(coarse, minlength=CH_COARSE_SIZE)
        done += n
        if progress is not None:
            progress(done)
    fold_value = -1.0
    fine_known = fine_n >= CH_MIN_FINE_ROUNDS
    fine_call = fine_sum > fold_value * fine_n
    coarse_call = (coarse_sum > fold_value * coarse_n) | (coarse_n == 0)
    return CallTable(fine_call & fine_known, fine_known, coarse_call, rounds, seed)


@cache
def ch_call_table() -> CallTable:
    return CallTable.from_json(CH_TABLE_PATH.read_text())


def ch_table(deal: Deal) -> tuple[IntArray, BoolArray]:
    call = ch_call_table().calls(deal.player, deal.board[:, :3])
    return np.where(call, 2, 0).astype(np.int64), ~call


def ch_call(player: IntArray, flop: IntArray) -> BoolArray:
    """Casino Hold'em simple rules: call with a pair or better made with a hole card,
    four to a flush, an open-ended straight draw, an ace or king in the hand, or
    two hole cards above every flop card; otherwise fold."""
    five = np.concatenate([player, flop], axis=1)
    cat = categories(np.asarray(evaluate_batch(five), dtype=np.int64))
    made = (cat <= PAIR) & (cat < _board_category(flop))
    hole = _ranks(player)
    return (
        made
        | (flush_draw(player, five) == 2)
        | (straight_draw(five) == 2)
        | (hole.max(axis=1) >= 13)
        | (hole.min(axis=1) > _ranks(flop).max(axis=1))
    )


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
    "casino_holdem": {"ch_table": ch_table, "ch_basic": ch_basic, "always_call": always_call},
}
DEFAULT_STRATEGY = {"uth": "uth_basic", "xtreme": "uth_basic", "casino_holdem": "ch_table"}
