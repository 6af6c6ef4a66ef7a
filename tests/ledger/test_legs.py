"""``ledger.legs``: the legs spliced into encoded data equal the canonical
encoding of the data with its legs (the bulk path's shortcut), and the
shapes are read back as the rows they stand for."""

from __future__ import annotations

from typing import Any

import pytest

from ledger.canonical import canonical_text
from ledger.legs import (
    BadLeg,
    Opening,
    ReservedKey,
    Row,
    hold_open_leg,
    parse_legs,
    resolution_leg,
    resolution_rows,
    splice,
    split_data,
    transfer_leg,
    with_legs,
)

LEGS = [transfer_leg("payout", 1, 2, 500, "EUR"), hold_open_leg(3, 4, 5, 100, "EUR", "h-1"), resolution_leg("h-0", 0)]


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"a": 1},
        {"z": 1},
        {"leg": 1, "legs0": 2, "lega": 3, "Legs": 4, "legr": 5, "legt": [1, {"legs": 2}]},
        {"é": "x", "amount": 100, "won": True, "payout": None},
    ],
)
def test_spliced_legs_equal_the_canonical_encoding_of_the_data_with_them(data: dict[str, Any]) -> None:
    before, after = split_data(data)
    legs_json = canonical_text(LEGS)
    assert splice(canonical_text(before), canonical_text(after), legs_json) == canonical_text(with_legs(data, LEGS))


def test_the_legs_key_is_the_ledgers_alone() -> None:
    with pytest.raises(ReservedKey):
        with_legs({"legs": []}, LEGS)
    with pytest.raises(ReservedKey):
        split_data({"legs": []})


def test_legs_read_back_as_the_rows_they_stand_for() -> None:
    parsed = parse_legs([*LEGS, resolution_leg("h-1", 30)])
    assert parsed.transfers == [Row("payout", 1, 2, 500, "EUR", None), Row("hold", 3, 4, 100, "EUR", "h-1")]
    assert parsed.openings == [("h-1", Opening(3, 4, 5, 100, "EUR"))]
    assert parsed.resolutions == [("h-0", None), ("h-1", 30)]
    opening = Opening(3, 4, 5, 100, "EUR")
    assert resolution_rows("h-1", opening, 30) == [
        Row("post", 4, 5, 30, "EUR", "h-1"),
        Row("release", 4, 3, 70, "EUR", "h-1"),
    ]
    assert resolution_rows("h-1", opening, 100) == [Row("post", 4, 5, 100, "EUR", "h-1")]
    assert resolution_rows("h-1", opening, None) == [Row("void", 4, 3, 100, "EUR", "h-1")]


@pytest.mark.parametrize(
    "legs",
    [{"a": 1}, [[]], [["payout", 1, 2, "500", "EUR"]], [["post", 1, 2, 3, "EUR"]], [["hold", 1, 2, 3, "EUR"]],
     [["void"]], [["payout", True, 2, 5, "EUR"]]],
)  # fmt: skip
def test_malformed_legs_are_refused(legs: Any) -> None:
    with pytest.raises(BadLeg):
        parse_legs(legs)
