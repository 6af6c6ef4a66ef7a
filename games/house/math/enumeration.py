"""Exhaustive enumeration of card combinations for exact RTPs (NumPy).

``outcome_counts(basis)`` counts every pay-table outcome of a basis over all its
equally likely card sets: C(52,2) hole cards, C(52,5) five-card sets, C(52,7)
seven-card hands (133,784,560, through the batch module's enumeration). The
classifier is ``games.house.rules.outcomes``, the same as live settlement's.
"""

from __future__ import annotations

from functools import cache
from math import comb

import numpy as np
import numpy.typing as npt

from games.cards.batch import all_combinations, enumerate_ranks, evaluate_batch
from games.house.rules.outcomes import CARDS_PER_BASIS, OUTCOMES, outcome_codes
from games.house.rules.paytables import CATEGORIES, Basis

# The published 7-card category counts (royal flushes apart), e.g. Wikipedia
# "Poker probability", 7-card poker hands; total C(52,7) = 133,784,560.
SEVEN_CARD_COUNTS: dict[str, int] = {
    "royal_flush": 4_324,
    "straight_flush": 37_260,
    "four_of_a_kind": 224_848,
    "full_house": 3_473_184,
    "flush": 4_047_644,
    "straight": 6_180_020,
    "three_of_a_kind": 6_461_620,
    "two_pair": 31_433_400,
    "pair": 58_627_800,
    "high_card": 23_294_460,
}

# The 5-card counts, total C(52,5) = 2,598,960.
FIVE_CARD_COUNTS: dict[str, int] = {
    "royal_flush": 4,
    "straight_flush": 36,
    "four_of_a_kind": 624,
    "full_house": 3_744,
    "flush": 5_108,
    "straight": 10_200,
    "three_of_a_kind": 54_912,
    "two_pair": 123_552,
    "pair": 1_098_240,
    "high_card": 1_302_540,
}


@cache
def _all_hands(k: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64] | None]:
    """Every k-card set of the deck (k = 2 or 5) and, for five, their ranks (shared by bases)."""
    hands = all_combinations(52, k).astype(np.int64)
    return hands, (np.asarray(evaluate_batch(hands), dtype=np.int64) if k >= 5 else None)


def count_codes(
    basis: Basis, hands: npt.NDArray[np.int64], ranks: npt.NDArray[np.int64] | None
) -> npt.NDArray[np.int64]:
    """Outcome counts (indexed like ``OUTCOMES[basis]``, plus a last slot for none)."""
    codes = outcome_codes(basis, ranks, hands)
    size = len(OUTCOMES[basis])
    return np.bincount(np.where(codes < 0, size, codes), minlength=size + 1)


def counts_from_rank_histogram(basis: Basis, histogram: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Outcome counts from a rank histogram, for bases whose outcome is the category alone."""
    if basis not in (Basis.PLAYER_SEVEN, Basis.COMMUNITY_FIVE):
        raise ValueError(f"{basis.value} outcomes need the cards, not only the rank")
    size = len(OUTCOMES[basis])
    ranks = np.arange(1, len(histogram), dtype=np.int64)
    codes = outcome_codes(basis, ranks, np.zeros((len(ranks), 1), dtype=np.int64))
    counts = np.bincount(codes, weights=histogram[1:], minlength=size).astype(np.int64)
    return np.append(counts, 0)


@cache
def outcome_counts(basis: Basis) -> dict[str, int]:
    """Exact count of every outcome of ``basis`` over all its card sets (cached);
    ``"none"`` counts the sets with no listed outcome. Seven-card hands go through
    the batch module's exhaustive rank histogram (all 133,784,560 hands)."""
    k = CARDS_PER_BASIS[basis]
    totals = counts_from_rank_histogram(basis, enumerate_ranks(7)) if k == 7 else count_codes(basis, *_all_hands(k))
    result = {name: int(totals[i]) for i, name in enumerate(OUTCOMES[basis])}
    result["none"] = int(totals[len(OUTCOMES[basis])])
    assert sum(result.values()) == comb(52, k)
    return result


def category_counts(counts: dict[str, int]) -> dict[str, int]:
    """Only the ten categories of a count table (for checks against known tables)."""
    return {c: counts[c] for c in CATEGORIES if c in counts}
