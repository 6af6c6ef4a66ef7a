"""Exact RTPs by enumeration equal the published figures (to their precision)."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import numpy as np
import pytest

from games.cards.batch import enumerate_ranks
from games.house.math.enumeration import (
    FIVE_CARD_COUNTS,
    SEVEN_CARD_COUNTS,
    category_counts,
    counts_from_rank_histogram,
    outcome_counts,
)
from games.house.math.rtp import MainGameWager, RtpReport, rtp_from_counts, wager_rtp
from games.house.rules.paytables import Basis
from games.house.rules.registry import pay_table


def test_best_five_trips_is_96_50_percent_on_the_seven_card_table():
    # The same RTP code the command runs, fed the published 7-card category counts.
    rtp, lines, total = rtp_from_counts(pay_table("uth", "best_five"), SEVEN_CARD_COUNTS)
    assert total == comb(52, 7)
    assert round(float(rtp) * 100, 2) == 96.50
    assert rtp == Fraction(6455243, 6689228)
    assert sum(line.probability for line in lines) == 1


def test_casino_holdem_bonus_is_93_74_percent_by_full_enumeration():
    report = wager_rtp("casino_holdem", "bonus")
    assert report.total == comb(52, 5)
    assert round(float(report.rtp) * 100, 2) == 93.74
    counts = {line.outcome: line.count for line in report.lines}
    # 84,480 five-card hands hold exactly a pair of aces (C(4,2) x C(12,3) x 4^3).
    assert counts["pair_of_aces"] == 6 * comb(12, 3) * 64
    assert counts["pair_of_aces"] + counts["pair"] == FIVE_CARD_COUNTS["pair"]


def test_five_card_enumeration_reproduces_the_known_category_table():
    assert category_counts(outcome_counts(Basis.COMMUNITY_FIVE)) == FIVE_CARD_COUNTS


def test_seven_card_folding_of_a_rank_histogram_on_part_of_the_deck():
    # The 7-card path folds the batch module's rank histogram into categories; run
    # it on the hands whose lowest card index is 38..45 (3,432 hands) and compare
    # with the scalar evaluator's categories of the same hands.
    from itertools import combinations

    from games.cards.cards import Card
    from games.cards.evaluator import evaluate

    folded = counts_from_rank_histogram(Basis.PLAYER_SEVEN, enumerate_ranks(7, first_cards=range(38, 46)))
    brute: dict[str, int] = {}
    for first in range(38, 46):
        for rest in combinations(range(first + 1, 52), 6):
            value = evaluate([Card.from_index(first), *(Card.from_index(i) for i in rest)])
            brute[value.category.value] = brute.get(value.category.value, 0) + 1
    names = list(SEVEN_CARD_COUNTS)
    assert {names[i]: int(folded[i]) for i in range(len(names)) if folded[i]} == brute
    assert int(np.sum(folded)) == sum(comb(51 - c, 6) for c in range(38, 46)) == 3432


@pytest.mark.parametrize("number", [1, 2, 3, 4])
def test_player_bonus_tables_follow_from_the_seven_card_table(number):
    table = pay_table("xtreme", "player_bonus", number)
    rtp, lines, _ = rtp_from_counts(table, SEVEN_CARD_COUNTS)
    by_outcome = {line.outcome: line for line in lines}
    full_house, flush, straight = {1: (9, 7, 4), 2: (8, 6, 5), 3: (8, 7, 4), 4: (7, 6, 5)}[number]
    pays = {
        "royal_flush": 50,
        "straight_flush": 40,
        "four_of_a_kind": 30,
        "full_house": full_house,
        "flush": flush,
        "straight": straight,
        "three_of_a_kind": 3,
    }
    expected = sum(Fraction(SEVEN_CARD_COUNTS[c] * (pay + 1), comb(52, 7)) for c, pay in pays.items())
    assert rtp == expected
    assert by_outcome["two_pair"].return_per_unit == 0


def test_hole_card_bonus_by_hand_count():
    # 1,326 two-card hands: 6 pairs of aces, 12 suited and 36 offsuit ace-face, 72 other pairs.
    report = wager_rtp("xtreme", "hole_card_bonus", 1)
    counts = {line.outcome: line.count for line in report.lines}
    assert counts == {"pair_of_aces": 6, "ace_face_suited": 12, "ace_face": 36, "pair": 72, "none": 1200}
    assert report.rtp == Fraction(6 * 31 + 12 * 21 + 36 * 11 + 72 * 6, 1326)


def stax_rtp(*, star: int) -> RtpReport:
    """The STAX wager's return (table 1) with the Star pool at ``star``, the other pools empty."""
    pools = {pool: Fraction(0) for pool in ("spade", "heart", "diamond", "club")}
    return wager_rtp("xtreme", "stax", 1, pool_values={"star": Fraction(star), **pools})


def test_stax_return_with_and_without_progressives():
    report = stax_rtp(star=0)
    fixed = Fraction(3744 * 100 + 5108 * 50 + 10200 * 25 + 54912 * 10, comb(52, 5))
    assert report.rtp == fixed
    assert report.extra["rtp_including_progressives"] == float(fixed)
    with_pools = stax_rtp(star=1000)
    # Star = royal flush in diamonds: 1 of the 2,598,960 five-card sets.
    assert with_pools.extra["rtp_including_progressives"] == pytest.approx(float(fixed + Fraction(1000, comb(52, 5))))
    assert with_pools.extra["progressive_hit_probabilities"]["star"] == pytest.approx(1 / comb(52, 5))


def test_bonus_spin_return_uses_the_wheel_and_the_fixed_awards():
    from games.house.rules.bonus_spin import Wheel, WheelSegment

    wheel = Wheel("flat", "1", (WheelSegment("10x", 10, 1),))
    report = wager_rtp("xtreme", "bonus_spin", wheel=wheel, bonus_spin_units=1)
    triggers = {
        "royal_flush": (4, 500),
        "straight_flush": (36, 50),
        "four_of_a_kind": (624, 25),
        "full_house": (3744, 10),
        "flush": (5108, 0),
        "straight": (10200, 0),
        "three_of_a_kind": (54912, 0),
    }
    expected = sum(Fraction(n, comb(52, 5)) * (1 + fixed + 10) for n, fixed in triggers.values())
    assert report.rtp == expected


@pytest.mark.parametrize(
    ("game", "wager"),
    [
        ("uth", "ante"),
        ("uth", "ante_plus"),
        ("uth", "call"),
        ("casino_holdem", "ante"),
        ("xtreme", "xtra_bonus"),
        ("xtreme", "play"),
    ],
)
def test_main_game_wagers_need_a_strategy(game, wager):
    with pytest.raises(MainGameWager):
        wager_rtp(game, wager)
