"""Pay-table outcomes of hands: one vectorised classifier used by live settlement
(one hand at a time), exact RTP enumeration and simulation alike.

``outcome_codes(basis, ranks, cards)`` takes the evaluator's ranks (1..7462, higher
is better) for the cards a pay table looks at and the card indices themselves,
and returns, per hand, the index of its outcome in ``OUTCOMES[basis]`` (or -1).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np
import numpy.typing as npt

from games.cards.cards import Card, parse_cards
from games.cards.evaluator import category_of_rank, evaluate, rank_of
from games.house.rules.paytables import (
    ACE_FACE,
    ACE_FACE_SUITED,
    CATEGORIES,
    PAIR_OF_ACES,
    ROYAL_FLUSH_DIAMONDS,
    ROYAL_FLUSH_OTHER,
    Basis,
)

IntArray = npt.NDArray[np.int64]

OUTCOMES: dict[Basis, tuple[str, ...]] = {
    Basis.PLAYER_SEVEN: CATEGORIES,
    Basis.COMMUNITY_FIVE: CATEGORIES,
    Basis.FIRST_FIVE: (*CATEGORIES[:8], PAIR_OF_ACES, "pair", "high_card"),
    Basis.STAX_FIVE: (ROYAL_FLUSH_DIAMONDS, ROYAL_FLUSH_OTHER, *CATEGORIES[1:]),
    Basis.HOLE_CARDS: (PAIR_OF_ACES, ACE_FACE_SUITED, ACE_FACE, "pair"),
}

CARDS_PER_BASIS: dict[Basis, int] = {
    Basis.PLAYER_SEVEN: 7,
    Basis.COMMUNITY_FIVE: 5,
    Basis.FIRST_FIVE: 5,
    Basis.STAX_FIVE: 5,
    Basis.HOLE_CARDS: 2,
}

FACE_RANKS = (11, 12, 13)  # RULES.md: "face card" means K, Q or J
ACE = 14


@cache
def card_rank_table() -> IntArray:
    """Card index -> rank 2..14."""
    return np.array([Card.from_index(i).rank for i in range(52)], dtype=np.int64)


@cache
def card_suit_table() -> npt.NDArray[np.str_]:
    """Card index -> suit letter."""
    return np.array([Card.from_index(i).suit for i in range(52)])


@cache
def category_table() -> IntArray:
    """Evaluator rank (index 0..7462) -> category index in ``CATEGORIES`` (0 = royal flush)."""
    table = np.full(7463, -1, dtype=np.int64)
    for rank in range(1, 7463):
        table[rank] = CATEGORIES.index(str(category_of_rank(rank).value))
    return table


@cache
def weakest_pair_of_aces_rank() -> int:
    # A A 4 3 2 is the weakest pair of aces (A-2-3-4 with a pair is no straight).
    return rank_of(parse_cards("As Ad 4c 3h 2s"))


def categories(ranks: IntArray) -> IntArray:
    """Category index (0 = royal flush .. 9 = high card) of each rank."""
    return category_table()[np.asarray(ranks, dtype=np.int64)]


def outcome_codes(basis: Basis, ranks: IntArray | None, cards: IntArray) -> IntArray:
    """Outcome index in ``OUTCOMES[basis]`` per hand (-1: no listed outcome).

    ``cards`` is an (N, k) array of card indices (k = ``CARDS_PER_BASIS[basis]``);
    ``ranks`` are their evaluator ranks (unused for ``HOLE_CARDS``)."""
    cards = np.asarray(cards, dtype=np.int64)
    if basis is Basis.HOLE_CARDS:
        return _hole_card_codes(cards)
    assert ranks is not None
    cats = categories(ranks)
    if basis in (Basis.PLAYER_SEVEN, Basis.COMMUNITY_FIVE):
        return cats
    if basis is Basis.FIRST_FIVE:
        codes = cats.copy()
        pair = CATEGORIES.index("pair")
        aces = (cats == pair) & (np.asarray(ranks) >= weakest_pair_of_aces_rank())
        codes[cats >= pair] = cats[cats >= pair] + 1  # shift pair / high card past pair_of_aces
        codes[aces] = pair
        return codes
    if basis is Basis.STAX_FIVE:
        # Every card of a five-card royal flush has the royal's suit.
        codes = cats + 1
        royal = cats == 0
        diamonds = card_suit_table()[cards[:, 0]] == "d"
        codes[royal & diamonds] = 0
        codes[royal & ~diamonds] = 1
        return codes
    raise ValueError(f"unknown basis {basis}")


def _hole_card_codes(cards: IntArray) -> IntArray:
    ranks = card_rank_table()[cards]
    suits = card_suit_table()[cards]
    first, second = ranks[:, 0], ranks[:, 1]
    pair = first == second
    ace_face = ((first == ACE) & np.isin(second, FACE_RANKS)) | ((second == ACE) & np.isin(first, FACE_RANKS))
    suited = suits[:, 0] == suits[:, 1]
    # Highest qualifying outcome only (RULES.md): checked from the top down.
    codes = np.full(len(cards), -1, dtype=np.int64)
    codes[pair] = 3
    codes[ace_face] = 2
    codes[ace_face & suited] = 1
    codes[pair & (first == ACE)] = 0
    return codes


def outcome_of(basis: Basis, cards: Sequence[Card]) -> str | None:
    """The pay-table outcome of one hand (``None``: none listed), via the same
    classifier as the vectorised paths."""
    if len(cards) != CARDS_PER_BASIS[basis]:
        raise ValueError(f"{basis.value} needs {CARDS_PER_BASIS[basis]} cards, got {len(cards)}")
    index = np.array([[c.index for c in cards]], dtype=np.int64)
    rank = None if basis is Basis.HOLE_CARDS else np.array([evaluate(list(cards)).rank], dtype=np.int64)
    code = int(outcome_codes(basis, rank, index)[0])
    return None if code < 0 else OUTCOMES[basis][code]
