"""Poker hand evaluation: the best five of five, six or seven cards.

Rank scale: every five-card hand has a ``rank`` in 1..7462, one value per
distinct five-card hand value (suits never matter except to make a flush).
Higher is always better: the 7-5-4-3-2 offsuit high card is 1, the royal flush
7462. Equal ranks tie, exactly as RULES.md (Common) says: quads by rank then
kicker, full house by trips then pair, flush and high card card by card,
straight by its top card (5-4-3-2-A is the lowest straight, its top card the
5), trips then two kickers, two pair by high pair, low pair, kicker, pair then
three kickers.

How it is fast (see docs/cards-and-evaluation.md):

- each rank has a key (``RANK_KEYS``) such that the sum of the keys of any
  multiset of exactly *n* ranks (n = 5, 6, 7; at most four of a rank) is
  unique, so ``table_n[sum]`` is the best non-flush rank of those cards;
- each suit has a key ``8 ** suit`` so the sum of the suit keys gives the
  count of every suit and, through a 4096-entry table, the flush suit if any;
- a flush is ranked by ``FLUSH[13-bit mask of the flush suit's ranks]``.

The tables are derived at first use, deterministically, from the ordered list
of the 7,462 five-card classes (``five_card_classes``): nothing is downloaded
or hand-typed except the thirteen rank keys, and a key collision would stop
the build (``TableError``).
"""

from __future__ import annotations

import enum
import functools
import operator
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations_with_replacement
from typing import Final

import numpy as np
import numpy.typing as npt

from .cards import Card, parse_cards

HAND_SIZES: Final = (5, 6, 7)
DISTINCT_FIVE_CARD_RANKS: Final = 7462

# Shackleton's SpecialK rank keys (2 .. A): sums of n keys (n <= 7, at most 4
# equal) are distinct for each n. Checked when the tables are built.
RANK_KEYS: Final = (0, 1, 5, 22, 98, 453, 2031, 8698, 22854, 83661, 262349, 636345, 1479181)
_SUIT_SHIFT: Final = 12  # combined card key = rank key << 12 | 8 ** suit position
_SUIT_MASK: Final = (1 << _SUIT_SHIFT) - 1


class Category(enum.StrEnum):
    """Hand categories; ``strength`` is 0 (high card) .. 9 (royal flush)."""

    ROYAL_FLUSH = "royal_flush"
    STRAIGHT_FLUSH = "straight_flush"
    FOUR_OF_A_KIND = "four_of_a_kind"
    FULL_HOUSE = "full_house"
    FLUSH = "flush"
    STRAIGHT = "straight"
    THREE_OF_A_KIND = "three_of_a_kind"
    TWO_PAIR = "two_pair"
    PAIR = "pair"
    HIGH_CARD = "high_card"

    @property
    def strength(self) -> int:
        return _STRENGTH[self]

    @classmethod
    def from_strength(cls, strength: int) -> Category:
        return CATEGORIES_BY_STRENGTH[strength]


CATEGORIES_BY_STRENGTH: Final[tuple[Category, ...]] = tuple(reversed(Category))
_STRENGTH: Final = {category: strength for strength, category in enumerate(CATEGORIES_BY_STRENGTH)}


class TableError(RuntimeError):
    """The lookup tables could not be built consistently (a programming error)."""


@functools.total_ordering
@dataclass(frozen=True, eq=False)
class HandValue:
    """The value of a hand: compare and hash by ``rank`` only (suits never break ties).

    ``best_five`` is ordered by significance: the quads, trips or pairs first
    (higher pair first), then kickers high to low; straights from the top card
    (5-4-3-2-A for the wheel).
    """

    category: Category
    rank: int
    best_five: tuple[Card, ...] = field(default=())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, HandValue):
            return self.rank == other.rank
        return NotImplemented

    def __lt__(self, other: HandValue) -> bool:
        if isinstance(other, HandValue):
            return self.rank < other.rank
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.rank)

    def as_dict(self) -> dict[str, object]:
        return {"category": self.category.value, "rank": self.rank, "best_five": [str(c) for c in self.best_five]}


# --- the 7,462 five-card classes -------------------------------------------------------------


def _straight_top(distinct_desc: Sequence[int]) -> int | None:
    """The top rank if these five distinct ranks (high to low) make a straight; the wheel's top is 5."""
    if distinct_desc[0] - distinct_desc[4] == 4:
        return distinct_desc[0]
    if tuple(distinct_desc) == (14, 5, 4, 3, 2):
        return 5
    return None


def five_card_value(ranks: Sequence[int], flush: bool) -> tuple[int, tuple[int, ...]]:
    """(category strength, tie-break ranks) of five cards given their ranks (2..14) and whether suited.

    Tie-break ranks are compared left to right: the grouped ranks by group size
    then rank (quads before kicker, trips before pair, high pair before low pair),
    then kickers high to low; a straight by its top card only.
    """
    counts = Counter(ranks)
    ordered = sorted(counts, key=lambda r: (counts[r], r), reverse=True)
    shape = tuple(sorted(counts.values(), reverse=True))
    if shape == (1, 1, 1, 1, 1):
        top = _straight_top(ordered)
        if top is not None:
            if flush:
                return (9 if top == 14 else 8), (top,)
            return 4, (top,)
        return (5 if flush else 0), tuple(ordered)
    if flush:
        raise ValueError("five suited cards have distinct ranks")
    category = {(4, 1): 7, (3, 2): 6, (3, 1, 1): 3, (2, 2, 1): 2, (2, 1, 1, 1): 1}[shape]
    return category, tuple(ordered)


@functools.cache
def five_card_classes() -> tuple[tuple[tuple[int, ...], bool], ...]:
    """All 7,462 distinct five-card values, weakest first, as (ranks high to low, suited).

    ``rank`` of a class is its position + 1.
    """
    classes: list[tuple[tuple[int, ...], bool]] = []
    for combo in combinations_with_replacement(range(14, 1, -1), 5):
        if max(Counter(combo).values()) <= 4:
            classes.append((combo, False))
            if len(set(combo)) == 5:
                classes.append((combo, True))
    classes.sort(key=lambda item: five_card_value(item[0], item[1]))
    if len(classes) != DISTINCT_FIVE_CARD_RANKS:
        raise TableError(f"expected 7462 classes, built {len(classes)}")
    return tuple(classes)


@dataclass(frozen=True)
class Tables:
    """The lookup tables (NumPy arrays, shared by the scalar and batch paths)."""

    rank_keys: npt.NDArray[np.int64]  # (13,) by rank - 2
    card_rank_key: npt.NDArray[np.int32]  # (52,) by card index
    card_suit_key: npt.NDArray[np.int32]  # (52,) 8 ** suit position
    card_key: npt.NDArray[np.int64]  # (52,) rank key << 12 | suit key
    card_bit: npt.NDArray[np.int32]  # (52,) 1 << (rank - 2)
    card_suit: npt.NDArray[np.int8]  # (52,) suit position
    flush_suit: npt.NDArray[np.int8]  # (4096,) suit-key sum -> suit with >= 5 cards, or -1
    flush: npt.NDArray[np.uint16]  # (8192,) rank mask with 5..7 bits -> best flush rank
    nonflush: dict[int, npt.NDArray[np.uint16]]  # n -> rank-key sum -> best non-flush rank
    category_strength: npt.NDArray[np.uint8]  # (7463,) rank -> category strength (index 0 unused)
    category_first_rank: tuple[int, ...]  # strength -> lowest rank of that category

    @property
    def nbytes(self) -> int:
        arrays: list[npt.NDArray[np.generic]] = [
            self.rank_keys,
            self.card_rank_key,
            self.card_suit_key,
            self.card_key,
            self.card_bit,
            self.card_suit,
            self.flush_suit,
            self.flush,
            self.category_strength,
            *self.nonflush.values(),
        ]
        return sum(a.nbytes for a in arrays)


def _multisets(n: int) -> npt.NDArray[np.int64]:
    """Rank counts (rows of 13, by rank - 2) of every multiset of n ranks with at most four of each."""
    counts = np.zeros((1, 0), dtype=np.int64)
    for _ in range(13):
        totals = counts.sum(axis=1)
        counts = np.concatenate(
            [np.column_stack([counts[totals + c <= n], np.full((totals + c <= n).sum(), c)]) for c in range(5)]
        )
    multisets: npt.NDArray[np.int64] = counts[counts.sum(axis=1) == n]
    return multisets


@functools.cache
def tables() -> Tables:
    """Build (once per process) every lookup table; deterministic, about a second of CPU."""
    classes = five_card_classes()
    keys = np.array(RANK_KEYS, dtype=np.int64)

    flush = np.zeros(1 << 13, dtype=np.uint16)
    five_rank: dict[tuple[int, ...], int] = {}
    strength_of_rank = np.zeros(DISTINCT_FIVE_CARD_RANKS + 1, dtype=np.uint8)
    for rank, (ranks, suited) in enumerate(classes, start=1):
        strength_of_rank[rank] = five_card_value(ranks, suited)[0]
        if suited:
            flush[sum(1 << (r - 2) for r in ranks)] = rank
        else:
            five_rank[ranks] = rank
    if np.any(np.diff(strength_of_rank[1:].astype(np.int16)) < 0):
        raise TableError("categories are not contiguous on the rank scale")

    # Masks of 6 and 7 suited ranks: the best 5-bit sub-mask.
    for bits in (6, 7):
        for mask in range(1 << 13):
            if mask.bit_count() == bits:
                flush[mask] = max(int(flush[mask & ~(1 << b)]) for b in range(13) if mask >> b & 1)

    nonflush: dict[int, npt.NDArray[np.uint16]] = {}
    previous: npt.NDArray[np.uint16] | None = None
    for n in HAND_SIZES:
        counts = _multisets(n)
        sums = counts @ keys
        if len(np.unique(sums)) != len(sums):
            raise TableError(f"rank keys collide for {n} cards")
        table = np.zeros(int(sums.max()) + 1, dtype=np.uint16)
        if previous is None:
            for row, total in zip(counts, sums, strict=True):
                ranks = tuple(r + 2 for r in range(12, -1, -1) for _ in range(int(row[r])))
                table[total] = five_rank[ranks]
        else:
            best = np.zeros(len(sums), dtype=np.uint16)
            for r in range(13):
                present = counts[:, r] > 0
                sub = np.where(present, sums - keys[r], 0)
                best = np.maximum(best, np.where(present, previous[np.clip(sub, 0, len(previous) - 1)], 0))
            table[sums] = best
        if np.any(table[sums] == 0):
            raise TableError(f"unranked {n}-card multiset")
        nonflush[n] = table
        previous = table

    flush_suit = np.full(1 << _SUIT_SHIFT, -1, dtype=np.int8)
    for c0 in range(8):
        for c1 in range(8 - c0):
            for c2 in range(8 - c0 - c1):
                for c3 in range(8 - c0 - c1 - c2):
                    suit_counts = (c0, c1, c2, c3)
                    total = c0 + 8 * c1 + 64 * c2 + 512 * c3
                    flush_suit[total] = next((s for s in range(4) if suit_counts[s] >= 5), -1)

    index = np.arange(52)
    card_rank = index // 4
    card_suit = (index % 4).astype(np.int8)
    card_rank_key = keys[card_rank].astype(np.int32)
    card_suit_key = (8 ** card_suit.astype(np.int32)).astype(np.int32)
    first_rank = tuple(int(np.searchsorted(strength_of_rank[1:], s)) + 1 for s in range(10))
    return Tables(
        rank_keys=keys,
        card_rank_key=card_rank_key,
        card_suit_key=card_suit_key,
        card_key=(card_rank_key.astype(np.int64) << _SUIT_SHIFT) | card_suit_key,
        card_bit=(1 << card_rank).astype(np.int32),
        card_suit=card_suit,
        flush_suit=flush_suit,
        flush=flush,
        nonflush=nonflush,
        category_strength=strength_of_rank,
        category_first_rank=first_rank,
    )


# --- scalar evaluation ------------------------------------------------------------------------


class _Scalar:
    """Plain-Python views of the tables: list/memoryview indexing is much faster than NumPy's per item."""

    def __init__(self, t: Tables) -> None:
        self.card_key: list[int] = [int(k) for k in t.card_key]
        self.flush_suit: list[int] = [int(s) for s in t.flush_suit]
        self.suit_bits: list[list[int]] = [
            [int(t.card_bit[i]) if t.card_suit[i] == s else 0 for i in range(52)] for s in range(4)
        ]
        self.flush: list[int] = [int(r) for r in t.flush]
        self.nonflush: dict[int, memoryview] = {n: table.data for n, table in t.nonflush.items()}
        self.nonflush7 = self.nonflush[7]
        self.first_rank = t.category_first_rank


@functools.cache
def _scalar() -> _Scalar:
    return _Scalar(tables())


def rank7_indices(a: int, b: int, c: int, d: int, e: int, f: int, g: int) -> int:
    """Rank (1..7462) of seven distinct cards given by index; the fast path."""
    s = _SCALAR or _init_scalar()
    ck = s.card_key
    key = ck[a] + ck[b] + ck[c] + ck[d] + ck[e] + ck[f] + ck[g]
    suit = s.flush_suit[key & _SUIT_MASK]
    if suit < 0:
        return s.nonflush7[key >> _SUIT_SHIFT]
    bits = s.suit_bits[suit]
    return s.flush[bits[a] | bits[b] | bits[c] | bits[d] | bits[e] | bits[f] | bits[g]]


def rank_indices(indices: Sequence[int]) -> int:
    """Rank (1..7462) of 5, 6 or 7 distinct cards given by index."""
    s = _SCALAR or _init_scalar()
    n = len(indices)
    if n == 7:
        return rank7_indices(*indices)
    if n not in (5, 6):
        raise ValueError(f"a hand has 5, 6 or 7 cards, not {n}")
    ck = s.card_key
    key = 0
    for i in indices:
        key += ck[i]
    suit = s.flush_suit[key & _SUIT_MASK]
    if suit < 0:
        return int(s.nonflush[n][key >> _SUIT_SHIFT])
    bits = s.suit_bits[suit]
    mask = 0
    for i in indices:
        mask |= bits[i]
    return s.flush[mask]


def rank_of(cards: Sequence[Card]) -> int:
    """Rank (1..7462, higher is better) of 5, 6 or 7 distinct cards; no validation (see ``evaluate``)."""
    if len(cards) == 7:
        a, b, c, d, e, f, g = cards
        return rank7_indices(a._index, b._index, c._index, d._index, e._index, f._index, g._index)
    return rank_indices([card._index for card in cards])


def category_of_rank(rank: int) -> Category:
    """The category of a rank on the 1..7462 scale."""
    if not 1 <= rank <= DISTINCT_FIVE_CARD_RANKS:
        raise ValueError(f"rank {rank} is outside 1..7462")
    first = (_SCALAR or _init_scalar()).first_rank
    strength = 9
    while first[strength] > rank:
        strength -= 1
    return CATEGORIES_BY_STRENGTH[strength]


def _significance_order(five: Sequence[Card], category: Category) -> tuple[Card, ...]:
    counts: dict[int, int] = {}
    for card in five:
        counts[card.rank] = counts.get(card.rank, 0) + 1
    ordered = sorted(five, key=lambda card: (counts[card._rank], card._rank, -card._index), reverse=True)
    if category in (Category.STRAIGHT, Category.STRAIGHT_FLUSH) and ordered[0].rank == 14 and ordered[1].rank == 5:
        ordered = [*ordered[1:], ordered[0]]  # the wheel: 5-4-3-2-A
    return tuple(ordered)


def evaluate(cards: Iterable[Card | str] | str) -> HandValue:
    """The value of the best five of 5, 6 or 7 distinct cards, with the five cards that make it.

    Raises ``InvalidCard``/``DuplicateCard`` for bad input and ``ValueError`` for a
    wrong number of cards. Among equal-valued choices of five (e.g. two kickers
    of the same rank) the one with the lower suit positions (s, h, d, c) is shown.
    """
    hand = parse_cards(cards)
    if len(hand) not in HAND_SIZES:
        raise ValueError(f"a hand has 5, 6 or 7 cards, not {len(hand)}")
    rank = rank_of(hand)
    category = category_of_rank(rank)
    five = hand if len(hand) == 5 else _cards_of_class(hand, rank)
    return HandValue(category=category, rank=rank, best_five=_significance_order(five, category))


_BY_INDEX = operator.attrgetter("_index")


def _cards_of_class(hand: Sequence[Card], rank: int) -> tuple[Card, ...]:
    """Five cards of ``hand`` whose value is ``rank`` (the hand's best), lower suit positions first.

    A suited class takes its ranks from the flush suit. An unsuited class can take
    any cards of its ranks: if they happened to share a suit the hand would hold a
    flush, which beats every unsuited class a 7-card hand with a flush can make.
    """
    class_ranks, suited = five_card_classes()[rank - 1]
    if suited:
        suit = Counter(card.suit for card in hand).most_common(1)[0][0]
        by_rank = {card.rank: card for card in hand if card.suit == suit}
        return tuple(by_rank[r] for r in class_ranks)
    pools: dict[int, list[Card]] = {}
    for card in sorted(hand, key=_BY_INDEX):
        pools.setdefault(card.rank, []).append(card)
    return tuple(pools[r].pop(0) for r in class_ranks)


# Module-level fast references, filled on first use (keeps import cheap; builds in about a second).
_SCALAR: _Scalar | None = None


def _init_scalar() -> _Scalar:
    global _SCALAR
    _SCALAR = _scalar()
    return _SCALAR


def warm_up() -> None:
    """Build the lookup tables now rather than at the first evaluation (about a
    second of CPU, 41 MiB): a dealer worker calls it at start, so the first
    showdown of a 10,000-player round does not pay for it."""
    _init_scalar()
