"""Seed 001's rake table and the button rules."""

from __future__ import annotations

import pytest

from games.poker.engine import errors
from games.poker.engine.button import deal_draw, draw_for_button, next_button
from games.poker.engine.rules import RakeRule, Variant, allocate_rake, seed_rake_rule

FIXED, POT, NO = Variant.FIXED_LIMIT, Variant.POT_LIMIT, Variant.NO_LIMIT


@pytest.mark.parametrize(
    ("variant", "players", "small_blind", "minimum", "cap"),
    [
        (FIXED, 2, 50, 0, 300),  # small blind 0 - 0.50 euro
        (FIXED, 10, 51, 2, 300),  # 0.51 - 10 euro: minimum 0.02
        (FIXED, 6, 1000, 2, 300),
        (FIXED, 6, 1001, 0, 300),  # > 10 euro
        (POT, 2, 5, 0, 100),
        (POT, 3, 5, 0, 100),
        (POT, 4, 5, 0, 200),
        (POT, 5, 5, 0, 200),
        (POT, 6, 5, 0, 300),
        (POT, 10, 5, 0, 300),
        (NO, 3, 5, 0, 100),
        (NO, 4, 5, 0, 200),
        (NO, 10, 5, 0, 300),
    ],
)
def test_seed_001_rake_rows(variant: Variant, players: int, small_blind: int, minimum: int, cap: int) -> None:
    assert seed_rake_rule(variant, players=players, small_blind=small_blind) == RakeRule(250, minimum, cap, True)


def test_other_currencies_use_the_default_row() -> None:
    assert seed_rake_rule(NO, players=2, small_blind=5, currency="USD") == RakeRule(250, 0, 300, True)


def test_rake_amount_rounds_down_has_minimum_cap_and_no_flop_no_drop() -> None:
    rule = RakeRule(250, 2, 300)
    assert rule.amount(399, flop_seen=True) == 9  # 9.975
    assert rule.amount(40, flop_seen=True) == 2  # 1.0, raised to the minimum
    assert rule.amount(1, flop_seen=True) == 1  # never more than the pot
    assert rule.amount(1_000_000, flop_seen=True) == 300
    assert rule.amount(10_000, flop_seen=False) == 0
    assert RakeRule(250, 0, 300, no_flop_no_drop=False).amount(10_000, flop_seen=False) == 250


def test_rake_is_split_over_pots_in_proportion() -> None:
    assert allocate_rake(10, [100, 300, 600]) == (1, 3, 6)
    assert allocate_rake(1, [32, 35, 8]) == (0, 1, 0)  # the largest remainder
    assert allocate_rake(2, [50, 50, 50]) == (1, 1, 0)  # ties go to the earlier pot
    shares = allocate_rake(299, [3, 10_000, 77])
    assert sum(shares) == 299
    assert shares[0] == 0


def test_button_draw_highest_card_then_suit_order() -> None:
    assert draw_for_button({1: "Kc", 2: "As", 3: "Qh"}) == 2
    assert draw_for_button({1: "Th", 2: "Ts", 3: "Td", 4: "Tc"}) == 2  # spades
    assert draw_for_button({1: "Th", 3: "Td", 4: "Tc"}) == 1  # hearts
    assert draw_for_button({3: "Td", 4: "Tc"}) == 3  # diamonds over clubs
    with pytest.raises(errors.InvalidCards):
        draw_for_button({1: "Ts", 2: "Ts"})
    with pytest.raises(errors.InvalidHandSetup):
        draw_for_button({1: "Ts"})
    assert deal_draw([5, 2, 9], ["2c", "As", "Kd"]) == {2: "2c", 5: "As", 9: "Kd"}


def test_button_always_moves_to_the_next_player_dealt_in() -> None:
    assert next_button(3, [1, 3, 5, 8]) == 5
    assert next_button(8, [1, 3, 5, 8]) == 1  # wraps round
    assert next_button(3, [1, 8, 9]) == 8  # seat 3 left: the button still moves on
    assert next_button(5, [1, 3, 8]) == 8  # seat 5 sits out: skipped
    with pytest.raises(errors.InvalidHandSetup):
        next_button(1, [2])
