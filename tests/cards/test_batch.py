"""Exhaustive and independent checks of the evaluator: all C(52,5) hands, all C(52,7) hands,
and agreement with two independent evaluators (phevaluator, treys) on random 7-card hands."""

from __future__ import annotations

import numpy as np
import pytest
from phevaluator import _pheval
from treys import Card as TreysCard
from treys import Evaluator as TreysEvaluator

from games.cards.batch import (
    PUBLISHED_CATEGORY_COUNTS,
    all_combinations,
    categories_of,
    category_counts,
    enumerate_ranks,
    evaluate_batch,
    random_hands,
    validate_hands,
)
from games.cards.cards import Card
from games.cards.evaluator import Category, category_of_rank, evaluate, rank_indices, rank_of

PH_SUIT = {"c": 0, "d": 1, "h": 2, "s": 3}


def ph_id(index: int) -> int:
    card = Card.from_index(index)
    return (card.rank - 2) * 4 + PH_SUIT[card.suit]


def seeded_hands(count: int, k: int, seed: int) -> np.ndarray:
    hands = random_hands(np.random.default_rng(seed), count, k)
    validate_hands(hands)
    return hands


@pytest.mark.parametrize("k", [5, 6, 7])
def test_batch_agrees_with_scalar(k):
    hands = seeded_hands(3000, k, seed=k)
    ranks = evaluate_batch(hands)
    assert [int(r) for r in ranks] == [rank_indices(list(map(int, row))) for row in hands]
    assert list(categories_of(ranks)) == [category_of_rank(int(r)).strength for r in ranks]


def test_all_five_card_hands_have_exactly_7462_distinct_values_and_the_published_table():
    hands = all_combinations(52, 5)
    assert len(hands) == 2_598_960
    ranks = evaluate_batch(hands)
    assert len(np.unique(ranks)) == 7462
    assert ranks.min() == 1
    assert ranks.max() == 7462
    histogram = np.bincount(ranks, minlength=7463)
    assert category_counts(histogram) == PUBLISHED_CATEGORY_COUNTS[5]
    # The enumeration path (shared key sums) counts the same hands the same way.
    assert np.array_equal(enumerate_ranks(5), histogram)


def test_partial_seven_card_enumeration_matches_direct_evaluation():
    # Hands whose lowest card is 38 or more: every 7-subset of cards 38..51.
    hands = all_combinations(14, 7) + 38
    expected = np.bincount(evaluate_batch(hands), minlength=7463)
    assert np.array_equal(enumerate_ranks(7, first_cards=range(38, 46)), expected)


@pytest.mark.slow
def test_all_seven_card_hands_give_the_published_category_table():
    histogram = enumerate_ranks(7)
    assert histogram.sum() == 133_784_560
    assert category_counts(histogram) == PUBLISHED_CATEGORY_COUNTS[7]
    assert int((histogram > 0).sum()) == 4824  # distinct values reachable with seven cards


def test_agreement_with_phevaluator_and_treys_on_20000_random_seven_card_hands():
    hands = seeded_hands(20_000, 7, seed=20_000)
    ours = evaluate_batch(hands).astype(np.int64)
    ph = np.array([_pheval.evaluate_7cards(*(ph_id(int(i)) for i in row)) for row in hands])
    # phevaluator: 1 = royal flush .. 7462 = worst, the same classes in reverse order.
    assert np.array_equal(ours, 7463 - ph)
    # Relative order, pair by pair (neighbours after a shuffle of the rows).
    order = np.random.default_rng(1).permutation(len(hands))
    assert np.array_equal(np.sign(ours - ours[order]), np.sign(ph[order] - ph))

    treys = TreysEvaluator()
    names = {
        "Royal Flush": Category.ROYAL_FLUSH,
        "Straight Flush": Category.STRAIGHT_FLUSH,
        "Four of a Kind": Category.FOUR_OF_A_KIND,
        "Full House": Category.FULL_HOUSE,
        "Flush": Category.FLUSH,
        "Straight": Category.STRAIGHT,
        "Three of a Kind": Category.THREE_OF_A_KIND,
        "Two Pair": Category.TWO_PAIR,
        "Pair": Category.PAIR,
        "High Card": Category.HIGH_CARD,
    }
    for row, rank in zip(hands[:20_000], ours, strict=True):
        cards = [Card.from_index(int(i)) for i in row]
        treys_cards = [TreysCard.new(str(card)) for card in cards]
        treys_rank = treys.evaluate(treys_cards[:2], treys_cards[2:])
        treys_class = TreysEvaluator.class_to_string(treys, treys.get_rank_class(treys_rank))
        if treys_rank == 1:
            treys_class = "Royal Flush"
        assert category_of_rank(int(rank)) is names[treys_class]
        assert rank_of(cards) == rank


def test_evaluate_and_batch_agree_on_hands_with_every_category():
    texts = [
        "As Ks Qs Js Ts 2c 3d",
        "5d 4d 3d 2d Ad Kc Kh",
        "7s 7h 7d 7c 2s 2h 2d",
        "Ts Th Td 4c 4s 4h 9d",
        "Kc 9c 7c 4c 2c 2d 2h",
        "9s 8h 7d 6c 5s 5h 5d",
        "Qs Qh Qd 9c 2s 3h 4d",
        "Js Jh 4d 4c As Ah 2c",
        "6s 6h Kd 9c 2s 3d 4h",
        "As Qh 9d 6c 3s 2h 8c",
    ]
    hands = np.array([[card.index for card in evaluate(text).best_five] for text in texts])
    values = [evaluate(text) for text in texts]
    assert [int(r) for r in evaluate_batch(hands)] == [v.rank for v in values]
    assert [v.category.strength for v in values] == list(range(9, -1, -1))


def test_random_hands_are_distinct_cards_and_cover_the_deck():
    hands = random_hands(np.random.default_rng(3), 52_000, 7)
    validate_hands(hands)
    assert hands.min() == 0
    assert hands.max() == 51
    # Each card should appear about 7,000 times; a broken sampler (e.g. never 51) would not.
    frequencies = np.bincount(hands.ravel(), minlength=52)
    assert frequencies.min() > 6_500
    assert frequencies.max() < 7_500


@pytest.mark.parametrize("k", [2, 9, 20])
def test_random_hands_of_other_sizes(k):
    hands = random_hands(np.random.default_rng(k), 2_000, k)
    assert hands.shape == (2_000, k)
    validate_hands(hands)
    assert hands.min() >= 0
    assert hands.max() <= 51


def test_batch_input_is_checked():
    with pytest.raises(ValueError, match="shape"):
        evaluate_batch(np.zeros((3, 4), dtype=int))
    with pytest.raises(ValueError, match=r"0\.\.51"):
        evaluate_batch(np.full((1, 5), 52))
    with pytest.raises(ValueError, match="repeats"):
        validate_hands([[1, 2, 3, 4, 4]])
    validate_hands([[1, 2, 3, 4, 5]])
    with pytest.raises(ValueError, match="5, 6 or 7"):
        enumerate_ranks(4)
