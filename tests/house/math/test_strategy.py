"""The documented strategies do what docs/game-math.md says, on hand-picked cards."""

from __future__ import annotations

import numpy as np
import pytest

from games.cards.cards import parse_cards
from games.cards.evaluator import rank_of
from games.house.math.strategy import (
    ch_call,
    ch_call_table,
    dealer_outs,
    flop_keys,
    flop_raise,
    preflop_raise,
    river_call,
    straight_draw,
    suit_class,
)


def idx(text: str) -> np.ndarray:
    return np.array([[c.index for c in parse_cards(text)]], dtype=np.int64)


@pytest.mark.parametrize(
    ("hand", "raise_4x"),
    [
        ("3c 3d", True),
        ("2c 2d", False),
        ("Ah 2c", True),
        ("Ks 2s", True),
        ("Kd 4c", False),
        ("Kd 5c", True),
        ("Qs 6s", True),
        ("Qs 5s", False),
        ("Qd 8c", True),
        ("Qd 7c", False),
        ("Js 8s", True),
        ("Js 7s", False),
        ("Jd Tc", True),
        ("Jd 9c", False),
        ("Td 9d", False),
    ],
)
def test_uth_preflop(hand, raise_4x):
    assert bool(preflop_raise(idx(hand))[0]) is raise_4x


@pytest.mark.parametrize(
    ("hand", "flop", "raise_2x"),
    [
        ("Kc 7d", "Kh 7s 2c", True),  # two pair with both hole cards
        ("9c 4d", "9h 9s 2c", True),  # trips with a hole card
        ("9c 4d", "Kh Ks Kc", False),  # trips on the board only
        ("9c 4d", "9h Ks 2c", True),  # hidden pair
        ("2c 2d", "Kh 9s 5c", False),  # pocket deuces
        ("Th 3c", "Ah 7h 2h", True),  # four to a flush with a hidden ten
        ("9h 3c", "Ah 7h 2h", False),  # four to a flush, hidden nine
        ("9c 4d", "Kh Ks 2c", False),  # the board's pair only
        ("Tc 4d", "Kh 8s 2c", False),
    ],
)
def test_uth_flop(hand, flop, raise_2x):
    assert bool(flop_raise(idx(hand), idx(flop))[0]) is raise_2x


def test_dealer_outs_count_cards_that_beat_the_player():
    # T3 on A Q 8 6 4: the dealer beats T-high with any of 15 pairing cards, any K or J
    # (8); a ten only ties (not an out).
    player, board = idx("Tc 3d"), idx("As Qh 8d 6c 4s")
    rank = np.array([rank_of(parse_cards("Tc 3d As Qh 8d 6c 4s"))])
    assert int(dealer_outs(player, board, rank)[0]) == 23
    assert not river_call(player, board, rank)[0]
    # Q-J on the same board: only the 15 pairing cards and the kings beat it.
    player = idx("Qc Jd")
    rank = np.array([rank_of(parse_cards("Qc Jd As Qh 8d 6c 4s"))])
    assert river_call(player, board, rank)[0]  # hidden pair
    player = idx("Kc Jd")
    rank = np.array([rank_of(parse_cards("Kc Jd As Qh 8d 6c 4s"))])
    assert int(dealer_outs(player, board, rank)[0]) == 15
    assert river_call(player, board, rank)[0]


def test_straight_and_flush_pictures():
    assert straight_draw(idx("9c 8d 7h 6s 2c"))[0] == 2
    assert straight_draw(idx("9c 8d 7h 5s 2c"))[0] == 1
    assert straight_draw(idx("Ac 2d 3h 4s 9c"))[0] == 1  # A-2-3-4 needs a five only
    assert straight_draw(idx("5c 2d 3h 4s 9c"))[0] == 2  # 2-3-4-5: an ace or a six
    assert straight_draw(idx("Ac Kd Qh Js 2c"))[0] == 1  # needs a ten only
    assert straight_draw(idx("Ac Kd 7h 4s 2c"))[0] == 0
    assert suit_class(idx("Ah 2h"), idx("Kh 9h 5h"))[0] == 4
    assert suit_class(idx("Ah 2c"), idx("Kh 9h 5c"))[0] == 1
    assert suit_class(idx("Ah 2h"), idx("Kh 9c 5c"))[0] == 2
    assert suit_class(idx("Ah 2c"), idx("Kh 9h 5h"))[0] == 3
    assert suit_class(idx("2c 3d"), idx("Kh 9h 5h"))[0] == 5
    assert suit_class(idx("2c 3d"), idx("Kh 9s 5h"))[0] == 0


@pytest.mark.parametrize(
    ("hand", "flop", "call"),
    [
        ("7c 2d", "7h Ks 9c", True),  # pair with a hole card
        ("Ah 3h", "Kh 8h 2c", True),  # four-flush
        ("9c 8d", "7h 6s 2c", True),  # open-ended
        ("Kc 3d", "Qh 8s 5c", True),  # a king in the hand
        ("Jc Td", "9h 6s 2c", True),  # two overcards
        ("7c 2d", "Kh Qs 9c", False),
    ],
)
def test_casino_holdem_simple_rules(hand, flop, call):
    assert bool(ch_call(idx(hand), idx(flop))[0]) is call


def test_casino_holdem_table_calls_the_obvious_and_folds_the_hopeless():
    table = ch_call_table()
    assert table.calls(idx("As Ad"), idx("Ah 7d 2c"))[0]
    assert table.calls(idx("Kc Kd"), idx("Ah 7d 2c"))[0]
    assert not table.calls(idx("3c 2d"), idx("Ah Kd 9s"))[0]
    fine, coarse = flop_keys(idx("3c 2d"), idx("Ah Kd 9s"))
    assert 0 <= fine[0] < len(table.fine)
    assert 0 <= coarse[0] < len(table.coarse)
