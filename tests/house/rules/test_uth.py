"""Ultimate Texas Hold'em settlement, every branch of RULES.md, with hand-picked cards."""

from __future__ import annotations

import functools
from fractions import Fraction

import pytest

from games.house.rules.definitions import (
    DecisionAfterCall,
    InvalidCards,
    InvalidStake,
    MissingRequiredWager,
    OptionNotOffered,
    UnknownWager,
    resolve_decisions,
)
from games.house.rules.uth import UTH
from tests.house.rules.settling import pay_lines, returned, settle_hand

settle = functools.partial(settle_hand, UTH)


def test_player_wins_against_a_qualified_dealer():
    # Player trips aces, dealer a pair of kings (qualifies); call 4x.
    s = settle("As Ad", "Kc Kd", "Ah 7d 9s 2c 4h", {"preflop": "call4x"}, ante=100)
    assert s.result == "win"
    assert s.dealer_qualifies
    assert returned(s) == {
        "ante": ("win", 200),
        "ante_plus": ("push", 100),  # three of a kind or less pushes
        "call": ("win", 800),
    }
    assert s.net == 500


def test_player_wins_dealer_not_qualified_ante_pushes():
    s = settle("As Kd", "2c 3c", "Ah 7d 9s Jc 4h", {"preflop": "check", "flop": "call2x"}, ante=100)
    assert s.result == "win"
    assert not s.dealer_qualifies
    assert returned(s) == {"ante": ("push", 100), "ante_plus": ("push", 100), "call": ("win", 400)}


def test_ante_plus_pays_its_table_even_when_dealer_does_not_qualify():
    # Player straight (5-9), dealer high card.
    s = settle("5c 6d", "Kc 2s", "7h 8d 9s Jc 3h", {"preflop": "check", "flop": "call2x"}, ante=100)
    assert not s.dealer_qualifies
    assert returned(s) == {"ante": ("push", 100), "ante_plus": ("win", 200), "call": ("win", 400)}


@pytest.mark.parametrize(
    ("player", "board", "category", "ante_plus_returned"),
    pay_lines(
        {
            "royal_flush": 100 + 500 * 100,
            "straight_flush": 100 + 50 * 100,
            "four_of_a_kind": 100 + 10 * 100,
            "full_house": 100 + 3 * 100,
            "flush": 100 + 150,
            "straight": 100 + 100,
            "three_of_a_kind": 100,
            "two_pair": 100,
        },
        with_category=True,
    ),
)
def test_every_ante_plus_line_when_the_player_wins(player, board, category, ante_plus_returned):
    # Dealer holds two low cards that make at most a pair with the board and lose.
    dealer = next(d for d in ("2s 3s", "4c 6c", "4d 7d") if not set(d.split()) & set((player + " " + board).split()))
    s = settle(player, dealer, board, {"preflop": "call4x"}, ante=100)
    assert s.player.category.value == category
    assert s.result == "win"
    assert s.wager("ante_plus").returned == ante_plus_returned


def test_flush_three_to_two_on_an_odd_stake_rounds_down_and_keeps_the_half():
    s = settle("Ah 2h", "Qs Qd", "Kh 9h 5h 7c 8d", {"preflop": "call4x"}, ante=101)
    plus = s.wager("ante_plus")
    assert plus.outcome == "win"
    assert plus.returned == 252  # 101 + 151.5 rounded down
    assert plus.rounding_kept == Fraction(1, 2)
    assert s.wager("ante").returned == 202
    assert s.wager("call").returned == 808


def test_dealer_wins_qualified_everything_main_loses():
    s = settle("As 2d", "Kc Kd", "Ah 7d 9s Kh 4h", {"preflop": "check", "flop": "check", "river": "call1x"}, ante=100)
    assert s.result == "lose"
    assert returned(s) == {"ante": ("lose", 0), "ante_plus": ("lose", 0), "call": ("lose", 0)}


def test_dealer_wins_without_qualifying_ante_pushes_but_call_and_ante_plus_lose():
    # Both high card; dealer's ace-king beats the player's ace-jack.
    s = settle("3c 2d", "Kd Qc", "Ah 9s 7d 5c Jh", {"preflop": "check", "flop": "check", "river": "call1x"}, ante=100)
    assert s.result == "lose"
    assert not s.dealer_qualifies
    assert returned(s) == {"ante": ("push", 100), "ante_plus": ("lose", 0), "call": ("lose", 0)}


def test_tie_pushes_ante_ante_plus_and_call():
    # The board's straight plays for both.
    s = settle("2c 3d", "4s 5c", "Ah Kh Qd Jc Ts", {"preflop": "check", "flop": "check", "river": "call1x"}, ante=100)
    assert s.result == "tie"
    assert returned(s) == {"ante": ("push", 100), "ante_plus": ("push", 100), "call": ("push", 100)}


def test_fold_loses_ante_and_ante_plus_and_best_five_still_pays():
    # Player folds trips made on the board; Best Five pays three of a kind 3 to 1.
    s = settle(
        "2c 3d",
        "Ks Kc",
        "9h 9s 9d Jc 5h",
        {"preflop": "check", "flop": "check", "river": "fold"},
        ante=100,
        best_five=50,
    )
    assert s.result == "fold"
    assert returned(s) == {"ante": ("lose", 0), "ante_plus": ("lose", 0), "best_five": ("win", 200)}
    assert s.net == -250 + 200


def test_best_five_wins_even_when_the_dealer_wins():
    # Seed 000's "any side bets are lost" when the dealer wins is NOT implemented (RULES.md).
    # Player trips nines, dealer aces full of nines.
    s = settle("9d 3d", "As Ac", "9h 9s Ad Jc 5h", {"preflop": "call3x"}, ante=10, best_five=10)
    assert s.result == "lose"
    assert s.wager("best_five").returned == 40


def test_ante_loses_to_a_qualified_dealer_holding_less_than_a_straight():
    # Seed 004's "ante returned if the dealer has less than a straight" is NOT implemented.
    s = settle("2c 3d", "Kc Kd", "9h 8s Ad Jc 5h", {"preflop": "call3x"}, ante=10)
    assert s.wager("ante").outcome == "lose"


@pytest.mark.parametrize(
    ("player", "board", "returned_for_10"),
    pay_lines(
        {
            "royal_flush": 510,
            "straight_flush": 410,
            "four_of_a_kind": 310,
            "full_house": 90,
            "flush": 80,
            "straight": 50,
            "three_of_a_kind": 40,
            "two_pair": 0,
            "high_card": 0,
        }
    ),
)
def test_every_best_five_line(player, board, returned_for_10):
    dealer = next(d for d in ("2s 3s", "4c 6c", "7d 7s") if not set(d.split()) & set((player + " " + board).split()))
    s = settle(player, dealer, board, {"preflop": "call4x"}, ante=10, best_five=10)
    assert s.wager("best_five").returned == returned_for_10


def test_call_sizes_per_street():
    board = "Ah 7d 9s 2c 4h"
    for decisions, call in [
        ({"preflop": "call4x"}, 400),
        ({"preflop": "call3x"}, 300),
        ({"preflop": "check", "flop": "call2x"}, 200),
        ({"preflop": "check", "flop": "check", "river": "call1x"}, 100),
    ]:
        s = settle("As Ad", "Kc Kd", board, decisions, ante=100)
        assert s.wager("call").stake == call


def test_missing_decisions_take_the_timeout_defaults():
    play = resolve_decisions(UTH, {})
    assert [(d.street, d.option, d.auto) for d in play.decisions] == [
        ("preflop", "check", True),
        ("flop", "check", True),
        ("river", "fold", True),
    ]
    assert play.folded
    s = settle("As Ad", "Kc Kd", "Ah 7d 9s 2c 4h", {}, ante=100)
    assert s.result == "fold"
    play = resolve_decisions(UTH, {"preflop": "check"})
    assert [d.auto for d in play.decisions] == [False, True, True]


def test_one_call_per_round():
    with pytest.raises(DecisionAfterCall):
        resolve_decisions(UTH, {"preflop": "call4x", "flop": "call2x"})
    with pytest.raises(DecisionAfterCall):
        resolve_decisions(UTH, {"flop": "call2x", "river": "fold"})


@pytest.mark.parametrize(
    "decisions",
    [{"preflop": "call2x"}, {"flop": "call4x"}, {"river": "check"}, {"turn": "call1x"}, {"preflop": "fold"}],
)
def test_options_not_offered_are_refused(decisions):
    with pytest.raises(OptionNotOffered):
        resolve_decisions(UTH, decisions)


def test_stake_validation():
    with pytest.raises(MissingRequiredWager):
        settle("As Ad", "Kc Kd", "Ah 7d 9s 2c 4h", {}, best_five=10)
    with pytest.raises(InvalidStake):
        settle("As Ad", "Kc Kd", "Ah 7d 9s 2c 4h", {}, ante=0)
    with pytest.raises(InvalidStake):
        settle("As Ad", "Kc Kd", "Ah 7d 9s 2c 4h", {}, ante=100, ante_plus=50)
    with pytest.raises(InvalidStake):
        settle("As Ad", "Kc Kd", "Ah 7d 9s 2c 4h", {}, ante=100, call=400)
    with pytest.raises(UnknownWager):
        settle("As Ad", "Kc Kd", "Ah 7d 9s 2c 4h", {}, ante=100, bonus=5)


def test_cards_must_be_two_two_five_and_distinct():
    with pytest.raises(InvalidCards):
        settle("As Ad", "As Kd", "Ah 7d 9s 2c 4h", {}, ante=100)
    with pytest.raises(InvalidCards):
        settle("As Ad", "Kc Kd", "Ah 7d 9s 2c", {}, ante=100)


def test_definition_lists_wagers_and_decisions_as_the_rules_say():
    body = UTH.as_dict()
    assert [(w["name"], w["kind"]) for w in body["wagers"]] == [
        ("ante", "required"),
        ("ante_plus", "automatic"),
        ("best_five", "optional"),
        ("call", "decision"),
    ]
    assert [(d["street"], [o["name"] for o in d["options"]], d["timeout_default"]) for d in body["decisions"]] == [
        ("preflop", ["call4x", "call3x", "check"], "check"),
        ("flop", ["call2x", "check"], "check"),
        ("river", ["call1x", "fold"], "fold"),
    ]
    assert body["dealer_qualifies"] == "pair or better"
