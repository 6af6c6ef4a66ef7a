"""Pay tables as the seeds print them, exact pays, rounding down, "to 1" vs "for 1"."""

from __future__ import annotations

from fractions import Fraction

import pytest

from games.house.rules.paytables import Pay, PayKind, UnknownPayTable
from games.house.rules.registry import games, pay_table, table_numbers


def labels(game: str, wager: str, number: int = 1) -> dict[str, str]:
    return {outcome: pay.label() for outcome, pay in pay_table(game, wager, number).lines}


def test_to_one_returns_stake_plus_winnings():
    assert Pay.to_one(50).pay(10).returned == 510
    assert Pay.to_one(1).pay(7).returned == 14


def test_for_one_returns_n_times_the_stake_stake_included():
    assert Pay.for_one(50).pay(10).returned == 500
    assert Pay.for_one(4).pay(25).returned == 100


def test_push_and_lose():
    assert Pay.push().pay(37).returned == 37
    assert Pay.lose().pay(37).returned == 0
    assert Pay.push().outcome == "push"
    assert Pay.lose().outcome == "lose"


@pytest.mark.parametrize(
    ("stake", "returned", "kept"),
    [(1, 2, Fraction(1, 2)), (2, 5, 0), (3, 7, Fraction(1, 2)), (101, 252, Fraction(1, 2)), (100, 250, 0)],
)
def test_three_to_two_rounds_down_and_records_what_was_kept(stake, returned, kept):
    payout = Pay.to_one(3, 2).pay(stake)
    assert payout.returned == returned
    assert payout.rounding_kept == kept
    assert payout.returned + payout.rounding_kept == Fraction(5, 2) * stake


def test_negative_stake_is_refused():
    with pytest.raises(ValueError, match="negative"):
        Pay.to_one(1).pay(-1)


def test_uth_tables_as_seed_000_prints_them():
    assert labels("uth", "ante_plus") == {
        "royal_flush": "500 to 1",
        "straight_flush": "50 to 1",
        "four_of_a_kind": "10 to 1",
        "full_house": "3 to 1",
        "flush": "3/2 to 1",
        "straight": "1 to 1",
        "three_of_a_kind": "push",
        "two_pair": "push",
        "pair": "push",
        "high_card": "push",
    }
    assert labels("uth", "best_five") == {
        "royal_flush": "50 to 1",
        "straight_flush": "40 to 1",
        "four_of_a_kind": "30 to 1",
        "full_house": "8 to 1",
        "flush": "7 to 1",
        "straight": "4 to 1",
        "three_of_a_kind": "3 to 1",
    }
    assert pay_table("uth", "best_five").pay_for("two_pair").kind is PayKind.LOSE


def test_casino_holdem_tables_as_seed_003_prints_them():
    ante = labels("casino_holdem", "ante")
    assert ante["royal_flush"] == "100 to 1"
    assert ante["straight_flush"] == "20 to 1"
    assert ante["four_of_a_kind"] == "10 to 1"
    assert ante["full_house"] == "3 to 1"
    assert ante["flush"] == "2 to 1"
    assert {ante[c] for c in ("straight", "three_of_a_kind", "two_pair", "pair", "high_card")} == {"1 to 1"}
    assert labels("casino_holdem", "bonus") == {
        "royal_flush": "100 to 1",
        "straight_flush": "50 to 1",
        "four_of_a_kind": "40 to 1",
        "full_house": "30 to 1",
        "flush": "20 to 1",
        "straight": "7 to 1",
        "three_of_a_kind": "7 to 1",
        "two_pair": "7 to 1",
        "pair_of_aces": "7 to 1",
    }


def test_xtreme_tables_as_seed_002_prints_them():
    assert labels("xtreme", "xtra_bonus") == labels("uth", "ante_plus")
    player_bonus = {n: labels("xtreme", "player_bonus", n) for n in (1, 2, 3, 4)}
    assert [player_bonus[n]["full_house"] for n in (1, 2, 3, 4)] == ["9 to 1", "8 to 1", "8 to 1", "7 to 1"]
    assert [player_bonus[n]["flush"] for n in (1, 2, 3, 4)] == ["7 to 1", "6 to 1", "7 to 1", "6 to 1"]
    assert [player_bonus[n]["straight"] for n in (1, 2, 3, 4)] == ["4 to 1", "5 to 1", "4 to 1", "5 to 1"]
    for n in (1, 2, 3, 4):
        assert player_bonus[n]["royal_flush"] == "50 to 1"
        assert player_bonus[n]["straight_flush"] == "40 to 1"
        assert player_bonus[n]["four_of_a_kind"] == "30 to 1"
        assert player_bonus[n]["three_of_a_kind"] == "3 to 1"
    hole = {n: labels("xtreme", "hole_card_bonus", n) for n in (1, 2, 3)}
    assert [hole[n]["pair_of_aces"] for n in (1, 2, 3)] == ["30 to 1", "25 to 1", "30 to 1"]
    assert [hole[n]["pair"] for n in (1, 2, 3)] == ["5 to 1", "5 to 1", "4 to 1"]
    assert {hole[n]["ace_face_suited"] for n in (1, 2, 3)} == {"20 to 1"}
    assert {hole[n]["ace_face"] for n in (1, 2, 3)} == {"10 to 1"}


STAX_AS_PRINTED = {
    # royal diamonds, royal other, SF, quads, full house, flush, straight, trips, two pair
    1: ("star", "spade", "heart", "diamond", "100 for 1", "50 for 1", "25 for 1", "10 for 1", "lose"),
    2: ("star", "star", "spade", "heart", "100 for 1", "50 for 1", "25 for 1", "10 for 1", "lose"),
    3: ("star", "star", "spade", "heart", "diamond", "40 for 1", "30 for 1", "10 for 1", "lose"),
    6: ("star", "star", "spade", "heart", "diamond", "30 for 1", "20 for 1", "10 for 1", "4 for 1"),
    7: ("star", "spade", "heart", "diamond", "60 for 1", "40 for 1", "30 for 1", "15 for 1", "lose"),
    8: ("star", "star", "spade", "heart", "diamond", "50 for 1", "30 for 1", "15 for 1", "lose"),
    9: ("star", "spade", "heart", "diamond", "club", "50 for 1", "30 for 1", "10 for 1", "lose"),
}


@pytest.mark.parametrize("number", sorted(STAX_AS_PRINTED))
def test_stax_tables_as_seed_002_prints_them(number):
    printed = tuple(p.replace(" progressive", "") for p in labels("xtreme", "stax", number).values())
    assert printed == STAX_AS_PRINTED[number]


def test_stax_offers_exactly_tables_1_2_3_6_7_8_9():
    assert table_numbers("xtreme", "stax") == [1, 2, 3, 6, 7, 8, 9]
    with pytest.raises(UnknownPayTable) as refused:
        pay_table("xtreme", "stax", 4)
    assert refused.value.details["available"] == [1, 2, 3, 6, 7, 8, 9]


def test_tables_are_immutable_named_and_versioned():
    table = pay_table("uth", "best_five")
    assert table.name == "uth.best_five.1"
    assert table.version
    with pytest.raises(AttributeError):
        table.number = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        table._index["pair"] = Pay.to_one(1)  # type: ignore[index]
    recorded = table.as_dict()
    assert recorded["lines"][0] == {"outcome": "royal_flush", "kind": "to_one", "ratio": "50", "pool": None}
    assert all(isinstance(t.as_dict()["version"], str) for g in games() for t in g.pay_tables)
