"""Documented main-game strategies, vectorised over batches of dealt rounds.

A strategy takes a ``Deal`` (arrays of card indices) and returns, per round, the
call/play multiplier of the ante (4, 3, 2, 1 or 0) and whether the player folded.
The rules and their sources are in ``docs/game-math.md`` (section "Strategies").

- ``uth_exact`` and ``ch_exact`` (defaults): the optimal strategies, read from the
  exact analysis's tables (``exact_strategy``; UTH's also serves Xtreme Hold'em).
- ``uth_table`` (UTH and Xtreme Hold'em, whose main games are the same):
  derived by the project from simulated rounds, street by street from the river
  back (``train_uth_table``); ``uth_basic``: the widely published Wizard of Odds
  basic strategy (``uth_table`` agrees with its preflop rules on 168 of 169 hands).
- ``ch_table`` (Casino Hold'em): derived per flop class
  (``train_ch_call_table``); ``ch_basic``: the commonly quoted simple call/fold rules.
- ``always_max`` / ``always_call``: raise 4x before the flop / always call: a
  baseline, not a recommendation.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

from games.cards.batch import evaluate_batch
from games.house.math.deals import BoolArray, Deal, IntArray, dealt_rounds, settle_deals
from games.house.math.exact_strategy import ch_exact, uth_exact
from games.house.rules.outcomes import card_rank_table, card_suit_table, categories
from games.house.rules.paytables import CATEGORIES
from games.house.rules.registry import game, games

TWO_PAIR = CATEGORIES.index("two_pair")
THREE_OF_A_KIND = CATEGORIES.index("three_of_a_kind")
PAIR = CATEGORIES.index("pair")
HIGH_CARD = CATEGORIES.index("high_card")

OUTS_LIMIT = 21  # UTH river: call with fewer than 21 dealer outs
OUTS_CHUNK = 10_000  # 450,000 six-card hands per evaluate_batch call: bounded memory


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
    raises: BoolArray = (
        (pair & (high >= 3))
        | (high == 14)
        | ((high == 13) & (suited | (low >= 5)))
        | ((high == 12) & ((suited & (low >= 6)) | (low >= 8)))
        | ((high == 11) & ((suited & (low >= 8)) | (low >= 10)))
    )
    return raises


def _hidden_pair(player: IntArray, shown: IntArray) -> BoolArray:
    """A hole card pairs a community card shown so far."""
    hole = _ranks(player)
    board = _ranks(shown)
    paired: BoolArray = (hole[:, :1] == board).any(axis=1) | (hole[:, 1:2] == board).any(axis=1)
    return paired


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
    raises: BoolArray = made | _hidden_pair(player, flop) | pocket | (four_flush & hidden_ten)
    return raises


def outs(player: IntArray, board: IntArray, player_rank: IntArray) -> tuple[IntArray, IntArray]:
    """Per round, of the 45 unseen cards, how many would give the dealer (board plus
    that card) a hand that beats the player's, and how many one that ties it."""
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
    return (ranks > player_rank[:, None]).sum(axis=1), (ranks == player_rank[:, None]).sum(axis=1)


def dealer_outs(player: IntArray, board: IntArray, player_rank: IntArray) -> IntArray:
    """The UTH river "dealer outs": unseen cards that, with the board, beat the
    player. A card that only ties is not an out (a tie pushes every main wager)."""
    return outs(player, board, player_rank)[0]


def river_call(player: IntArray, board: IntArray, player_rank: IntArray) -> BoolArray:
    """UTH 1x at the river: a hidden pair or better, or fewer than 21 dealer outs."""
    hole = _ranks(player)
    player_cat = categories(player_rank)
    better_than_board = (player_cat < _board_category(board)) & (player_cat <= PAIR)
    call: BoolArray = _hidden_pair(player, board) | (hole[:, 0] == hole[:, 1]) | better_than_board
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


SUIT_CLASSES = 6
FLOP_KEY_SIZE = 13**5 * SUIT_CLASSES
FLOP_COARSE_SIZE = 3 * 13 * 13 * 3 * 3


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


def flop_keys(player: IntArray, flop: IntArray) -> tuple[IntArray, IntArray]:
    """Flop classes (Casino Hold'em call, UTH 2x): (fine, coarse) keys per round.

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
    return ranks * SUIT_CLASSES + suit_class(player, flop), coarse


@dataclass(frozen=True)
class CallTable:
    """Which flop classes call (raise): per fine class, or per coarse class where
    the fine class had too few training rounds."""

    fine: BoolArray  # FLOP_KEY_SIZE (calls where known)
    fine_known: BoolArray
    coarse: BoolArray  # FLOP_COARSE_SIZE
    rounds: int
    seed: int

    def calls(self, player: IntArray, flop: IntArray) -> BoolArray:
        fine, coarse = flop_keys(player, flop)
        return np.where(self.fine_known[fine], self.fine[fine], self.coarse[coarse])

    def to_json(self) -> str:
        return json.dumps(
            {
                "description": "Casino Hold'em call table: see games.house.math.strategy.train_ch_call_table",
                "rounds": self.rounds,
                "seed": self.seed,
                "shrink": FLOP_SHRINK,
                "fine_call": _bits(self.fine),
                "fine_known": _bits(self.fine_known),
                "coarse_call": _bits(self.coarse),
            }
        )

    @staticmethod
    def from_json(text: str) -> CallTable:
        data = json.loads(text)
        return CallTable(
            fine=_unbits(data["fine_call"], FLOP_KEY_SIZE),
            fine_known=_unbits(data["fine_known"], FLOP_KEY_SIZE),
            coarse=_unbits(data["coarse_call"], FLOP_COARSE_SIZE),
            rounds=int(data["rounds"]),
            seed=int(data["seed"]),
        )


def _bits(array: BoolArray) -> str:
    return base64.b64encode(zlib.compress(np.packbits(array).tobytes(), 9)).decode()


def _unbits(text: str, size: int) -> BoolArray:
    raw = np.frombuffer(zlib.decompress(base64.b64decode(text)), dtype=np.uint8)
    return np.unpackbits(raw)[:size].astype(bool)


MIN_CLASS_ROUNDS = 200
CH_TABLE_PATH = Path(__file__).with_name("data") / "ch_call_table.json"


class _ClassMeans:
    """Running sums per class of a decision's gain (positive: take the action)."""

    def __init__(self, size: int) -> None:
        self.total = np.zeros(size)
        self.count = np.zeros(size, dtype=np.int64)

    def add(self, keys: IntArray, gain: npt.NDArray[np.float64]) -> None:
        self.total += np.bincount(keys, weights=gain, minlength=len(self.total))
        self.count += np.bincount(keys, minlength=len(self.count))

    def decide(self, default: bool = True) -> BoolArray:
        return np.where(self.count > 0, self.total > 0, default)


class _FlopMeans:
    """Flop-class means, a fine class shrunk toward its coarse class: the class acts
    when (fine total + SHRINK x coarse mean) > 0, so rare classes lean on the coarse
    estimate instead of their own noise."""

    def __init__(self) -> None:
        self.fine = _ClassMeans(FLOP_KEY_SIZE)
        self.coarse = _ClassMeans(FLOP_COARSE_SIZE)
        self.parent = np.zeros(FLOP_KEY_SIZE, dtype=np.int64)

    def add(self, player: IntArray, flop: IntArray, gain: npt.NDArray[np.float64]) -> None:
        fine, coarse = flop_keys(player, flop)
        self.fine.add(fine, gain)
        self.coarse.add(coarse, gain)
        self.parent[fine] = coarse  # a fine class always has the same coarse class

    def table(self, rounds: int, seed: int) -> CallTable:
        coarse_mean = self.coarse.total / np.maximum(self.coarse.count, 1)
        known = self.fine.count > 0
        score = self.fine.total + FLOP_SHRINK * coarse_mean[self.parent]
        return CallTable(known & (score > 0), known, self.coarse.decide(), rounds, seed)


FLOP_SHRINK = 300.0


def _training_batches(
    game_code: str, rounds: int, seed: int, batch: int, progress: Callable[[int], None] | None
) -> Iterator[tuple[Deal, IntArray, Callable[[int], npt.NDArray[np.float64]]]]:
    """Dealt batches with the dealer's ranks and ``net(multiplier)``: each round's net
    (in antes) had the player called ``multiplier`` x ante, settled by the game's
    own rule tables."""
    definition = game(game_code)
    tables = definition.default_pay_tables()
    done = 0
    for deal, dealer_rank in dealt_rounds(rounds, seed, batch):
        n = len(deal.player)

        def net(
            multiplier: int, pr: IntArray = deal.player_rank, dr: IntArray = dealer_rank, size: int = n
        ) -> npt.NDArray[np.float64]:
            settled = settle_deals(
                definition, tables, pr, dr, np.full(size, multiplier, dtype=np.int64), np.zeros(size, dtype=bool)
            )
            return sum((r - s for s, r in settled.values()), start=np.zeros(size))

        yield deal, dealer_rank, net
        done += n
        if progress is not None:
            progress(done)


def train_ch_call_table(
    rounds: int, seed: int, *, batch: int = 250_000, progress: Callable[[int], None] | None = None
) -> CallTable:
    """Derive the Casino Hold'em call table from simulated rounds.

    Every round is played as a call; per flop class the mean net of calling (in
    antes) is compared with folding's -1 and the class calls when calling is
    better (shrunk toward the coarse class, ``_FlopMeans``); classes never seen
    fall back to their coarse class. Settlement is the game definition's own
    (``deals.settle_deals``)."""
    means = _FlopMeans()
    for deal, _, net in _training_batches("casino_holdem", rounds, seed, batch, progress):
        means.add(deal.player, deal.board[:, :3], net(2) + 1.0)
    return means.table(rounds, seed)


RIVER_TIE_CAP = 15
RIVER_KEY_SIZE = 46 * (RIVER_TIE_CAP + 1) * len(CATEGORIES) * 2
PREFLOP_KEY_SIZE = 13 * 13 * 2
UTH_TABLE_PATH = Path(__file__).with_name("data") / "uth_table.json"


def river_keys(player: IntArray, board: IntArray, player_rank: IntArray) -> IntArray:
    """UTH river classes: dealer outs that beat the player, outs that tie (capped),
    the player's category and whether the board alone holds a pair (the dealer then
    qualifies for sure)."""
    beat, tie = outs(player, board, player_rank)
    paired = (_board_category(board) != HIGH_CARD).astype(np.int64)
    keys: IntArray = (
        (beat * (RIVER_TIE_CAP + 1) + np.minimum(tie, RIVER_TIE_CAP)) * len(CATEGORIES) + categories(player_rank)
    ) * 2 + paired
    return keys


def preflop_keys(player: IntArray) -> IntArray:
    ranks = np.sort(_ranks(player), axis=1) - 2
    suits = _suit_codes(player)
    keys: IntArray = (ranks[:, 1] * 13 + ranks[:, 0]) * 2 + (suits[:, 0] == suits[:, 1])
    return keys


@dataclass(frozen=True)
class UthTable:
    """The ``uth_table`` strategy: 4x per preflop class, 2x per flop class, 1x per
    river class (unknown river classes: the basic rule)."""

    preflop: BoolArray
    flop: CallTable
    river: BoolArray
    river_known: BoolArray
    rounds: tuple[int, int, int]
    seed: int

    def decide(self, deal: Deal) -> tuple[IntArray, BoolArray]:
        n = len(deal.player)
        multiplier = np.zeros(n, dtype=np.int64)
        pre = self.preflop[preflop_keys(deal.player)]
        multiplier[pre] = 4
        rest = np.nonzero(~pre)[0]
        flop = self.flop.calls(deal.player[rest], deal.board[rest, :3])
        multiplier[rest[flop]] = 2
        rest = rest[~flop]
        river = np.zeros(len(rest), dtype=bool)
        for start in range(0, len(rest), OUTS_CHUNK):
            index = rest[start : start + OUTS_CHUNK]
            river[start : start + len(index)] = self.river_call(
                deal.player[index], deal.board[index], deal.player_rank[index]
            )
        multiplier[rest[river]] = 1
        folded = np.zeros(n, dtype=bool)
        folded[rest[~river]] = True
        return multiplier, folded

    def river_call(self, player: IntArray, board: IntArray, player_rank: IntArray) -> BoolArray:
        keys = river_keys(player, board, player_rank)
        known = self.river_known[keys]
        call = self.river[keys]
        if not known.all():
            call[~known] = river_call(player[~known], board[~known], player_rank[~known])
        return call

    def to_json(self) -> str:
        return json.dumps(
            {
                "description": "UTH strategy table: see games.house.math.strategy.train_uth_table",
                "rounds": list(self.rounds),
                "seed": self.seed,
                "preflop_raise": _bits(self.preflop),
                "flop": json.loads(self.flop.to_json()),
                "river_call": _bits(self.river),
                "river_known": _bits(self.river_known),
            }
        )

    @staticmethod
    def from_json(text: str) -> UthTable:
        data = json.loads(text)
        rounds = data["rounds"]
        return UthTable(
            preflop=_unbits(data["preflop_raise"], PREFLOP_KEY_SIZE),
            flop=CallTable.from_json(json.dumps(data["flop"])),
            river=_unbits(data["river_call"], RIVER_KEY_SIZE),
            river_known=_unbits(data["river_known"], RIVER_KEY_SIZE),
            rounds=(int(rounds[0]), int(rounds[1]), int(rounds[2])),
            seed=int(data["seed"]),
        )


def train_uth_table(
    rounds: tuple[int, int, int],
    seed: int,
    *,
    batch: int = 200_000,
    progress: Callable[[str, int], None] | None = None,
) -> UthTable:
    """Derive the ``uth_table`` strategy from simulated rounds, street by street from
    the river back (each pass on fresh rounds from ``seed``, ``seed + 1``, ``seed + 2``):

    1. river: rounds the basic rules would check twice; a class calls 1x when the
       mean of (net of calling 1x) + 2 (folding loses ante and ante plus) is positive;
    2. flop: rounds the basic rules would check preflop; a class calls 2x when the
       mean of (net of 2x) - (value of the learned river decision) is positive;
    3. preflop: every round; a class calls 4x when the mean of (net of 4x) - (value
       of the learned flop and river decisions) is positive.

    Settlement is the game definition's own (``deals.settle_deals``)."""

    def report(stage: str) -> Callable[[int], None] | None:
        return None if progress is None else (lambda done: progress(stage, done))

    def river_value(
        deal: Deal, index: IntArray, table: UthTable | None, one: npt.NDArray[np.float64]
    ) -> npt.NDArray[np.float64]:
        value = np.full(len(index), -2.0)
        for start in range(0, len(index), OUTS_CHUNK):
            chunk = index[start : start + OUTS_CHUNK]
            assert table is not None
            call = table.river_call(deal.player[chunk], deal.board[chunk], deal.player_rank[chunk])
            value[start : start + len(chunk)] = np.where(call, one[chunk], -2.0)
        return value

    river = _ClassMeans(RIVER_KEY_SIZE)
    for deal, _, net in _training_batches("uth", rounds[0], seed, batch, report("river")):
        reach = np.nonzero(~preflop_raise(deal.player) & ~flop_raise(deal.player, deal.board[:, :3]))[0]
        gain = net(1)[reach] + 2.0
        for start in range(0, len(reach), OUTS_CHUNK):
            chunk = reach[start : start + OUTS_CHUNK]
            river.add(
                river_keys(deal.player[chunk], deal.board[chunk], deal.player_rank[chunk]),
                gain[start : start + len(chunk)],
            )
    river_known = river.count >= MIN_CLASS_ROUNDS
    empty_flop = CallTable(
        np.zeros(FLOP_KEY_SIZE, dtype=bool),
        np.zeros(FLOP_KEY_SIZE, dtype=bool),
        np.zeros(FLOP_COARSE_SIZE, dtype=bool),
        0,
        seed,
    )
    table = UthTable(
        np.zeros(PREFLOP_KEY_SIZE, dtype=bool),
        empty_flop,
        river.decide() & river_known,
        river_known,
        (rounds[0], 0, 0),
        seed,
    )

    flop = _FlopMeans()
    for deal, _, net in _training_batches("uth", rounds[1], seed + 1, batch, report("flop")):
        reach = np.nonzero(~preflop_raise(deal.player))[0]
        gain = net(2)[reach] - river_value(deal, reach, table, net(1))
        flop.add(deal.player[reach], deal.board[reach, :3], gain)
    table = UthTable(
        table.preflop, flop.table(rounds[1], seed + 1), table.river, table.river_known, (rounds[0], rounds[1], 0), seed
    )

    preflop = _ClassMeans(PREFLOP_KEY_SIZE)
    for deal, _, net in _training_batches("uth", rounds[2], seed + 2, batch, report("preflop")):
        everyone = np.arange(len(deal.player))
        two, one = net(2), net(1)
        flop_call = table.flop.calls(deal.player, deal.board[:, :3])
        checked = np.nonzero(~flop_call)[0]
        value = two.copy()
        value[checked] = river_value(deal, checked, table, one)
        preflop.add(preflop_keys(deal.player[everyone]), net(4) - value)
    return UthTable(preflop.decide(default=False), table.flop, table.river, table.river_known, rounds, seed)


@cache
def uth_strategy_table() -> UthTable:
    return UthTable.from_json(UTH_TABLE_PATH.read_text())


def uth_table(deal: Deal) -> tuple[IntArray, BoolArray]:
    return uth_strategy_table().decide(deal)


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
    call: BoolArray = (
        made
        | (flush_draw(player, five) == 2)
        | (straight_draw(five) == 2)
        | (hole.max(axis=1) >= 13)
        | (hole.min(axis=1) > _ranks(flop).max(axis=1))
    )
    return call


def ch_basic(deal: Deal) -> tuple[IntArray, BoolArray]:
    call = ch_call(deal.player, deal.board[:, :3])
    return np.where(call, 2, 0).astype(np.int64), ~call


def always_max(deal: Deal) -> tuple[IntArray, BoolArray]:
    n = len(deal.player)
    return np.full(n, 4, dtype=np.int64), np.zeros(n, dtype=bool)


def always_call(deal: Deal) -> tuple[IntArray, BoolArray]:
    n = len(deal.player)
    return np.full(n, 2, dtype=np.int64), np.zeros(n, dtype=bool)


BY_NAME: dict[str, Strategy] = {
    "uth_exact": uth_exact,
    "ch_exact": ch_exact,
    "uth_table": uth_table,
    "uth_basic": uth_basic,
    "always_max": always_max,
    "ch_table": ch_table,
    "ch_basic": ch_basic,
    "always_call": always_call,
}
# Which strategies fit which game is the game's data (``GameDefinition.strategies``).
STRATEGIES: dict[str, dict[str, Strategy]] = {
    g.code: {name: BY_NAME[name] for name in g.strategies} for g in games() if g.strategies
}
DEFAULT_STRATEGY = {g.code: g.strategy for g in games() if g.strategies}
