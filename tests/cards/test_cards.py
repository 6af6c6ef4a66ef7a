"""Card notation, parsing errors and the deck (RULES.md: one standard 52-card deck)."""

from __future__ import annotations

import copy
import pickle

import pytest

from casino.errors import DomainError
from games.cards.cards import FULL_DECK, Card, CardError, DuplicateCard, InvalidCard, parse_card, parse_cards


def test_full_deck_is_52_distinct_cards_in_index_order():
    assert len(FULL_DECK) == 52
    assert len(set(FULL_DECK)) == 52
    assert [card.index for card in FULL_DECK] == list(range(52))
    assert {(card.rank, card.suit) for card in FULL_DECK} == {(r, s) for r in range(2, 15) for s in "shdc"}


@pytest.mark.parametrize(
    ("text", "rank", "suit"),
    [
        ("As", 14, "s"),
        ("Kh", 13, "h"),
        ("Qd", 12, "d"),
        ("Jc", 11, "c"),
        ("Td", 10, "d"),
        ("9c", 9, "c"),
        ("2s", 2, "s"),
    ],
)
def test_parse_and_print_round_trip(text, rank, suit):
    card = parse_card(text)
    assert (card.rank, card.suit) == (rank, suit)
    assert str(card) == text
    assert Card.from_index(card.index) is card
    assert Card(rank, suit) is card


@pytest.mark.parametrize(
    ("text", "canonical"), [("as", "As"), ("AS", "As"), ("10h", "Th"), ("tD", "Td"), (" 9c ", "9c")]
)
def test_lenient_input_prints_canonically(text, canonical):
    assert str(parse_card(text)) == canonical


@pytest.mark.parametrize("text", ["", "A", "1s", "Ax", "Ass", "11h", "Zs", "sA", "10", "🂡", "A s"])
def test_bad_notation_is_refused_with_a_clear_code(text):
    with pytest.raises(InvalidCard) as info:
        parse_card(text)
    assert info.value.code == "invalid_card"
    assert isinstance(info.value, CardError)
    assert isinstance(info.value, DomainError)


@pytest.mark.parametrize("value", [None, 14, b"As"])
def test_non_text_is_refused(value):
    with pytest.raises(InvalidCard):
        parse_card(value)


def test_parse_cards_accepts_text_and_iterables():
    expected = (parse_card("As"), parse_card("Kd"), parse_card("Tc"))
    assert parse_cards("As Kd Tc") == expected
    assert parse_cards("As,Kd, Tc") == expected
    assert parse_cards(["As", "Kd", "Tc"]) == expected
    assert parse_cards([parse_card("As"), "Kd", "Tc"]) == expected
    assert parse_cards("") == ()


def test_duplicate_cards_are_refused_and_named():
    with pytest.raises(DuplicateCard) as info:
        parse_cards("As Kd as Kd 2c")
    assert info.value.code == "duplicate_card"
    assert set(info.value.details["cards"]) == {"As", "Kd"}


def test_bad_card_inside_a_list_is_refused():
    with pytest.raises(InvalidCard):
        parse_cards(["As", "Kx"])


def test_card_is_immutable_hashable_and_singleton():
    card = parse_card("Ah")
    with pytest.raises(AttributeError):
        card.rank = 2  # type: ignore[misc]
    assert {card: 1}[Card(14, "h")] == 1
    assert pickle.loads(pickle.dumps(card)) is card
    assert copy.deepcopy(card) is card
    assert parse_card("2s") < parse_card("2c") < parse_card("3s")


@pytest.mark.parametrize(("rank", "suit"), [(1, "s"), (15, "s"), (10, "x"), ("A", "s")])
def test_constructor_refuses_impossible_cards(rank, suit):
    with pytest.raises(InvalidCard):
        Card(rank, suit)


@pytest.mark.parametrize("index", [-1, 52, "3"])
def test_from_index_refuses_out_of_range(index):
    with pytest.raises(InvalidCard):
        Card.from_index(index)
