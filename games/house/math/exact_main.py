"""Exact main-game return under perfect strategy, by complete enumeration (NumPy).

``exact_main_rtp(game, paytable)`` counts every player hand, board and dealer hand
(C(52,2) x C(50,5) x C(45,2) = 2,781,381,002,400 deals for one player against the
dealer, shared hand mode) and takes the best decision at every point by backward
induction, in exact integer arithmetic:

- Ultimate Texas Hold'em and Xtreme Hold'em: river call 1x or fold per (hole cards,
  board) against all 990 dealer hands; flop call 2x or check, averaged over the
  1,081 turn/river pairs of the river's best; preflop call 4x, 3x or check,
  averaged over the 19,600 flops of the flop's best;
- Casino Hold'em: call 2x or fold per (hole cards, flop), averaged over turn,
  river and dealer hands.

Settlement is the game definition's own: each main wager's ``MainRule`` (win /
tie / lose, dealer qualified or not, fold) and its pay table on the player's final
hand, the dealer's qualifier rank, the decision points' multipliers. Nothing is
re-typed here.

How it is fast:

1. *River view per board.* The 2,598,960 boards fall into 134,459 classes under
   the 24 suit permutations. For one representative board of each class, the
   7-card ranks of all 1,081 hole pairs are computed once; for each pair the
   dealer hands below / equal / above it (and below the qualifier) among the 990
   disjoint dealer pairs come from two sorts (all pairs on the board; the 46 pairs
   sharing each card) and inclusion-exclusion. The result is each main wager's
   return summed over the dealer hands, per (board class, hole pair), and the
   river decision.
2. *Flop view.* For each of the 1,755 flop classes and each of its 1,176 turn and
   river pairs, the board's class and the suit permutation to its representative
   are looked up, and the river results of all hole pairs are gathered and summed
   over the turn and river: the flop decision of every hole pair with that flop.
3. *Preflop.* The flop values, weighted by the size of each flop class, are
   added up per starting-hand class (169) to choose the preflop decision.

Sums over a class of flops are exact because every quantity is invariant under
suit permutations (the value of a class of (hole, flop) pairs is the same for all
its members). Amounts are integers: returns are scaled by the least common
denominator of the pay tables (2 for a 3:2 pay).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from itertools import permutations
from math import comb
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from games.cards.batch import all_combinations, evaluate_batch
from games.cards.cards import RANK_CHARS, SUITS
from games.cards.evaluator import tables
from games.house.math.rtp import MainReturns
from games.house.rules.definitions import Action, GameDefinition, MainRule, WagerKind
from games.house.rules.outcomes import category_table
from games.house.rules.paytables import CATEGORIES, PayTable
from games.house.rules.registry import game

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]
BoolArray = npt.NDArray[np.bool_]

DEALER_HANDS = comb(45, 2)  # 990 dealer pairs for each (hole, board)
TURN_RIVERS = comb(47, 2)  # 1,081 turn/river pairs after the hole cards and the flop
ALL_DEALS = comb(52, 2) * comb(50, 5) * comb(45, 2)
RESULT_KEYS = ("win", "tie", "lose")
_SENTINEL = 8191  # above every rank (1..7462); fits 13 bits


class ExactMainError(ValueError):
    """The game's decision points are not a shape this analysis knows."""


# --- suit symmetry -----------------------------------------------------------------------------


@cache
def card_perms() -> npt.NDArray[np.int8]:
    """(24, 52): card index under each of the 24 suit permutations."""
    perms = np.array(list(permutations(range(4))), dtype=np.int64)
    cards = np.arange(52)
    return ((cards // 4)[None, :] * 4 + perms[:, cards % 4]).astype(np.int8)


@cache
def pair_index() -> I64:
    """(52, 52): index 0..1325 of the unordered pair {a, b} (lexicographic), -1 on the diagonal."""
    pairs = all_combinations(52, 2).astype(np.int64)
    table = np.full((52, 52), -1, dtype=np.int64)
    table[pairs[:, 0], pairs[:, 1]] = np.arange(len(pairs))
    table[pairs[:, 1], pairs[:, 0]] = np.arange(len(pairs))
    return table


@cache
def pair_perms() -> I64:
    """(24, 1326): the pair index of each pair under each suit permutation."""
    pairs = all_combinations(52, 2).astype(np.int64)
    cp = card_perms().astype(np.int64)
    return pair_index()[cp[:, pairs[:, 0]], cp[:, pairs[:, 1]]]


@cache
def _colex_table(k: int) -> I64:
    # colex index of a sorted k-set c_0 < ... < c_{k-1}: sum of C(c_i, i + 1)
    return np.array([[comb(c, i + 1) for i in range(k)] for c in range(52)], dtype=np.int64)


def colex(sorted_sets: I64) -> I64:
    """Colex index 0..C(52,k)-1 of each row (ascending card indices)."""
    k = sorted_sets.shape[1]
    t = _colex_table(k)
    return sum((t[sorted_sets[:, i], i] for i in range(k)), start=np.zeros(len(sorted_sets), dtype=np.int64))


@dataclass(frozen=True)
class SuitClasses:
    """The k-card sets of the deck up to suit permutations.

    ``class_of[colex]`` and ``perm_of[colex]``: the class of each set and a
    permutation taking it to its class's representative; ``reps`` (n, k) the
    representatives (ascending cards); ``orbit`` the number of sets per class."""

    class_of: I32
    perm_of: npt.NDArray[np.int8]
    reps: I64
    orbit: I64


@cache
def suit_classes(k: int) -> SuitClasses:
    sets = all_combinations(52, k).astype(np.int64)
    bits = np.left_shift(np.int64(1), np.arange(52, dtype=np.int64))
    cp = card_perms().astype(np.int64)
    best = np.full(len(sets), np.iinfo(np.int64).max, dtype=np.int64)
    best_perm = np.zeros(len(sets), dtype=np.int8)
    for p in range(24):
        mask = bits[cp[p][sets]].sum(axis=1)
        better = mask < best
        best[better] = mask[better]
        best_perm[better] = p
    keys, inverse, orbit = np.unique(best, return_inverse=True, return_counts=True)
    reps = np.array([[c for c in range(52) if int(key) >> c & 1] for key in keys], dtype=np.int64)
    index = colex(sets)
    class_of = np.empty(len(sets), dtype=np.int32)
    perm_of = np.empty(len(sets), dtype=np.int8)
    class_of[index] = inverse.astype(np.int32)
    perm_of[index] = best_perm
    return SuitClasses(class_of, perm_of, reps, orbit.astype(np.int64))


@cache
def hand_classes() -> tuple[I64, tuple[str, ...]]:
    """The 169 starting-hand classes: class index per pair index (1326) and names (AA, AKs, AKo, ...)."""
    names: list[str] = []
    for hi in range(12, -1, -1):
        for lo in range(hi, -1, -1):
            if hi == lo:
                names.append(RANK_CHARS[hi] * 2)
            else:
                names.append(f"{RANK_CHARS[hi]}{RANK_CHARS[lo]}s")
                names.append(f"{RANK_CHARS[hi]}{RANK_CHARS[lo]}o")
    lookup = {name: i for i, name in enumerate(names)}
    pairs = all_combinations(52, 2).astype(np.int64)
    out = np.array([lookup[hand_name(int(a), int(b))] for a, b in pairs], dtype=np.int64)
    return out, tuple(names)


def hand_name(a: int, b: int) -> str:
    hi, lo = max(a // 4, b // 4), min(a // 4, b // 4)
    if hi == lo:
        return RANK_CHARS[hi] * 2
    return f"{RANK_CHARS[hi]}{RANK_CHARS[lo]}{'s' if a % 4 == b % 4 else 'o'}"


def card_text(cards: Iterable[int]) -> str:
    return " ".join(RANK_CHARS[c // 4] + SUITS[c % 4] for c in cards)


# --- settlement as integer factors ----------------------------------------------------------------


@dataclass(frozen=True)
class MainGame:
    """What the analysis reads from a game definition: its main wagers' rules and
    pay tables, the decision wager and the decision points' multipliers."""

    definition: GameDefinition
    wagers: tuple[str, ...]  # main wagers, the decision wager last
    rules: tuple[MainRule, ...]
    tables: tuple[PayTable | None, ...]
    scale: int  # least common denominator of every return multiple
    threshold: int  # evaluator rank of the dealer's weakest qualifying hand
    preflop: tuple[tuple[str, int], ...]  # (option, multiplier); () when no preflop decision
    flop: tuple[tuple[str, int], ...]
    flop_folds: bool  # the flop's other option folds (Casino Hold'em) rather than checks
    river: tuple[tuple[str, int], ...]

    @property
    def base_wagers(self) -> int:
        return len(self.wagers) - 1

    def factors(self) -> I64:
        """(wagers, 6, 10): return multiple x scale per (result, dealer qualified) and player category.
        Results in the order win/tie/lose, each qualified then not."""
        out = np.zeros((len(self.wagers), 6, len(CATEGORIES)), dtype=np.int64)
        for w, (rule, table) in enumerate(zip(self.rules, self.tables, strict=True)):
            for k, (result, qualified) in enumerate((r, q) for r in RESULT_KEYS for q in (True, False)):
                for c, category in enumerate(CATEGORIES):
                    out[w, k, c] = _scaled(_multiple(rule.action(result, qualified), table, category), self.scale)
        return out

    def fold_returns(self) -> I64:
        """Return multiple x scale of each base wager on a fold."""
        pairs = zip(self.rules[:-1], self.tables[:-1], strict=True)
        return np.array([_scaled(_multiple(r.fold, t, "high_card"), self.scale) for r, t in pairs], dtype=np.int64)


def _multiple(action: Action, table: PayTable | None, category: str) -> Fraction:
    if action is Action.TABLE:
        if table is None:
            raise ExactMainError("a table action without a pay table")
        return table.pay_for(category).return_multiple
    return {Action.EVEN: Fraction(2), Action.PUSH: Fraction(1), Action.LOSE: Fraction(0)}[action]


def _scaled(value: Fraction, scale: int) -> int:
    scaled = value * scale
    if scaled.denominator != 1:
        raise ExactMainError(f"{value} is not a multiple of 1/{scale}")
    return scaled.numerator


def main_game(definition: GameDefinition, paytable: int = 1) -> MainGame:
    base = [w for w in definition.wagers if w.main_rule is not None and w.kind is not WagerKind.DECISION]
    decision = definition.wager(definition.decision_wager)
    wagers = (*base, decision)
    tables = tuple(definition.pay_table(w.name, paytable) if w.needs_pay_table else None for w in wagers)
    multiples = [
        t.pay_for(c).return_multiple for t in tables if t is not None for c in CATEGORIES
    ]  # every table pay; rule actions are whole multiples
    scale = math.lcm(*(m.denominator for m in multiples)) if multiples else 1
    points = {p.street: p for p in definition.decision_points}

    def bets(street: str) -> tuple[tuple[str, int], ...]:
        return tuple((o.name, o.multiplier) for o in points[street].options if o.multiplier > 0)

    if set(points) == {"preflop", "flop", "river"}:
        river_fold = [o for o in points["river"].options if o.multiplier == 0]
        if not (len(river_fold) == 1 and river_fold[0].folds and len(bets("river")) == 1):
            raise ExactMainError("the river must offer one call and fold")
        if any(o.folds for o in points["flop"].options) or any(o.folds for o in points["preflop"].options):
            raise ExactMainError("preflop and flop must offer bets and check")
        return MainGame(
            definition, tuple(w.name for w in wagers), tuple(w.main_rule for w in wagers if w.main_rule),
            tables, scale, definition.qualifier.threshold_rank(),
            bets("preflop"), bets("flop"), False, bets("river"),
        )  # fmt: skip
    if set(points) == {"flop"}:
        others = [o for o in points["flop"].options if o.multiplier == 0]
        if not (len(others) == 1 and others[0].folds):
            raise ExactMainError("a flop-only game must offer calls and fold")
        return MainGame(
            definition, tuple(w.name for w in wagers), tuple(w.main_rule for w in wagers if w.main_rule),
            tables, scale, definition.qualifier.threshold_rank(), (), bets("flop"), True, (),
        )  # fmt: skip
    raise ExactMainError(f"decision points {sorted(points)} are not supported")


# --- step 1: the river view, per board class ------------------------------------------------------


def _less_and_leq(values: I64, width_bits: int) -> tuple[I64, I64]:
    """Per row of ``values`` (rows, n; entries < 2**13): for each entry the number of
    entries of its row strictly below it and at most equal to it (itself included)."""
    rows, n = values.shape
    pos = np.arange(n, dtype=np.int64)
    keys = np.sort((values << width_bits) | pos, axis=1)
    order = keys & ((1 << width_bits) - 1)
    ordered = keys >> width_bits
    start = np.ones((rows, n), dtype=np.bool_)
    start[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    first = np.maximum.accumulate(np.where(start, pos, 0), axis=1)
    end = np.ones((rows, n), dtype=np.bool_)
    end[:, :-1] = start[:, 1:]
    last = np.minimum.accumulate(np.where(end, pos, n)[:, ::-1], axis=1)[:, ::-1]
    less = np.empty_like(first)
    leq = np.empty_like(first)
    np.put_along_axis(less, order, first, axis=1)
    np.put_along_axis(leq, order, last + 1, axis=1)
    return less, leq


@dataclass(frozen=True)
class DealerCounts:
    """Per (board, hole pair): dealer hands by result for the player and by qualification,
    in the order win/tie/lose x qualified/not (6, boards, pairs), and the player's rank."""

    counts: I64
    player_rank: I64


def dealer_counts(boards: I64, threshold: int) -> tuple[DealerCounts, I64]:
    """Dealer counts for every hole pair of the 47 cards left by each board (nb, 5);
    also returns the hole pairs' cards (nb, 1081, 2)."""
    nb = len(boards)
    t = tables()
    card_key = t.card_key.astype(np.int64)
    mask_rest = np.ones((nb, 52), dtype=np.bool_)
    mask_rest[np.arange(nb)[:, None], boards] = False
    rest = np.nonzero(mask_rest)[1].reshape(nb, 47)
    local = all_combinations(47, 2).astype(np.int64)
    li, lj = local[:, 0], local[:, 1]
    a, b = rest[:, li], rest[:, lj]
    board_key = card_key[boards].sum(axis=1)
    key = board_key[:, None] + card_key[a] + card_key[b]
    rank = t.nonflush[7][key >> 12].astype(np.int64)
    suit = t.flush_suit[key & 4095]
    flush_rows = np.nonzero(suit >= 0)
    if flush_rows[0].size:
        s = suit[flush_rows].astype(np.int64)
        bit = t.card_bit.astype(np.int64)
        cs = t.card_suit.astype(np.int64)
        board_rows = boards[flush_rows[0]]
        bmask = np.where(cs[board_rows] == s[:, None], bit[board_rows], 0).sum(axis=1)
        ca, cb = a[flush_rows], b[flush_rows]
        bmask |= np.where(cs[ca] == s, bit[ca], 0) | np.where(cs[cb] == s, bit[cb], 0)
        rank[flush_rows] = t.flush[bmask]
    # All pairs on the board, and per card the 46 pairs holding it.
    less_g, leq_g = _less_and_leq(rank, 11)
    matrix = np.full((nb, 47, 47), _SENTINEL, dtype=np.int64)
    matrix[:, li, lj] = rank
    matrix[:, lj, li] = rank
    less_r, leq_r = _less_and_leq(matrix.reshape(nb * 47, 47), 6)
    less_r = less_r.reshape(nb, 47, 47)
    leq_r = leq_r.reshape(nb, 47, 47)
    lt = less_g - less_r[:, li, lj] - less_r[:, lj, li]
    le = leq_g - leq_r[:, li, lj] - leq_r[:, lj, li] + 1
    eq = le - lt
    below_t = rank < threshold
    row_below = (matrix < threshold).sum(axis=2)
    u = below_t.sum(axis=1)[:, None] - row_below[:, li] - row_below[:, lj] + below_t
    q = rank >= threshold  # the player's rank reaches the qualifier
    win_u = np.where(q, u, lt)
    win_q = lt - win_u
    tie_q = np.where(q, eq, 0)
    tie_u = eq - tie_q
    lose_u = np.where(q, 0, u - le)
    lose_q = DEALER_HANDS - le - lose_u
    counts = np.stack([win_q, win_u, tie_q, tie_u, lose_q, lose_u])
    return DealerCounts(counts, rank), np.stack([a, b], axis=2)


# Packed river results per (board class, hole pair index): each wager's scaled return summed
# over the dealer hands, and the river call bit, in one int64.
@dataclass(frozen=True)
class Packing:
    shifts: tuple[int, ...]
    widths: tuple[int, ...]
    call_shift: int

    def unpack(self, packed: I64, field_index: int) -> I64:
        mask = np.int64((1 << self.widths[field_index]) - 1)
        shifted: I64 = (packed >> self.shifts[field_index]) & mask
        return shifted


def _packing(spec: MainGame) -> Packing:
    # One field per main wager, then the number of dealer hands that beat the player, then
    # the player's category (index in CATEGORIES).
    widths = (
        *(int(DEALER_HANDS * spec.factors()[w].max()).bit_length() for w in range(len(spec.wagers))),
        DEALER_HANDS.bit_length(),
        len(CATEGORIES).bit_length(),
    )
    shifts = tuple(int(sum(widths[:i])) for i in range(len(widths)))
    call_shift = sum(widths)
    if call_shift + 1 > 63:
        raise ExactMainError("the returns do not pack into 63 bits")
    return Packing(shifts, widths, call_shift)


@dataclass(frozen=True)
class RiverView:
    """Per (board class, hole pair index 0..1325) the packed river results (zero for a
    pair that touches the board): each main wager's scaled return summed over the
    dealer hands, the dealer hands that beat the player, the player's category and
    (UTH) the river call bit."""

    classes: SuitClasses
    packed: I64  # (board classes, 1326)
    packing: Packing


def river_view(
    spec: MainGame,
    batch: int = 96,
    progress: Callable[[str], None] | None = None,
    only: I64 | None = None,
) -> RiverView:
    """The river results of every board class (or only of the classes ``only``)."""
    classes = suit_classes(5)
    factors = spec.factors()
    packing = _packing(spec)
    folds = spec.fold_returns()
    cats = category_table()
    n = len(classes.reps)
    todo = np.arange(n) if only is None else np.unique(only)
    packed = np.zeros((n, 1326), dtype=np.int64)
    pidx = pair_index()
    for start in range(0, len(todo), batch):
        ids = todo[start : start + batch]
        boards = classes.reps[ids]
        dc, cards = dealer_counts(boards, spec.threshold)
        if start == 0:
            assert np.all(dc.counts.sum(axis=0) == DEALER_HANDS)
        cat = cats[dc.player_rank]
        value = np.zeros(dc.player_rank.shape, dtype=np.int64)
        returns = []
        for w in range(len(spec.wagers)):
            ret = sum((dc.counts[k] * factors[w, k][cat] for k in range(6)), start=np.zeros_like(cat))
            returns.append(ret)
            value |= ret << packing.shifts[w]
        lose = dc.counts[4] + dc.counts[5]
        value |= lose << packing.shifts[-2]
        value |= cat << packing.shifts[-1]
        if spec.river:
            multiplier = spec.river[0][1]
            stake = DEALER_HANDS * spec.scale
            call_net = sum(returns[:-1], start=np.zeros_like(cat)) + multiplier * (returns[-1] - stake)
            fold_net = int(folds.sum()) * DEALER_HANDS
            value |= (call_net > fold_net).astype(np.int64) << packing.call_shift
        packed[ids[:, None], pidx[cards[..., 0], cards[..., 1]]] = value
        if progress is not None and (start // batch) % 200 == 0:
            progress(f"river: {start + len(boards):,} / {len(todo):,} board classes")
    return RiverView(classes, packed, packing)


# --- step 2: the flop view ------------------------------------------------------------------------


@dataclass
class FlopView:
    """Per (flop class, hole pair index), sums over the 1,081 turn/river pairs (scaled):
    ``returns`` (wagers, flops, 1326) of each wager, the dealer hands that beat the
    player (``lose``), and on the river-decision path (UTH) ``river_returns`` (wagers,
    flops, 1326) and ``river_calls`` (flops, 1326)."""

    classes: SuitClasses
    returns: I64
    lose: I64
    river_returns: I64
    river_calls: I64
    valid: BoolArray  # (flops, 1326): computed, and the pair does not touch the flop


def flop_boards(flop: I64) -> tuple[I64, I64]:
    """The 1,176 turn/river pairs left by a flop (also its hole pairs) and the boards they make."""
    rest = np.setdiff1d(np.arange(52), flop)
    tr = rest[all_combinations(49, 2).astype(np.int64)]
    boards = np.sort(np.concatenate([np.broadcast_to(flop, (len(tr), 3)), tr], axis=1), axis=1)
    return tr, boards


def flop_view(
    spec: MainGame,
    river: RiverView,
    progress: Callable[[str], None] | None = None,
    only: Iterable[int] | None = None,
) -> FlopView:
    """Flop sums of every flop class (or only of the classes ``only``) from the river view."""
    flops = suit_classes(3)
    nf = len(flops.reps)
    nw = len(spec.wagers)
    returns = np.zeros((nw, nf, 1326), dtype=np.int64)
    lose = np.zeros((nf, 1326), dtype=np.int64)
    river_returns = np.zeros((nw, nf, 1326), dtype=np.int64)
    river_calls = np.zeros((nf, 1326), dtype=np.int64)
    valid = np.zeros((nf, 1326), dtype=np.bool_)
    pidx = pair_index()
    pperm = pair_perms()
    board_classes = river.classes
    flat = river.packed.reshape(-1)
    p = river.packing
    for f in range(nf) if only is None else only:
        tr, boards = flop_boards(flops.reps[f])
        where = colex(boards)
        cls = board_classes.class_of[where].astype(np.int64)
        perm = board_classes.perm_of[where].astype(np.int64)
        cols = pidx[tr[:, 0], tr[:, 1]]
        valid[f, cols] = True
        gathered = flat[cls[:, None] * 1326 + pperm[perm][:, cols]]  # (turn/river, hole pair)
        call = (gathered >> p.call_shift) & 1 if spec.river else None
        for w in range(nw):
            values = p.unpack(gathered, w)
            returns[w, f, cols] = values.sum(axis=0)
            if call is not None:
                river_returns[w, f, cols] = (values * call).sum(axis=0)
        lose[f, cols] = p.unpack(gathered, nw).sum(axis=0)
        if call is not None:
            river_calls[f, cols] = call.sum(axis=0)
        if progress is not None and f % 100 == 0:
            progress(f"flop: {f + 1:,} / {nf:,} flop classes")
    return FlopView(flops, returns, lose, river_returns, river_calls, valid)


# --- step 3: decisions, totals and the result ----------------------------------------------------


@dataclass
class ExactMainResult(MainReturns):
    """The exact main-game return under perfect strategy.

    ``rtp_per_ante`` = 1 + expected net / ante; ``rtp_per_total`` = expected return /
    expected total wagered; per wager its expected stake and return in antes
    (``per_wager``), decision frequencies (``decisions``: share of deals), and the
    strategy tables (``preflop``: per starting hand its decision and the net value of
    each option in antes; ``flop_calls`` and ``river_calls``: bit tables by class)."""

    game: str
    paytable: str
    rtp_per_ante: Fraction
    rtp_per_total: Fraction
    per_wager: dict[str, dict[str, Fraction]]
    decisions: dict[str, Fraction]
    hands_enumerated: int  # (player hand, board, dealer hand) deals; reduced runs: (hole, flop, turn+river, dealer)
    complete: bool
    seconds: float
    preflop: list[dict[str, Any]]
    flop_reps: I64
    flop_orbit: I64
    flop_decisions: npt.NDArray[np.int8]  # (flop classes, 1326): option index taken, -1 no such hand
    flop_options: tuple[str, ...]
    river_reps: I64 = field(default_factory=lambda: np.zeros((0, 5), dtype=np.int64))
    river_calls: npt.NDArray[np.uint8] = field(default_factory=lambda: np.zeros((0, 0), dtype=np.uint8))
    rules: dict[str, Any] = field(default_factory=dict)  # compact rules (see ``compact_rules``)
    timeouts: dict[str, Any] = field(default_factory=dict)  # see ``timeout_costs``
    paytable_number: int = 1
    timings: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        def frac(x: Fraction) -> str:
            return f"{x.numerator}/{x.denominator}"

        return {
            "game": self.game,
            "paytable": self.paytable,
            "rtp_per_ante": float(self.rtp_per_ante),
            "rtp_per_ante_exact": frac(self.rtp_per_ante),
            "rtp_per_total": float(self.rtp_per_total),
            "rtp_per_total_exact": frac(self.rtp_per_total),
            "house_edge": float(self.house_edge),
            "element_of_risk": float(self.element_of_risk),
            "per_wager_in_antes": {w: {k: float(v) for k, v in d.items()} for w, d in self.per_wager.items()},
            "decisions": {k: float(v) for k, v in self.decisions.items()},
            "hands_enumerated": self.hands_enumerated,
            "complete": self.complete,
            "timeouts": _timeouts_json(self.timeouts),
            "seconds": round(self.seconds, 1),
            "timings": {k: round(v, 1) for k, v in self.timings.items()},
        }


def _class_sums(values: I64, weights: I64, cls: I64, valid: BoolArray, n: int) -> I64:
    """Sum of ``values`` (flops, 1326) weighted per flop, per starting-hand class (exact int64)."""
    weighted = np.where(valid, values * weights[:, None], 0).sum(axis=0)
    out = np.zeros(n, dtype=np.int64)
    np.add.at(out, cls, weighted)
    return out


def exact_main_rtp(
    game_code: str,
    paytable: int = 1,
    *,
    progress: Callable[[str], None] | None = None,
    flop_classes: Sequence[int] | None = None,
) -> ExactMainResult:
    """The exact main-game return of ``game_code`` with its main pay table ``paytable``
    under perfect strategy (see the module docstring).

    ``flop_classes`` (indices into ``suit_classes(3).reps``) restricts the analysis
    to deals whose flop is in those classes: a reduced but still exact analysis
    (every hole pair, turn, river and dealer hand with those flops; the preflop
    decision then only sees those flops), for tests and quick looks."""
    started = time.perf_counter()
    definition = game(game_code)
    spec = main_game(definition, paytable)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    suit_classes(5)
    suit_classes(3)
    timings["classes"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    only = None
    if flop_classes is not None:
        boards = suit_classes(5)
        only = np.unique(
            np.concatenate([boards.class_of[colex(flop_boards(suit_classes(3).reps[f])[1])] for f in flop_classes])
        ).astype(np.int64)
    river = river_view(spec, progress=progress, only=only)
    timings["river"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    flop = flop_view(spec, river, progress=progress, only=flop_classes)
    timings["flop"] = time.perf_counter() - t0
    result = _decide(spec, river, flop, complete=flop_classes is None)
    result.paytable_number = paytable
    result.seconds = time.perf_counter() - started
    result.timings = timings
    return result


def flop_decision(spec: MainGame, flop: FlopView) -> tuple[tuple[str, ...], I64, I64]:
    """The flop's options, the net of each per (flop class, hole pair) summed over the
    turn, river and dealer hands (scaled; checking takes the river's best), and the
    option taken (the passive one, check or fold, on an exact tie)."""
    unit = DEALER_HANDS * spec.scale
    flop_unit = TURN_RIVERS * unit
    base = spec.base_wagers
    folds = spec.fold_returns()
    sums_base = flop.returns[:base].sum(axis=0)
    call_ret = flop.returns[-1]
    # Flop options: net of each bet, and of checking (UTH: river path) or folding (CH).
    flop_nets = [sums_base + m * call_ret - (base + m) * flop_unit for _, m in spec.flop]
    if spec.flop_folds:
        other = np.full(call_ret.shape, int(folds.sum()) * TURN_RIVERS * DEALER_HANDS - base * flop_unit)
        other_name = "fold"
    else:
        rr = flop.river_returns
        calls = flop.river_calls
        m1 = spec.river[0][1]
        river_ret = rr[:base].sum(axis=0) + m1 * rr[-1]
        fold_count = TURN_RIVERS - calls
        other = river_ret + int(folds.sum()) * DEALER_HANDS * fold_count - base * flop_unit - m1 * calls * unit
        other_name = "check"
    options = (*[name for name, _ in spec.flop], other_name)
    stacked = np.stack([*flop_nets, other])  # (options, flops, 1326)
    choice = np.argmax(stacked, axis=0)  # ties: the first (largest bet); equal value either way
    # Prefer the passive option on an exact tie (the timeout default).
    tie_other = stacked[-1] >= stacked.max(axis=0)
    choice = np.where(tie_other, len(options) - 1, choice)
    return options, stacked, choice


def _decide(spec: MainGame, river: RiverView, flop: FlopView, complete: bool = True) -> ExactMainResult:
    nw = len(spec.wagers)
    unit = DEALER_HANDS * spec.scale  # one unit staked on one (hole, board), scaled
    flop_unit = TURN_RIVERS * unit  # one unit staked on one (hole, flop)
    base = spec.base_wagers
    folds = spec.fold_returns()
    weights = flop.classes.orbit
    hclass, names = hand_classes()
    cls = hclass
    valid = flop.valid
    options, stacked, choice = flop_decision(spec, flop)
    call_ret = flop.returns[-1]
    best = np.take_along_axis(stacked, choice[None], axis=0)[0]
    flop_decisions = np.where(valid, choice, -1).astype(np.int8)

    # Per-wager returns and stakes on the flop's chosen path, per (flop class, hole pair), scaled.
    path_returns = np.zeros((nw, *call_ret.shape), dtype=np.int64)
    path_stakes = np.zeros((nw, *call_ret.shape), dtype=np.int64)
    for w in range(base):
        path_stakes[w] = flop_unit
    for i, (_, m) in enumerate(spec.flop):
        taken = choice == i
        for w in range(base):
            path_returns[w] += np.where(taken, flop.returns[w], 0)
        path_returns[-1] += np.where(taken, m * call_ret, 0)
        path_stakes[-1] += np.where(taken, m * flop_unit, 0)
    taken = choice == len(options) - 1
    if spec.flop_folds:
        for w in range(base):
            path_returns[w] += np.where(taken, int(folds[w]) * TURN_RIVERS * DEALER_HANDS, 0)
    else:
        m1 = spec.river[0][1]
        for w in range(base):
            ret = flop.river_returns[w] + int(folds[w]) * DEALER_HANDS * (TURN_RIVERS - flop.river_calls)
            path_returns[w] += np.where(taken, ret, 0)
        path_returns[-1] += np.where(taken, m1 * flop.river_returns[-1], 0)
        path_stakes[-1] += np.where(taken, m1 * flop.river_calls * unit, 0)

    n_cls = len(names)
    class_size = np.bincount(cls, minlength=n_cls)
    # Deals per starting-hand class member: 19,600 flops x 1,081 turn/rivers x 990 dealer hands.
    per_hand_flops = comb(50, 3)
    if complete:
        # Every (hole, flop) once: C(52,2) x C(50,3); with 1,081 turn/rivers and 990 dealer
        # hands that is 10 x C(52,2) x C(50,5) x C(45,2) (each board split 10 ways into flop + 2).
        total_weight = int(np.where(valid, weights[:, None], 0).sum())
        assert total_weight == comb(52, 2) * per_hand_flops, total_weight
        assert total_weight * TURN_RIVERS * DEALER_HANDS == 10 * ALL_DEALS
        assert int(weights.sum()) == comb(52, 3)
        assert int(river.classes.orbit.sum()) == comb(52, 5)

    decision_counts: dict[str, Fraction] = {}
    preflop: list[dict[str, Any]] = []
    totals_ret = np.zeros(nw, dtype=object)
    totals_stake = np.zeros(nw, dtype=object)
    flop_mass = np.zeros(n_cls, dtype=np.int64)  # weighted (hole, flop) count per class
    flop_mass += _class_sums(np.ones_like(best), weights, cls, valid, n_cls)
    check_value = _class_sums(best, weights, cls, valid, n_cls)
    path_r = [_class_sums(path_returns[w], weights, cls, valid, n_cls) for w in range(nw)]
    path_s = [_class_sums(path_stakes[w], weights, cls, valid, n_cls) for w in range(nw)]
    flop_choice_mass = [_class_sums((choice == i).astype(np.int64), weights, cls, valid, n_cls)
                        for i in range(len(options))]  # fmt: skip
    river_call_mass = (
        _class_sums(np.where(taken, flop.river_calls, 0), weights, cls, valid, n_cls) if not spec.flop_folds else None
    )
    all_ret = [_class_sums(flop.returns[w], weights, cls, valid, n_cls) for w in range(nw)]
    for k in range(n_cls):
        situations = int(flop_mass[k])
        if not situations:  # a reduced analysis without this starting hand
            continue
        option_values: dict[str, Fraction] = {}
        if spec.preflop:
            for name, m in spec.preflop:
                net = sum(int(all_ret[w][k]) for w in range(base)) + m * int(all_ret[-1][k])
                net -= (base + m) * situations * flop_unit
                option_values[name] = Fraction(net, situations * flop_unit)
        option_values["check" if spec.preflop else "play"] = Fraction(int(check_value[k]), situations * flop_unit)
        decision = max(option_values, key=lambda o: (option_values[o], o == "check"))
        bet = dict(spec.preflop).get(decision)
        for w in range(nw):
            if bet is not None:
                r = int(all_ret[w][k]) * (bet if w == nw - 1 else 1)
                s = situations * flop_unit * (bet if w == nw - 1 else 1)
            else:
                r, s = int(path_r[w][k]), int(path_s[w][k])
            totals_ret[w] += r
            totals_stake[w] += s
        share = Fraction(situations, 1)
        if bet is not None:
            decision_counts[decision] = decision_counts.get(decision, Fraction(0)) + share
        else:
            for i, name in enumerate(options):
                decision_counts[f"flop_{name}"] = decision_counts.get(f"flop_{name}", Fraction(0)) + int(
                    flop_choice_mass[i][k]
                )
            if river_call_mass is not None:
                rc = int(river_call_mass[k])
                checked = int(flop_choice_mass[-1][k]) * TURN_RIVERS
                decision_counts["river_call"] = decision_counts.get("river_call", Fraction(0)) + Fraction(
                    rc, TURN_RIVERS
                )
                decision_counts["river_fold"] = decision_counts.get("river_fold", Fraction(0)) + Fraction(
                    checked - rc, TURN_RIVERS
                )
        preflop.append(
            {
                "hand": names[k],
                "combos": int(class_size[k]),
                "decision": decision,
                "net_in_antes": {o: float(v) for o, v in option_values.items()},
                "net_exact": dict(option_values),
            }
        )
    total_situations = int(flop_mass.sum())
    decisions = {k: v / total_situations for k, v in decision_counts.items()}
    per_ante_unit = total_situations * flop_unit  # the ante's stake summed over every deal
    per_wager = {
        name: {
            "staked": Fraction(int(totals_stake[w]), per_ante_unit),
            "returned": Fraction(int(totals_ret[w]), per_ante_unit),
        }
        for w, name in enumerate(spec.wagers)
    }
    returned = sum(int(x) for x in totals_ret)
    staked = sum(int(x) for x in totals_stake)
    rtp_per_ante = 1 + Fraction(returned - staked, per_ante_unit)
    rtp_per_total = Fraction(returned, staked)
    river_bits = _river_bits(river) if spec.river else np.zeros((0, 0), dtype=np.uint8)
    rules = compact_rules(spec, river, flop, choice, preflop)
    timeouts = timeout_costs(spec, flop, stacked, choice, preflop, flop_mass)
    return ExactMainResult(
        game=spec.definition.code,
        paytable=str(spec.tables[0].name if spec.tables[0] else next(t.name for t in spec.tables if t)),
        rtp_per_ante=rtp_per_ante,
        rtp_per_total=rtp_per_total,
        per_wager=per_wager,
        decisions=decisions,
        hands_enumerated=ALL_DEALS if complete else total_situations * TURN_RIVERS * DEALER_HANDS,
        complete=complete,
        seconds=0.0,
        preflop=preflop,
        flop_reps=flop.classes.reps,
        flop_orbit=flop.classes.orbit,
        flop_decisions=flop_decisions,
        flop_options=options,
        river_reps=river.classes.reps if spec.river else np.zeros((0, 5), dtype=np.int64),
        river_calls=river_bits,
        rules=rules,
        timeouts=timeouts,
    )


def timeout_costs(
    spec: MainGame, flop: FlopView, stacked: I64, choice: I64, preflop: list[dict[str, Any]], flop_mass: I64
) -> dict[str, Any]:
    """What the timeout defaults (the passive option: check, check, fold; Casino
    Hold'em fold) cost the player, exactly, in antes.

    ``always``: the return when every decision times out. ``points``: per decision
    point, the player otherwise playing the optimum, the expected loss of taking the
    timeout default instead of the best option there, per situation reaching that
    point under the optimal strategy (``per_situation``) and per round dealt
    (``per_round``: the same loss times the share of rounds reaching the point), and
    that share (``reached``)."""
    unit = DEALER_HANDS * spec.scale
    flop_unit = TURN_RIVERS * unit
    base = spec.base_wagers
    fold_sum = int(spec.fold_returns().sum())
    valid = flop.valid
    weights = flop.classes.orbit[:, None]
    total = int(flop_mass.sum())  # (hole, flop) situations, each a round's share
    hclass, names = hand_classes()
    defaults = {p.street: p.timeout_default for p in spec.definition.decision_points}
    passive = {"preflop": "check", "flop": "fold" if spec.flop_folds else "check", "river": "fold"}
    if any(passive[street] != option for street, option in defaults.items()):
        raise ExactMainError(f"timeout defaults {defaults} are not the passive options {passive}")
    points: list[dict[str, Any]] = []
    reach = valid.copy()
    if spec.preflop:
        by_name = {row["hand"]: row for row in preflop}
        gap_sum = Fraction(0)
        for k, name in enumerate(names):
            row = by_name.get(name)
            if row is None:
                continue
            values = row["net_exact"]
            gap_sum += int(flop_mass[k]) * (max(values.values()) - values["check"])
        points.append(
            {"street": "preflop", "timeout": "check", "reached": Fraction(1),
             "per_situation": gap_sum / total, "per_round": gap_sum / total}
        )  # fmt: skip
        checked = np.array([by_name.get(names[k], {}).get("decision") == "check" for k in hclass])
        reach &= checked[None, :]
    best = stacked.max(axis=0)
    other = stacked[-1]
    mass = int(np.where(reach, weights, 0).sum())
    gap = int(np.where(reach, (best - other) * weights, 0).sum())
    points.append(
        {"street": "flop", "timeout": "check" if not spec.flop_folds else "fold",
         "reached": Fraction(mass, total),
         "per_situation": Fraction(gap, mass * flop_unit) if mass else Fraction(0),
         "per_round": Fraction(gap, total * flop_unit)}
    )  # fmt: skip
    if spec.river:
        reach &= choice == len(spec.flop)
        fold_all = fold_sum * TURN_RIVERS * DEALER_HANDS - base * flop_unit
        mass = int(np.where(reach, weights, 0).sum())
        gap = int(np.where(reach, (other - fold_all) * weights, 0).sum())
        points.append(
            {"street": "river", "timeout": "fold", "reached": Fraction(mass, total),
             "per_situation": Fraction(gap, mass * flop_unit) if mass else Fraction(0),
             "per_round": Fraction(gap, total * flop_unit)}
        )  # fmt: skip
    folded = Fraction(fold_sum, spec.scale)
    always = {"rtp_per_ante": 1 + folded - base, "rtp_per_total": folded / base}
    return {"always": always, "points": points}


def _timeouts_json(timeouts: dict[str, Any]) -> dict[str, Any]:
    def conv(x: Any) -> Any:
        if isinstance(x, Fraction):
            return float(x)
        if isinstance(x, dict):
            return {k: conv(v) for k, v in x.items()}
        if isinstance(x, list):
            return [conv(v) for v in x]
        return x

    return {k: conv(v) for k, v in timeouts.items()}


def _river_bits(river: RiverView, chunk: int = 8192) -> npt.NDArray[np.uint8]:
    """The river call bits, (board classes, 166) packed, a chunk at a time (the packed
    river view is 1.4 GB; whole-array temporaries would double it)."""
    n = len(river.packed)
    out = np.zeros((n, (1326 + 7) // 8), dtype=np.uint8)
    for start in range(0, n, chunk):
        part = river.packed[start : start + chunk]
        out[start : start + chunk] = np.packbits(((part >> river.packing.call_shift) & 1).astype(np.uint8), axis=1)
    return out


# --- compact rules --------------------------------------------------------------------------------


def threshold_rule(values: I64, bet: BoolArray, weights: I64) -> tuple[int | None, int, int]:
    """The cut X for "bet when ``values`` <= X" agreeing with ``bet`` on the most
    weight: (X or None for never, weight agreeing, total weight)."""
    order = np.argsort(values, kind="stable")
    v, b, w = values[order], bet[order], weights[order]
    total = int(w.sum())
    cum_bet = np.cumsum(np.where(b, w, 0))
    cum_other = np.cumsum(np.where(b, 0, w))
    other_total = int(cum_other[-1]) if len(v) else 0
    if not len(v):
        return None, 0, 0
    last = np.ones(len(v), dtype=np.bool_)
    last[:-1] = v[1:] != v[:-1]  # cut only between distinct values
    agree = np.where(last, cum_bet + (other_total - cum_other), -1)
    i = int(np.argmax(agree))
    if other_total >= agree[i]:
        return None, other_total, total
    return int(v[i]), int(agree[i]), total


def river_histograms(spec: MainGame, river: RiverView, flop: FlopView, reach: BoolArray) -> tuple[I64, I64]:
    """How many river situations reached in play (``reach``: per (flop class, hole pair)
    the hand checked to the river) call and fold, per (player category, dealer hands
    that beat the player): two (10, 991) arrays, weighted by deals."""
    p = river.packing
    nw = len(spec.wagers)
    pidx = pair_index()
    pperm = pair_perms()
    flat = river.packed.reshape(-1)
    size = len(CATEGORIES) * (DEALER_HANDS + 1)
    out = np.zeros((2, size), dtype=np.int64)
    for f in np.flatnonzero(reach.any(axis=1)):
        tr, boards = flop_boards(flop.classes.reps[f])
        where = colex(boards)
        cls = river.classes.class_of[where].astype(np.int64)
        perm = river.classes.perm_of[where].astype(np.int64)
        cols = pidx[tr[:, 0], tr[:, 1]]
        cols = cols[reach[f, cols]]
        gathered = flat[cls[:, None] * 1326 + pperm[perm][:, cols]]
        present = gathered != 0  # a hole pair touching the turn or river holds no result
        key = p.unpack(gathered, nw + 1) * (DEALER_HANDS + 1) + p.unpack(gathered, nw)
        call = ((gathered >> p.call_shift) & 1).astype(np.bool_)
        weight = int(flop.classes.orbit[f])
        out[0] += weight * np.bincount(key[present & call], minlength=size)
        out[1] += weight * np.bincount(key[present & ~call], minlength=size)
    shape = (len(CATEGORIES), DEALER_HANDS + 1)
    return out[0].reshape(shape), out[1].reshape(shape)


def compact_rules(
    spec: MainGame, river: RiverView, flop: FlopView, choice: I64, preflop: list[dict[str, Any]]
) -> dict[str, Any]:
    """Short rules next to the full tables: preflop the hands per decision; on the
    flop and the river, per made hand (category of the player's best five so far),
    bet when the dealer beats the player in at most a share of the remaining deals
    (flop: over turn, river and dealer hands; river: over the 990 dealer hands),
    with how often each rule agrees with the optimum, weighted by the deals that
    reach that decision under the optimal strategy (UTH: the flop after a preflop
    check, the river after two checks)."""
    out: dict[str, Any] = {}
    hclass, _ = hand_classes()
    reach = flop.valid.copy()
    if spec.preflop:
        out["preflop"] = {
            decision: [row["hand"] for row in preflop if row["decision"] == decision]
            for decision in (*[n for n, _ in spec.preflop], "check")
        }
        checked = {row["hand"] for row in preflop if row["decision"] == "check"}
        names = hand_classes()[1]
        reach &= np.array([names[k] in checked for k in hclass])[None, :]
    # Flop: category of hole cards + flop, expected dealer-wins share.
    f_idx, p_idx = np.nonzero(reach)
    pairs = all_combinations(52, 2).astype(np.int64)
    five = np.concatenate([pairs[p_idx], flop.classes.reps[f_idx]], axis=1)
    cats = category_table()[np.asarray(evaluate_batch(five), dtype=np.int64)]
    lose = flop.lose[f_idx, p_idx]
    bet = choice[f_idx, p_idx] == 0
    weights = flop.classes.orbit[f_idx]
    bet_name = spec.flop[0][0]
    deals = TURN_RIVERS * DEALER_HANDS
    flop_rules = []
    for c, category in enumerate(CATEGORIES):
        sel = cats == c
        if not sel.any():
            continue
        cut, agree, total = threshold_rule(lose[sel], bet[sel], weights[sel])
        flop_rules.append(
            {
                "made_hand": category,
                "decision": bet_name,
                "max_dealer_wins_share": None if cut is None else round(cut / deals, 6),
                "agreement": round(agree / total, 6),
                "share": round(int(weights[sel].sum()) / int(weights.sum()), 6),
            }
        )
    out["flop"] = flop_rules
    if spec.river:
        calls_by, folds_by = river_histograms(spec, river, flop, reach & (choice == len(spec.flop)))
        river_rules = []
        counts = np.arange(DEALER_HANDS + 1, dtype=np.int64)
        reached = int(calls_by.sum() + folds_by.sum())
        for c, category in enumerate(CATEGORIES):
            calls, folds = calls_by[c], folds_by[c]
            if not (calls.sum() + folds.sum()):
                continue
            values = np.concatenate([counts, counts])
            bet_mask = np.concatenate([np.ones_like(counts, dtype=np.bool_), np.zeros_like(counts, dtype=np.bool_)])
            cut, agree, total = threshold_rule(values, bet_mask, np.concatenate([calls, folds]))
            river_rules.append(
                {
                    "made_hand": category,
                    "decision": spec.river[0][0],
                    "max_dealer_wins_of_990": cut,
                    "agreement": round(agree / total, 6),
                    "share": round(total / reached, 6),
                }
            )
        out["river"] = river_rules
    return out


STRATEGY_FORMAT = {
    "main_rtp.json": "the result as a casino.main_rtp/1 document (the certification pack's input, see "
    "docs/game-math.md): the exact figures, the strategy tables (preflop in full, the compact flop and "
    "river rules, the timeout defaults' costs, these files); 'summary' holds the command's JSON and "
    "'rules' the compact rules",
    "preflop.csv": "hand,combos,decision,net_<option>...: one row per starting hand (169), nets in antes",
    "flop.csv.gz": "flop,weight,hole,decision: every (flop class, hole cards) pair; flop = the class's "
    "representative cards, weight = flops in the class; to look up an actual flop and hole cards, "
    "apply the suit permutation that maps the flop to its representative (suits renamed so the "
    "representative's card set is the smallest by card index bit mask) to the hole cards too",
    "flop.npz": "reps (flop classes, 3) card indices, orbit (flop classes,), decision (flop classes, 1326) "
    "int8 = index into options (-1: the pair touches the flop), options, pairs (1326, 2) card indices",
    "river.npz": "(UTH, Xtreme) reps (board classes, 5), orbit, call (board classes, 166) packbits of the "
    "call bit per pair index (1326, as pairs), pairs (1326, 2)",
}
SHIPPED_TABLES = "games/house/math/data/{name}_exact.npz"
METHOD = (
    "exact enumeration of every player hand, board and dealer hand (2,781,381,002,400 deals), "
    "perfect strategy by backward induction, exact integer arithmetic (games.house.math.exact_main)"
)


def _table(name: str, title: str, columns: list[str], rows: list[list[Any]]) -> dict[str, Any]:
    return {"name": name, "title": title, "columns": columns, "rows": [[str(c) for c in row] for row in rows]}


def _compact_rule_table(street: str, title: str, limit: str, key: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
    """A street's compact rule (``compact_rules``) as a table: per made hand its
    decision, the limit it holds to (column ``limit``, ``key`` in the rule;
    ``never`` without one), the agreement and the share of decisions."""
    return _table(
        f"{street} (compact rule)",
        title,
        ["made hand", "decision", limit, "agreement", "share of decisions"],
        [
            [r["made_hand"], r["decision"], "never" if r[key] is None else r[key], r["agreement"], r["share"]]
            for r in rules
        ],
    )


def strategy_tables(result: ExactMainResult) -> list[dict[str, Any]]:
    """The optimal strategy as printable tables (the ``strategy`` of a casino.main_rtp/1 result)."""
    options = list(result.preflop[0]["net_in_antes"]) if result.preflop else []
    tables = [
        _table(
            "preflop" if "check" in options else "starting hands",
            "per starting hand: the optimal decision and the net of each option in antes (the flop and river "
            "played optimally); ties go to the passive option"
            if "check" in options
            else "per starting hand: its net in antes under the optimal flop decision",
            ["hand", "combos", "decision", *(f"net {o}" for o in options)],
            [
                [r["hand"], r["combos"], r["decision"], *(f"{r['net_in_antes'][o]:.6f}" for o in options)]
                for r in result.preflop
            ],
        )
    ]
    rules = result.rules
    if rules.get("flop"):
        tables.append(
            _compact_rule_table(
                "flop",
                "per made hand (hole cards and flop): bet when the dealer beats the player in at most this "
                "share of the turn, river and dealer hands; agreement with the exact table, weighted by the "
                "flop decisions reached under the optimal strategy (the exact decisions: flop.csv.gz, the "
                "shipped tables)",
                "max dealer wins share",
                "max_dealer_wins_share",
                rules["flop"],
            )
        )
    if rules.get("river"):
        tables.append(
            _compact_rule_table(
                "river",
                "per made hand: call when at most this many of the 990 dealer hands beat the player; "
                "agreement with the exact decision, weighted by the river decisions reached (the exact "
                "decisions: river.npz, the shipped tables)",
                "max dealer wins of 990",
                "max_dealer_wins_of_990",
                rules["river"],
            )
        )
    if result.timeouts:
        always = result.timeouts["always"]
        rows = [
            [
                p["street"],
                p["timeout"],
                f"{float(p['reached']):.6f}",
                f"{float(p['per_situation']):.6f}",
                f"{float(p['per_round']):.6f}",
            ]
            for p in result.timeouts["points"]
        ]
        rows.append(
            [
                "every decision",
                "timeout defaults",
                "1",
                "",
                f"{float(result.rtp_per_ante - always['rtp_per_ante']):.6f}",
            ]
        )
        tables.append(
            _table(
                "timeout defaults",
                "the expected cost, in antes, of the timeout default instead of the optimal decision at one "
                "decision point (the rest played optimally): per decision reaching that point under the "
                "optimal strategy and per round dealt; with every decision timed out the RTP per ante is "
                f"{float(always['rtp_per_ante']):.2%}",
                [
                    "decision point",
                    "timeout default",
                    "share of rounds reaching it",
                    "cost per decision",
                    "cost per round",
                ],
                rows,
            )
        )
    code = "ch" if result.game == "casino_holdem" else "uth"
    files = [[name, text] for name, text in STRATEGY_FORMAT.items() if name != "river.npz" or len(result.river_reps)]
    files.append(
        [SHIPPED_TABLES.format(name=code), "the compact exact tables the uth_exact / ch_exact strategies read"]
    )
    tables.append(
        _table("full tables", "the exact decision of every situation, in these files", ["file", "contents"], files)
    )
    return tables


def main_rtp_document(result: ExactMainResult) -> dict[str, Any]:
    """``result`` as a casino.main_rtp/1 document (docs/game-math.md, "Certification pack")."""
    spec = main_game(game(result.game), result.paytable_number)
    priced = [w for w, t in zip(spec.wagers, spec.tables, strict=True) if t is not None]

    def frac(x: Fraction) -> str:
        return f"{x.numerator}/{x.denominator}"

    mean_total = sum((d["staked"] for d in result.per_wager.values()), Fraction(0))
    return {
        "format": "casino.main_rtp/1",
        "game": result.game,
        "rules_version": spec.definition.rules_version,
        "method": METHOD if result.complete else METHOD + "; REDUCED to some flop classes (not the game's figure)",
        "results": [
            {
                "pay_tables": dict.fromkeys(priced, result.paytable_number),
                "rtp_per_ante": frac(result.rtp_per_ante),
                "rtp_per_total": frac(result.rtp_per_total),
                "house_edge": frac(result.house_edge),
                "element_of_risk": frac(result.element_of_risk),
                "mean_total_wagered": frac(mean_total),
                "strategy": strategy_tables(result),
            }
        ],
        "summary": result.as_dict(),
        "rules": result.rules,
        "files": STRATEGY_FORMAT,
    }


def write_strategy(result: ExactMainResult, out: Path) -> list[Path]:
    """Write the strategy tables to ``out`` (created): see ``STRATEGY_FORMAT``."""
    import csv
    import gzip
    import json

    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    path = out / "main_rtp.json"
    path.write_text(json.dumps(main_rtp_document(result), indent=1) + "\n")
    written.append(path)
    path = out / "preflop.csv"
    options = list(result.preflop[0]["net_in_antes"])
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["hand", "combos", "decision", *(f"net_{o}" for o in options)])
        for row in result.preflop:
            writer.writerow(
                [row["hand"], row["combos"], row["decision"], *(f"{row['net_in_antes'][o]:.6f}" for o in options)]
            )
    written.append(path)
    pairs = all_combinations(52, 2).astype(np.int64)
    pair_text = [card_text(p) for p in pairs]
    path = out / "flop.csv.gz"
    with gzip.open(path, "wt", compresslevel=5) as handle:
        handle.write("flop,weight,hole,decision\n")
        for f, rep in enumerate(result.flop_reps):
            flop = card_text(rep)
            weight = int(result.flop_orbit[f])
            row = result.flop_decisions[f]
            handle.write(
                "".join(
                    f"{flop},{weight},{pair_text[p]},{result.flop_options[row[p]]}\n" for p in np.flatnonzero(row >= 0)
                )
            )
    written.append(path)
    path = out / "flop.npz"
    np.savez_compressed(
        path,
        reps=result.flop_reps.astype(np.int8),
        orbit=result.flop_orbit,
        decision=result.flop_decisions,
        options=np.array(result.flop_options),
        pairs=pairs.astype(np.int8),
    )
    written.append(path)
    if len(result.river_reps):
        path = out / "river.npz"
        np.savez_compressed(
            path,
            reps=result.river_reps.astype(np.int8),
            orbit=suit_classes(5).orbit,
            call=result.river_calls,
            pairs=pairs.astype(np.int8),
        )
        written.append(path)
    return written
