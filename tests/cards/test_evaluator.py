"""Hand evaluation against RULES.md (Common) and seeds 000/001: categories, tie-breaks, best five.

The rank scale is 1..7462, higher is better; the comparisons below are the
rules' own statements, written as "this hand beats / ties that hand".
"""

from __future__ import annotations

import pytest

from games.cards.cards import DuplicateCard, InvalidCard, parse_cards
from games.cards.evaluator import (
    CATEGORIES_BY_STRENGTH,
    Category,
    HandValue,
    category_of_rank,
    evaluate,
    rank7_indices,
    rank_indices,
    rank_of,
)


def value(text: str) -> HandValue:
    return evaluate(text)


@pytest.mark.parametrize(
    ("hand", "category"),
    [
        ("As Ks Qs Js Ts", Category.ROYAL_FLUSH),
        ("9h 8h 7h 6h 5h", Category.STRAIGHT_FLUSH),
        ("5d 4d 3d 2d Ad", Category.STRAIGHT_FLUSH),
        ("7s 7h 7d 7c 2s", Category.FOUR_OF_A_KIND),
        ("Ts Th Td 4c 4s", Category.FULL_HOUSE),
        ("Kc 9c 7c 4c 2c", Category.FLUSH),
        ("9s 8h 7d 6c 5s", Category.STRAIGHT),
        ("As Kh Qd Jc Ts", Category.STRAIGHT),
        ("5s 4h 3d 2c As", Category.STRAIGHT),
        ("Qs Qh Qd 9c 2s", Category.THREE_OF_A_KIND),
        ("Js Jh 4d 4c As", Category.TWO_PAIR),
        ("6s 6h Kd 9c 2s", Category.PAIR),
        ("As Qh 9d 6c 3s", Category.HIGH_CARD),
        ("Ks Qs Js Ts 9s", Category.STRAIGHT_FLUSH),
        ("As 2h 3d 4c 6s", Category.HIGH_CARD),  # ace low only in 5-4-3-2-A
        ("Qs Ks As 2s 3s", Category.FLUSH),  # no wrap-around straight
        ("Qs Kh Ad 2c 3s", Category.HIGH_CARD),
    ],
)
def test_every_category(hand, category):
    assert value(hand).category is category


def test_categories_are_ordered_as_the_rules_list_them():
    # Royal flush > straight flush > quads > full house > flush > straight > trips > two pair > pair > high card.
    ladder = [
        "As Ks Qs Js Ts",
        "9h 8h 7h 6h 5h",
        "2s 2h 2d 2c 3s",
        "2s 2h 2d 3c 3s",
        "7c 5c 4c 3c 2c",
        "5s 4h 3d 2c As",
        "2s 2h 2d 4c 3s",
        "3s 3h 2d 2c 4s",
        "2s 2h 5d 4c 3s",
        "As Kh Qd Jc 9s",
    ]
    ranks = [value(hand).rank for hand in ladder]
    assert ranks == sorted(ranks, reverse=True)
    assert len(set(ranks)) == len(ranks)
    assert [value(hand).category.strength for hand in ladder] == list(range(9, -1, -1))


@pytest.mark.parametrize(
    ("better", "worse"),
    [
        # straight flush and straight: by the top card; the wheel is the lowest.
        ("Ts 9s 8s 7s 6s", "9h 8h 7h 6h 5h"),
        ("6d 5d 4d 3d 2d", "5s 4s 3s 2s As"),
        ("6s 5h 4d 3c 2s", "5s 4h 3d 2c As"),
        ("As Kh Qd Jc Ts", "Ks Qh Jd Tc 9s"),
        # quads by rank, then kicker.
        ("3s 3h 3d 3c 2s", "2s 2h 2d 2c As"),
        ("9s 9h 9d 9c Ks", "9s 9h 9d 9c Qs"),
        # full house by trips, then pair.
        ("3s 3h 3d 2c 2s", "2s 2h 2d As Ah"),
        ("Ks Kh Kd 5c 5s", "Ks Kh Kd 4c 4s"),
        # flush card by card.
        ("Ah 9h 7h 4h 3h", "Kh Qh Jh 9h 7h"),
        ("Ah Kh 7h 4h 3h", "Ad Kd 7d 4d 2d"),
        ("Ah Kh Qh Jh 9h", "Ah Kh Qh Jh 8h"),
        # trips then two kickers.
        ("4s 4h 4d 3c 2s", "3s 3h 3d Ac Ks"),
        ("8s 8h 8d Ac 3s", "8s 8h 8d Kc Qs"),
        ("8s 8h 8d Ac 4s", "8s 8h 8d Ac 3s"),
        # two pair: high pair, low pair, kicker.
        ("Ks Kh 3d 3c 2s", "Qs Qh Jd Jc As"),
        ("Ks Kh 4d 4c 2s", "Ks Kh 3d 3c As"),
        ("Ks Kh 4d 4c 6s", "Ks Kh 4d 4c 5s"),
        # pair then three kickers.
        ("3s 3h 4d 5c 7s", "2s 2h Ad Kc Qs"),
        ("Js Jh Ad 5c 4s", "Js Jh Kd Qc Ts"),
        ("Js Jh Ad Kc 4s", "Js Jh Ad Qc Ts"),
        ("Js Jh Ad Kc 5s", "Js Jh Ad Kc 4s"),
        # high card card by card, down to the fifth.
        ("As 6h 4d 3c 2s", "Ks Qh Jd Tc 8s"),
        ("As Kh Qd Jc 9s", "As Kh Qd Jc 8s"),
        ("As Kh Qd Jc 3s", "As Kh Qd Jc 2s"),
        ("8s 6h 4d 3c 2s", "7s 6h 5d 4c 2s"),
    ],
)
def test_tie_breaks(better, worse):
    assert value(better) > value(worse)
    assert value(better).category is value(worse).category


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("As Ks Qs Js Ts", "Ah Kh Qh Jh Th"),  # suits never break ties
        ("9s 8h 7d 6c 5s", "9h 8d 7c 6s 5h"),
        ("5s 4h 3d 2c As", "5h 4d 3c 2s Ah"),
        ("Ah 9h 7h 4h 3h", "As 9s 7s 4s 3s"),
        ("Ks Kh 4d 4c 6s", "Kd Kc 4s 4h 6h"),
        # seven cards: the same best five ties whatever the two unused cards.
        ("As Ad Kc Kh Qs 3d 2c", "Ah Ac Ks Kd Qh 7c 4s"),
        ("Ts 9h 8d 7c 6s 2h 2d", "Th 9s 8c 7d 6h Ac 2c"),
        # the board plays for both: five community cards are the best five.
        ("2c 3h As Ks Qs Js Ts", "4d 5d As Ks Qs Js Ts"),
    ],
)
def test_identical_five_card_values_tie(left, right):
    assert value(left) == value(right)
    assert value(left).rank == value(right).rank
    assert hash(value(left)) == hash(value(right))


def test_rank_scale_ends():
    assert value("As Ks Qs Js Ts").rank == 7462
    assert value("7s 5h 4d 3c 2s").rank == 1
    assert value("7s 5s 4s 3s 2s").category is Category.FLUSH


@pytest.mark.parametrize(
    ("hand", "best_five", "category"),
    [
        ("As Ks Qs Js Ts 2c 3d", "As Ks Qs Js Ts", Category.ROYAL_FLUSH),
        ("Ah 2d 3c 4s 5h 9c 9d", "5h 4s 3c 2d Ah", Category.STRAIGHT),
        ("Ac 2c 3c 4c 5c 6d Kc", "5c 4c 3c 2c Ac", Category.STRAIGHT_FLUSH),
        ("Ac 2c 3c 4c 5c 6c Kc", "6c 5c 4c 3c 2c", Category.STRAIGHT_FLUSH),
        ("Kh Kd 9s 9c 9h 2s 2d", "9s 9h 9c Kh Kd", Category.FULL_HOUSE),
        ("Kh Kd Ks 9c 9h 9s 2d", "Ks Kh Kd 9s 9h", Category.FULL_HOUSE),
        ("7s 7h 7d 7c As Ad Ah", "7s 7h 7d 7c As", Category.FOUR_OF_A_KIND),
        ("Ah Ad Kc Ks Qd Qh 2c", "Ah Ad Ks Kc Qh", Category.TWO_PAIR),
        ("2h 4h 6h 8h Th Qh Ac", "Qh Th 8h 6h 4h", Category.FLUSH),
        ("Td Js Qh Kc Ad 9s 8h", "Ad Kc Qh Js Td", Category.STRAIGHT),
        ("Qs Qh Qd 9c 2s 3h 7d", "Qs Qh Qd 9c 7d", Category.THREE_OF_A_KIND),
        ("6s 6h Kd 9c 2s 3h 4h", "6s 6h Kd 9c 4h", Category.PAIR),
        ("As Qh 9d 6c 3s 2h 4d", "As Qh 9d 6c 4d", Category.HIGH_CARD),
        ("8h 8d 5c 5s 4h", "8h 8d 5s 5c 4h", Category.TWO_PAIR),
        ("9d 8d 7d 6d 5d 4d", "9d 8d 7d 6d 5d", Category.STRAIGHT_FLUSH),
    ],
)
def test_best_five_are_shown_in_order_of_significance(hand, best_five, category):
    result = value(hand)
    assert result.category is category
    assert [str(card) for card in result.best_five] == best_five.split()
    assert evaluate(best_five).rank == result.rank
    assert set(result.best_five) <= set(parse_cards(hand))


def test_six_and_seven_cards_take_the_best_five():
    assert value("2s 2h 9d 9c 5s 5h").category is Category.TWO_PAIR
    assert value("2s 2h 9d 9c 5s 5h") == value("9d 9c 5s 5h 2s")
    assert value("2s 2h 2d 9c 9s 9h 3c").best_five[0].rank == 9  # two trips: the higher is the trips
    assert value("Ks Kh Kd Kc 3s 3h 3d") == value("Ks Kh Kd Kc 3s")


def test_rank_of_and_index_paths_agree_with_evaluate():
    for text in ["As Ks Qs Js Ts 2c 3d", "5d 4d 3d 2d Ad", "Kh Kd 9s 9c 9h 2s", "As Qh 9d 6c 3s 2h 4d"]:
        cards = parse_cards(text)
        expected = evaluate(cards).rank
        assert rank_of(cards) == expected
        assert rank_indices([card.index for card in cards]) == expected
        if len(cards) == 7:
            assert rank7_indices(*(card.index for card in cards)) == expected


def test_category_of_rank_follows_the_class_counts():
    # Distinct five-card values per category (standard counts: 1277 high card .. 1 royal flush).
    sizes = {
        Category.HIGH_CARD: 1277,
        Category.PAIR: 2860,
        Category.TWO_PAIR: 858,
        Category.THREE_OF_A_KIND: 858,
        Category.STRAIGHT: 10,
        Category.FLUSH: 1277,
        Category.FULL_HOUSE: 156,
        Category.FOUR_OF_A_KIND: 156,
        Category.STRAIGHT_FLUSH: 9,
        Category.ROYAL_FLUSH: 1,
    }
    seen: dict[Category, int] = {}
    for rank in range(1, 7463):
        seen[category_of_rank(rank)] = seen.get(category_of_rank(rank), 0) + 1
    assert seen == sizes
    assert [c.value for c in CATEGORIES_BY_STRENGTH[::-1]] == [
        "royal_flush",
        "straight_flush",
        "four_of_a_kind",
        "full_house",
        "flush",
        "straight",
        "three_of_a_kind",
        "two_pair",
        "pair",
        "high_card",
    ]
    for bad in (0, 7463):
        with pytest.raises(ValueError, match="outside"):
            category_of_rank(bad)


def test_bad_input_is_refused():
    with pytest.raises(InvalidCard):
        evaluate("As Ks Qs Js Tx")
    with pytest.raises(DuplicateCard):
        evaluate("As Ks Qs Js As")
    for size in ("As Ks Qs Js", "As Ks Qs Js Ts 9s 8s 7s"):
        with pytest.raises(ValueError, match="5, 6 or 7"):
            evaluate(size)


def test_best_five_of_random_hands_make_the_hand_value():
    from itertools import combinations

    from games.cards.shuffle import SeededRandomSource, shuffled_deck

    source = SeededRandomSource(99)
    for _ in range(3000):
        for size in (6, 7):
            hand = shuffled_deck(source)[:size]
            result = evaluate(hand)
            assert len(set(result.best_five)) == 5
            assert set(result.best_five) <= set(hand)
            assert rank_of(result.best_five) == result.rank
            assert result.rank == max(rank_of(five) for five in combinations(hand, 5))
