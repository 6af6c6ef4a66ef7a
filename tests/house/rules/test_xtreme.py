"""Xtreme Hold'em settlement (seed 002, RULES.md), hand-picked cards."""

from __future__ import annotations

import functools
from fractions import Fraction

import pytest

from games.cards.cards import parse_cards
from games.cards.shuffle import SeededRandomSource
from games.house.rules.bonus_spin import EXAMPLE_WHEEL, InvalidBonusSpinWager, InvalidWheel, Wheel, WheelSegment
from games.house.rules.definitions import (
    MissingPayTable,
    WheelSpinRequired,
    bonus_spin_triggered,
    resolve_decisions,
    settle_round,
)
from games.house.rules.registry import pay_table
from games.house.rules.xtreme import XTREME
from tests.house.rules.settling import returned, settle_hand

settle = functools.partial(settle_hand, XTREME)


def test_decisions_are_play_4x_3x_2x_1x_or_fold():
    assert [o.name for o in XTREME.decision_point("preflop").options] == ["play4x", "play3x", "check"]
    assert [o.name for o in XTREME.decision_point("flop").options] == ["play2x", "check"]
    assert [o.name for o in XTREME.decision_point("river").options] == ["play1x", "fold"]
    assert resolve_decisions(XTREME, {"preflop": "play3x"}).multiplier == 3


def test_player_wins_dealer_opened():
    # Player flush, dealer pair of queens: Ante 1:1, Play 1:1, X-tra Bonus 3:2.
    s = settle("Ah 2h", "Qs Qd", "Kh 9h 5h 7c 8d", {"preflop": "play4x"}, ante=100)
    assert returned(s) == {"ante": ("win", 200), "xtra_bonus": ("win", 250), "play": ("win", 800)}


def test_xtra_bonus_three_to_two_rounds_down_on_an_odd_stake():
    s = settle("Ah 2h", "Qs Qd", "Kh 9h 5h 7c 8d", {"preflop": "play4x"}, ante=5)
    bonus = s.wager("xtra_bonus")
    assert (bonus.returned, bonus.rounding_kept) == (12, Fraction(1, 2))


def test_dealer_does_not_open_ante_pushes_play_and_xtra_bonus_settle():
    # Player straight (X-tra Bonus 1:1), dealer high card.
    s = settle("5c 6d", "Kc 2s", "7h 8d 9s Jc 3h", {"preflop": "check", "flop": "play2x"}, ante=100)
    assert not s.dealer_qualifies
    assert returned(s) == {"ante": ("push", 100), "xtra_bonus": ("win", 200), "play": ("win", 400)}


def test_xtra_bonus_pushes_on_trips_or_less_and_on_a_tie():
    win_trips = settle("As Ad", "Kc Kd", "Ah 7d 9s 2c 4h", {"preflop": "play4x"}, ante=100)
    assert win_trips.wager("xtra_bonus").outcome == "push"
    tie = settle("2c 3d", "4s 5c", "Ah Kh Qd Jc Ts", {"preflop": "check", "flop": "check", "river": "play1x"}, ante=100)
    assert returned(tie) == {"ante": ("push", 100), "xtra_bonus": ("push", 100), "play": ("push", 100)}


def test_dealer_wins_ante_xtra_bonus_and_play_lose():
    s = settle("As 2d", "Kc Kd", "Ah 7d 9s Kh 4h", {"preflop": "play3x"}, ante=100)
    assert returned(s) == {"ante": ("lose", 0), "xtra_bonus": ("lose", 0), "play": ("lose", 0)}


def test_fold_forfeits_ante_and_xtra_bonus_side_bets_stay_active():
    s = settle(
        "As Ad",
        "Kc Kd",
        "Ah 7d 9s Kh 4h",
        {"river": "fold"},
        ante=100,
        player_bonus=10,
        hole_card_bonus=10,
        stax=10,
    )
    assert returned(s) == {
        "ante": ("lose", 0),
        "xtra_bonus": ("lose", 0),
        "player_bonus": ("win", 40),  # three of a kind 3 to 1
        "hole_card_bonus": ("win", 310),  # pair of aces 30 to 1 (table 1)
        "stax": ("win", 100),  # trips on 2 + flop: 10 for 1
    }


@pytest.mark.parametrize(
    ("board", "player", "returns"),
    [
        # table:            1    2    3    4  (returned for a stake of 10)
        ("Qs Js Ts 2d 3c", "As Ks", (510, 510, 510, 510)),
        ("7h 6h 5h 2d 2c", "9h 8h", (410, 410, 410, 410)),
        ("9c 9s 5h 2d 3c", "9h 9d", (310, 310, 310, 310)),
        ("9c 5s 5h 2d 3c", "9h 9d", (100, 90, 90, 80)),
        ("Kh 9h 5h 7c 8d", "Ah 2h", (80, 70, 80, 70)),
        ("Qh Kd As 2c 3d", "Tc Jd", (50, 60, 50, 60)),
        ("Th 2d 5s 8c Kd", "Tc Td", (40, 40, 40, 40)),
        ("Kh Kd 5s 8c 3d", "Tc Td", (0, 0, 0, 0)),
    ],
)
def test_player_bonus_tables_one_to_four(board, player, returns):
    for number, expected in zip((1, 2, 3, 4), returns, strict=True):
        s = settle(
            player,
            "6c 7d" if "7d" not in board else "6c 4d",
            board,
            {},
            {"player_bonus": number},
            ante=10,
            player_bonus=10,
        )
        assert s.wager("player_bonus").returned == expected, number


@pytest.mark.parametrize(
    ("player", "returns"),
    [
        ("As Ad", (310, 260, 310)),  # pair of aces, the highest outcome only (not also "pair")
        ("Ah Kh", (210, 210, 210)),  # ace and face card suited
        ("Ah Qc", (110, 110, 110)),  # ace and face card
        ("Jc Ad", (110, 110, 110)),  # order does not matter; jack is a face card
        ("7c 7d", (60, 60, 50)),  # pair
        ("Ah Th", (0, 0, 0)),  # a ten is not a face card
        ("Kh Qh", (0, 0, 0)),
    ],
)
def test_hole_card_bonus_tables_one_to_three(player, returns):
    for number, expected in zip((1, 2, 3), returns, strict=True):
        s = settle(
            player,
            "2c 3c",
            "4d 5h 8s 9c Jh" if "Jc" in player else "4d 5h 8s 9c Js",
            {},
            {"hole_card_bonus": number},
            ante=10,
            hole_card_bonus=10,
        )
        assert s.wager("hole_card_bonus").returned == expected, number


def test_stax_royal_in_diamonds_and_in_other_suits_name_their_pools():
    diamonds = settle("Ad Kd", "2c 3c", "Qd Jd Td 4s 5h", {}, {"stax": 1}, {"star": 123_456}, ante=10, stax=10)
    assert (diamonds.wager("stax").progressive, diamonds.wager("stax").returned) == ("star", 123_456)
    spades_1 = settle("As Ks", "2c 3c", "Qs Js Ts 4d 5h", {}, {"stax": 1}, {"spade": 5_000}, ante=10, stax=10)
    assert (spades_1.wager("stax").progressive, spades_1.wager("stax").returned) == ("spade", 5_000)
    spades_2 = settle("As Ks", "2c 3c", "Qs Js Ts 4d 5h", {}, {"stax": 2}, {"star": 9_999}, ante=10, stax=10)
    assert spades_2.wager("stax").progressive == "star"


@pytest.mark.parametrize(
    ("player", "flop", "table", "expected"),
    [
        ("9h 8h", "7h 6h 5h", 1, ("heart", None)),  # straight flush
        ("9h 9d", "9c 9s 5h", 1, ("diamond", None)),  # quads
        ("9h 9d", "9c 5s 5h", 1, (None, 1000)),  # full house 100 for 1
        ("9h 9d", "9c 5s 5h", 9, ("club", None)),  # table 9: full house = Club
        ("Ah 2h", "Kh 9h 5h", 1, (None, 500)),  # flush 50 for 1
        ("Ah 2h", "Kh 9h 5h", 3, (None, 400)),  # flush 40 for 1
        ("Tc Jd", "Qh Kd As", 1, (None, 250)),  # straight 25 for 1
        ("Tc Jd", "Qh Kd As", 6, (None, 200)),  # straight 20 for 1
        ("Tc Td", "Th 2d 5s", 7, (None, 150)),  # trips 15 for 1
        ("Tc Td", "Kh Kd 5s", 6, (None, 40)),  # two pair 4 for 1 (table 6 only)
        ("Tc Td", "Kh Kd 5s", 1, (None, 0)),  # two pair loses elsewhere
        ("Tc Td", "Ah 2d 5s", 6, (None, 0)),  # pair loses
    ],
)
def test_stax_lines_pay_for_one(player, flop, table, expected):
    board = (
        flop
        + " "
        + next(t for t in ("2c 3s", "4c 6s", "7c 8s") if not set(t.split()) & set((player + " " + flop).split()))
    )
    dealer = next(d for d in ("Jc Qc", "Js Qs", "4d 6d") if not set(d.split()) & set((player + " " + board).split()))
    s = settle(player, dealer, board, {}, {"stax": table}, ante=10, stax=10)
    pool, amount = expected
    stax = s.wager("stax")
    assert stax.progressive == pool
    if amount is not None:
        assert stax.returned == amount
        assert stax.outcome == ("win" if amount else "lose")


def test_stax_uses_only_the_two_cards_and_the_flop():
    s = settle("Ah 2h", "Kc Qc", "Kh 9h 5d 7h 8h", {}, {"stax": 1}, ante=10, stax=10)
    assert s.player.category.value == "flush"
    assert s.wager("stax").returned == 0


def test_stax_progressive_hit_without_an_award_returns_nothing_from_the_house():
    s = settle("Ad Kd", "2c 3c", "Qd Jd Td 4s 5h", {}, {"stax": 1}, ante=10, stax=10)
    assert (s.wager("stax").outcome, s.wager("stax").returned) == ("win", 0)


@pytest.mark.parametrize(
    ("board", "units", "fixed"),
    [
        ("As Ks Qs Js Ts", 1, 500),
        ("As Ks Qs Js Ts", 5, 1000),
        ("9h 8h 7h 6h 5h", 2, 100),
        ("9h 9d 9c 9s 5h", 5, 100),
        ("9h 9d 9c 5s 5h", 1, 10),
        ("Ah 2h Kh 9h 5h", 2, 0),
        ("Tc Jd Qh Kd As", 5, 0),
        ("Tc Td Th 2d 5s", 1, 0),
    ],
)
def test_bonus_spin_triggers_pay_fixed_award_plus_wheel(board, units, fixed):
    spin = WheelSegment("20x", 20, 1)
    stake = units * 100
    player = next(p for p in ("2c 3c", "4c 6c", "7c 8c") if not set(p.split()) & set(board.split()))
    dealer = next(d for d in ("2d 3d", "4d 6d", "7d 8d") if not set(d.split()) & set((board + " " + player).split()))
    s = settle(player, dealer, board, {}, spin=spin, ante=100, bonus_spin=stake)
    assert bonus_spin_triggered(parse_cards(board))
    assert s.wager("bonus_spin").returned == stake + fixed * 100 + 20 * stake
    assert s.wager("bonus_spin").wheel == "20x"


def test_bonus_spin_without_trigger_loses_and_needs_no_spin():
    s = settle("2c 3c", "2d 3d", "Kh Kd 5s 8c 4d", {}, ante=100, bonus_spin=200)
    assert returned(s)["bonus_spin"] == ("lose", 0)


def test_bonus_spin_trigger_needs_the_wheel_spin():
    with pytest.raises(WheelSpinRequired):
        settle("2c 3c", "2d 3d", "Kh Kd Ks 8c 4d", {}, ante=100, bonus_spin=100)


@pytest.mark.parametrize("stake", [50, 300, 400, 1000, 150])
def test_bonus_spin_wager_is_exactly_1_2_or_5_units(stake):
    with pytest.raises(InvalidBonusSpinWager):
        settle("2c 3c", "2d 3d", "Kh Kd 5s 8c 4d", {}, ante=100, bonus_spin=stake)


def test_wheel_spin_follows_the_weights_from_the_injected_source():
    wheel = Wheel("w", "1", (WheelSegment("a", 1, 1), WheelSegment("b", 2, 3)))
    rng = SeededRandomSource(7)
    labels = [wheel.spin(rng).label for _ in range(4000)]
    assert 0.70 < labels.count("b") / 4000 < 0.80
    assert EXAMPLE_WHEEL.expected_multiple() > 0
    with pytest.raises(InvalidWheel):
        Wheel("bad", "1", (WheelSegment("a", 1, 0),))


def test_a_side_bet_without_a_pay_table_in_force_is_refused():
    with pytest.raises(MissingPayTable):
        settle_round(
            XTREME,
            tables={"xtra_bonus": pay_table("xtreme", "xtra_bonus")},
            player=parse_cards("2c 3c"),
            dealer=parse_cards("2d 3d"),
            board=parse_cards("Kh Kd 5s 8c 4d"),
            stakes={"ante": 100, "stax": 10},
            decisions={},
        )
