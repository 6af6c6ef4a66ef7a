"""Casino Hold'em settlement (seed 003, RULES.md), hand-picked cards."""

from __future__ import annotations

import functools

import pytest

from games.house.rules.casino_holdem import CASINO_HOLDEM
from games.house.rules.definitions import OptionNotOffered, resolve_decisions
from tests.house.rules.settling import pay_lines, returned, settle_hand

settle = functools.partial(settle_hand, CASINO_HOLDEM)


CALL = {"flop": "call"}


def test_call_is_twice_the_ante_and_fold_is_the_timeout_default():
    s = settle("As Ad", "Kc Kd", "Ah 7d 9s 2c 4h", CALL, ante=100)
    assert s.wager("call").stake == 200
    play = resolve_decisions(CASINO_HOLDEM, {})
    assert play.folded
    assert play.decisions[0].auto
    with pytest.raises(OptionNotOffered):
        resolve_decisions(CASINO_HOLDEM, {"flop": "check"})


def test_dealer_qualifies_player_wins_ante_pays_table_call_even():
    # Player trips aces (1 to 1 on the Ante table), dealer pair of kings.
    s = settle("As Ad", "Kc Kd", "Ah 7d 9s 2c 4h", CALL, ante=100)
    assert s.dealer_qualifies
    assert returned(s) == {"ante": ("win", 200), "call": ("win", 400)}


def test_pair_of_fours_qualifies_pair_of_threes_does_not():
    fours = settle("As Kd", "4c 4d", "Qh 7d 9s 2c 5h", CALL, ante=100)
    assert fours.dealer_qualifies
    threes = settle("As Kd", "3c 3d", "Qh 7d 9s 2c 5h", CALL, ante=100)
    assert not threes.dealer_qualifies


def test_dealer_not_qualified_ante_pays_table_and_call_pushes():
    # Player flush (2 to 1), dealer pair of threes.
    s = settle("Ah 2h", "3c 3d", "Kh 9h 5h 7c 8d", CALL, ante=100)
    assert not s.dealer_qualifies
    assert returned(s) == {"ante": ("win", 300), "call": ("push", 200)}


def test_dealer_not_qualified_ante_pays_even_when_the_dealer_hand_is_better():
    # Player ace high; dealer pair of threes beats it but does not qualify.
    s = settle("Ah 2d", "3c 3d", "Kh 9s 5h 7c Jd", CALL, ante=100)
    assert s.result == "lose"
    assert returned(s) == {"ante": ("win", 200), "call": ("push", 200)}


def test_dealer_wins_qualified_ante_and_call_lose():
    s = settle("Ah 2d", "Kc Kd", "Kh 9s 5h 7c Jd", CALL, ante=100)
    assert returned(s) == {"ante": ("lose", 0), "call": ("lose", 0)}


def test_tie_with_qualified_dealer_pushes_both():
    # Both play the board's two pair with an ace kicker... the board: K K 9 9 A.
    s = settle("2h 3d", "2c 3c", "Kh Ks 9h 9c Ad", CALL, ante=100)
    assert s.result == "tie"
    assert s.dealer_qualifies
    assert returned(s) == {"ante": ("push", 100), "call": ("push", 200)}


def test_fold_loses_the_ante_and_bonus_is_still_settled():
    s = settle("As Ad", "Kc Kd", "Ah 7d 9s 2c 4h", {"flop": "fold"}, ante=100, bonus=10)
    assert returned(s) == {"ante": ("lose", 0), "bonus": ("win", 80)}


@pytest.mark.parametrize(
    ("player", "board", "category", "ante_returned"),
    pay_lines(
        {
            "royal_flush": 100 + 100 * 100,
            "straight_flush": 100 + 20 * 100,
            "four_of_a_kind": 100 + 10 * 100,
            "full_house": 100 + 3 * 100,
            "flush": 100 + 2 * 100,
            "straight": 200,
            "three_of_a_kind": 200,
            "two_pair": 200,
            "pair": 200,
        },
        with_category=True,
    ),
)
def test_every_ante_line_against_a_qualified_dealer(player, board, category, ante_returned):
    dealer = next(d for d in ("4s 4c", "6c 6d", "7d 7s") if not set(d.split()) & set((player + " " + board).split()))
    s = settle(player, dealer, board, CALL, ante=100)
    assert s.player.category.value == category
    assert s.result == "win"
    assert s.dealer_qualifies
    assert s.wager("ante").returned == ante_returned
    assert s.wager("call").returned == 400


def test_high_card_line_pays_one_to_one_when_dealer_does_not_qualify():
    s = settle("Ac Jd", "2s 3s", "Kh 9d 5s 8c 4d", CALL, ante=100)
    assert s.player.category.value == "high_card"
    assert returned(s) == {"ante": ("win", 200), "call": ("push", 200)}


@pytest.mark.parametrize(
    ("player", "board", "bonus_returned"),
    [
        ("As Ks", "Qs Js Ts 2d 3c", 1010),  # royal 100
        ("9h 8h", "7h 6h 5h 2d 3c", 510),  # straight flush 50
        ("9h 9d", "9c 9s 5h 2d 3c", 410),  # quads 40
        ("9h 9d", "9c 5s 5h 2d 3c", 310),  # full house 30
        ("Ah 2h", "Kh 9h 5h 7c 8d", 210),  # flush 20
        ("Tc Jd", "Qh Kd As 2c 3d", 80),  # straight 7
        ("Tc Td", "Th 2d 5s 8c Kd", 80),  # trips 7
        ("Tc Td", "Kh Kd 5s 8c 3d", 80),  # two pair 7
        ("Ac 2d", "Ah 9d 5s 8c 3d", 80),  # pair of aces 7
        ("Kc 2d", "Kh 9d 5s 8c 3d", 0),  # pair of kings loses
        ("Kc 2d", "Jh 9d 5s 8c 3d", 0),  # high card loses
    ],
)
def test_every_bonus_line(player, board, bonus_returned):
    s = settle(player, "6c 7h" if "7h" not in board else "6c 4h", board, {"flop": "fold"}, ante=10, bonus=10)
    assert s.wager("bonus").returned == bonus_returned


def test_bonus_looks_only_at_the_first_five_cards():
    # Turn and river complete a flush, but the first five (2 own + flop) hold nothing.
    s = settle("Ah 2h", "Kc Qc", "Kh 9h 5d 7h 8h", CALL, ante=10, bonus=10)
    assert s.player.category.value == "flush"
    assert s.wager("bonus").outcome == "lose"
