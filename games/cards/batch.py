"""Vectorised (NumPy) hand evaluation over arrays of hands, and exhaustive enumeration.

Same tables and the same 1..7462 rank scale as ``evaluator`` (one source of
truth): ``evaluate_batch(hands)[i] == rank_indices(hands[i])`` for every row.

``enumerate_ranks(k)`` evaluates every one of the C(52, k) hands (k = 5, 6, 7)
and returns how many hands have each rank. It shares the work of adding up
card keys: hands are taken in lexicographic order, and for each pair of
smallest cards (c1, c2) the hands are the pair plus every (k-2)-subset of the
cards above c2, which is a contiguous tail of the precomputed list of all
(k-2)-subsets. Each hand still gets its own key sums and table lookups.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from math import comb

import numpy as np
import numpy.typing as npt

from .evaluator import CATEGORIES_BY_STRENGTH, HAND_SIZES, Category, Tables, tables

IntArray = npt.NDArray[np.integer]


def evaluate_batch(hands: npt.ArrayLike) -> npt.NDArray[np.uint16]:
    """Ranks (1..7462) of an (N, k) array of card indices, k in 5..7; each row distinct cards.

    Rows are not validated for duplicates (use ``validate_hands`` when the input is untrusted).
    """
    array = np.asarray(hands)
    if array.ndim != 2 or array.shape[1] not in HAND_SIZES:
        raise ValueError(f"expected an (N, 5..7) array of card indices, got shape {array.shape}")
    if array.size and (array.min() < 0 or array.max() > 51):
        raise ValueError("card indices must be in 0..51")
    t = tables()
    idx = array.astype(np.intp, copy=False)
    key = t.card_rank_key[idx].sum(axis=1, dtype=np.int64)
    suit_key = t.card_suit_key[idx].sum(axis=1, dtype=np.int32)
    ranks: npt.NDArray[np.uint16] = t.nonflush[array.shape[1]][key]
    flush_suit = t.flush_suit[suit_key]
    rows = np.flatnonzero(flush_suit >= 0)
    if rows.size:
        sub = idx[rows]
        in_suit = t.card_suit[sub] == flush_suit[rows, None]
        mask = np.where(in_suit, t.card_bit[sub], 0).sum(axis=1)
        ranks[rows] = t.flush[mask]
    return ranks


def random_hands(rng: np.random.Generator, count: int, k: int = 7) -> npt.NDArray[np.int8]:
    """``count`` hands of ``k`` distinct cards, each uniformly random (for simulations and checks).

    Draws k independent uniform cards per row and redraws the rows that repeat a
    card: the kept rows are uniform over ordered k-tuples of distinct cards. For
    k > 12 (where most rows would be redrawn) each row is a random permutation's prefix.
    """
    if not 0 <= k <= 52:
        raise ValueError("k must be in 0..52")
    if k > 12:
        return np.argsort(rng.random((count, 52)), axis=1)[:, :k].astype(np.int8)
    hands = rng.integers(0, 52, size=(count, k), dtype=np.int8)
    redo = np.arange(count)
    while True:
        ordered = np.sort(hands[redo], axis=1)
        redo = redo[np.any(ordered[:, 1:] == ordered[:, :-1], axis=1)]
        if redo.size == 0:
            return hands
        hands[redo] = rng.integers(0, 52, size=(redo.size, k), dtype=np.int8)


def validate_hands(hands: npt.ArrayLike) -> None:
    """Raise ``ValueError`` if any row repeats a card."""
    array = np.sort(np.asarray(hands), axis=1)
    if np.any(array[:, 1:] == array[:, :-1]):
        raise ValueError("a hand repeats a card")


def categories_of(ranks: npt.ArrayLike) -> npt.NDArray[np.uint8]:
    """Category strengths (0 = high card .. 9 = royal flush) of an array of ranks."""
    return tables().category_strength[np.asarray(ranks, dtype=np.intp)]


def category_counts(rank_counts: npt.ArrayLike) -> dict[Category, int]:
    """Fold a histogram indexed by rank (length 7463) into counts per category, royal flush first."""
    histogram = np.asarray(rank_counts, dtype=np.int64)
    by_strength = np.bincount(tables().category_strength, weights=histogram, minlength=10).astype(np.int64)
    return {CATEGORIES_BY_STRENGTH[s]: int(by_strength[s]) for s in range(9, -1, -1)}


def all_combinations(n_cards: int, k: int) -> npt.NDArray[np.int8]:
    """Every k-subset of 0..n_cards-1 in lexicographic order, as a read-only (C(n, k), k) int8 array."""
    if not 0 <= k <= n_cards <= 127:
        raise ValueError("need 0 <= k <= n_cards <= 127")
    return _combinations(n_cards, k)


@functools.lru_cache(maxsize=8)
def _combinations(n: int, k: int) -> npt.NDArray[np.int8]:
    # Extend every (j)-subset, in order, by each larger element, in order: the result stays lexicographic.
    result = np.zeros((1, 0), dtype=np.int8)
    last = np.full(1, -1, dtype=np.int32)
    for j in range(k):
        extensions = (n - (k - j - 1)) - (last + 1)  # leave room for the elements still to come
        keep = extensions > 0
        result, last, extensions = result[keep], last[keep], extensions[keep]
        rows = np.repeat(np.arange(len(result), dtype=np.int32), extensions)
        offsets = np.arange(len(rows), dtype=np.int32) - np.repeat(np.cumsum(extensions) - extensions, extensions)
        last = last[rows] + 1 + offsets
        result = np.concatenate([result[rows], last[:, None].astype(np.int8)], axis=1)
    result.flags.writeable = False
    return result


def enumerate_ranks(
    k: int = 7, *, progress: Callable[[int], None] | None = None, first_cards: range | None = None
) -> npt.NDArray[np.int64]:
    """How many of the C(52, k) hands have each rank: an int64 histogram of length 7463.

    ``first_cards`` limits the enumeration to hands whose lowest card is in that
    range (to split the work or to test on a part); ``progress`` is called with
    the number of hands done after each lowest card.
    """
    if k not in HAND_SIZES:
        raise ValueError("k must be 5, 6 or 7")
    t = tables()
    tail_k = k - 2
    tails = all_combinations(52, tail_k)
    # Column by column, so the temporaries stay one column wide (the tails are 2.6 M rows for k = 7).
    tail_rank_key = np.zeros(len(tails), dtype=np.int32)
    tail_suit_key = np.zeros(len(tails), dtype=np.int16)
    tail_suit_mask = np.zeros((4, len(tails)), dtype=np.int16)  # per suit, the rank bits of the tail's cards
    suit_bits = np.zeros((4, 52), dtype=np.int16)
    suit_bits[t.card_suit, np.arange(52)] = t.card_bit
    for column in tails.T:
        tail_rank_key += t.card_rank_key[column]
        tail_suit_key += t.card_suit_key[column].astype(np.int16)
        for suit in range(4):
            tail_suit_mask[suit] |= suit_bits[suit][column]
    # Start row of the tails whose lowest card is c (tails are in lexicographic order).
    starts = np.searchsorted(tails[:, 0], np.arange(53))
    table = t.nonflush[k]
    histogram = np.zeros(len(t.category_strength), dtype=np.int64)
    done = 0
    buffer_key = np.empty(len(tails), dtype=np.int32)
    buffer_suit = np.empty(len(tails), dtype=np.int16)
    for c1 in first_cards if first_cards is not None else range(52 - k + 1):
        for c2 in range(c1 + 1, 52 - tail_k + 1):
            start = int(starts[c2 + 1])
            size = len(tails) - start
            key = np.add(tail_rank_key[start:], t.card_rank_key[c1] + t.card_rank_key[c2], out=buffer_key[:size])
            suit_key = np.add(tail_suit_key[start:], t.card_suit_key[c1] + t.card_suit_key[c2], out=buffer_suit[:size])
            ranks = table[key]
            flush_suit = t.flush_suit[suit_key]
            rows = np.flatnonzero(flush_suit >= 0)
            if rows.size:
                suits = flush_suit[rows]
                mask = tail_suit_mask[suits, rows + start].astype(np.intp)
                mask |= np.where(t.card_suit[c1] == suits, t.card_bit[c1], 0)
                mask |= np.where(t.card_suit[c2] == suits, t.card_bit[c2], 0)
                ranks[rows] = t.flush[mask]
            histogram += np.bincount(ranks, minlength=len(histogram))
            done += size
        if progress is not None:
            progress(done)
    return histogram


def expected_hand_count(k: int) -> int:
    return comb(52, k)


# The published counts (e.g. Wikipedia, "Poker probability"), used only to check enumerations.
PUBLISHED_CATEGORY_COUNTS: dict[int, dict[Category, int]] = {
    5: {
        Category.ROYAL_FLUSH: 4,
        Category.STRAIGHT_FLUSH: 36,
        Category.FOUR_OF_A_KIND: 624,
        Category.FULL_HOUSE: 3_744,
        Category.FLUSH: 5_108,
        Category.STRAIGHT: 10_200,
        Category.THREE_OF_A_KIND: 54_912,
        Category.TWO_PAIR: 123_552,
        Category.PAIR: 1_098_240,
        Category.HIGH_CARD: 1_302_540,
    },
    7: {
        Category.ROYAL_FLUSH: 4_324,
        Category.STRAIGHT_FLUSH: 37_260,
        Category.FOUR_OF_A_KIND: 224_848,
        Category.FULL_HOUSE: 3_473_184,
        Category.FLUSH: 4_047_644,
        Category.STRAIGHT: 6_180_020,
        Category.THREE_OF_A_KIND: 6_461_620,
        Category.TWO_PAIR: 31_433_400,
        Category.PAIR: 58_627_800,
        Category.HIGH_CARD: 23_294_460,
    },
}


__all__ = [
    "PUBLISHED_CATEGORY_COUNTS",
    "Tables",
    "all_combinations",
    "categories_of",
    "category_counts",
    "enumerate_ranks",
    "evaluate_batch",
    "expected_hand_count",
    "random_hands",
    "validate_hands",
]
