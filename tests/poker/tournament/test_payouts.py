"""The prize pool and payout tables (issue #23 "Money"): every amount rounds
down, the remainder goes to the highest finisher paid, the pool is paid out
exactly, a guarantee's overlay is the house's."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.poker.tournament.rules import errors
from games.poker.tournament.rules.payouts import (
    PayoutBracket,
    PayoutStructure,
    PayoutTable,
    PrizePool,
    payouts,
    split_by_weights,
)

FIFTY_THIRTY_TWENTY = PayoutTable((5000, 3000, 2000))


def test_pool_of_1000_at_50_30_20_pays_500_300_200():
    assert FIFTY_THIRTY_TWENTY.amounts(1_000) == (500, 300, 200)


def test_the_remainder_goes_to_the_winner():
    # 1,001 * 50 % = 500.5 -> 500, 300.3 -> 300, 200.2 -> 200; the 1 left goes to 1st.
    assert FIFTY_THIRTY_TWENTY.amounts(1_001) == (501, 300, 200)


def test_several_remainder_units_all_go_to_the_winner():
    # Three equal thirds of 100: 33 each, the 1 left to 1st (3334 + 3333 + 3333 bp).
    assert PayoutTable((3334, 3333, 3333)).amounts(100) == (34, 33, 33)
    assert PayoutTable((3334, 3333, 3333)).amounts(200) == (68, 66, 66)


def test_a_guarantee_above_the_buy_ins_is_paid_and_the_overlay_reported():
    result = payouts(FIFTY_THIRTY_TWENTY, collected=3_000, guarantee=5_000)
    assert result.pool.amount == 5_000
    assert result.pool.overlay == 2_000
    assert result.by_place == (2_500, 1_500, 1_000)
    assert sum(result.by_place) == 5_000


def test_buy_ins_above_the_guarantee_have_no_overlay():
    pool = PrizePool(collected=7_000, guarantee=5_000)
    assert (pool.amount, pool.overlay) == (7_000, 0)
    assert PrizePool(collected=4_000) == PrizePool(4_000, 0)
    assert PrizePool(collected=4_000).overlay == 0


def test_percentages_summing_to_99_99_are_refused_with_the_code():
    with pytest.raises(errors.PayoutsNot100) as refused:
        PayoutTable((5000, 3000, 1999))
    assert refused.value.code == "tournament_payouts_not_100"
    assert refused.value.details == {"total_bp": 9_999}


def test_percentages_above_100_are_refused():
    with pytest.raises(errors.PayoutsNot100):
        PayoutTable((5000, 3000, 2001))


@pytest.mark.parametrize(
    "shares",
    [(), (10_000, 0), (10_500, -500), (5000.0, 5000.0), (True, 9_999)],
    ids=["empty", "zero-share", "negative-share", "float-share", "bool-share"],
)
def test_malformed_tables_are_refused(shares):
    with pytest.raises(errors.InvalidPayoutTable):
        PayoutTable(shares)


def test_a_place_may_not_pay_more_than_the_place_above():
    with pytest.raises(errors.PayoutsIncreasing) as refused:
        PayoutTable((4000, 3999, 1000, 1001))
    assert refused.value.code == "tournament_payouts_increasing"
    # Equal shares are allowed.
    assert PayoutTable((2500, 2500, 2500, 2500)).amounts(10) == (4, 2, 2, 2)


def test_places_must_be_contiguous_from_1():
    assert PayoutTable.from_places({2: 3000, 1: 5000, 3: 2000}) == FIFTY_THIRTY_TWENTY
    with pytest.raises(errors.PayoutPlacesNotContiguous) as refused:
        PayoutTable.from_places({1: 5000, 3: 5000})
    assert refused.value.code == "tournament_payout_places_not_contiguous"
    with pytest.raises(errors.PayoutPlacesNotContiguous):
        PayoutTable.from_places({0: 5000, 1: 5000})


@pytest.mark.parametrize("pool", [-1, 1.5, True])
def test_pools_are_whole_minor_units(pool):
    with pytest.raises(errors.InvalidAmount):
        FIFTY_THIRTY_TWENTY.amounts(pool)
    with pytest.raises(errors.InvalidAmount):
        PrizePool(collected=pool)


def test_an_empty_pool_pays_nothing():
    assert FIFTY_THIRTY_TWENTY.amounts(0) == (0, 0, 0)


def test_fewer_entrants_than_paid_places_redistributes_proportionally():
    # Two entrants, 50/30/20: 3rd's 20 % goes to 1st and 2nd in proportion 50:30.
    # 1,000 * 50/80 = 625, 1,000 * 30/80 = 375.
    assert FIFTY_THIRTY_TWENTY.amounts(1_000, entrants=2) == (625, 375)
    # 1,001: 625.625 -> 625, 375.375 -> 375, the 1 left to 1st.
    assert FIFTY_THIRTY_TWENTY.amounts(1_001, entrants=2) == (626, 375)
    # A lone entrant takes the pool; enough entrants change nothing.
    assert FIFTY_THIRTY_TWENTY.amounts(1_001, entrants=1) == (1_001,)
    assert FIFTY_THIRTY_TWENTY.amounts(1_001, entrants=9) == (501, 300, 200)
    with pytest.raises(errors.InvalidAmount):
        FIFTY_THIRTY_TWENTY.amounts(1_000, entrants=0)


STRUCTURE = PayoutStructure(
    (
        PayoutBracket(2, PayoutTable((10_000,))),
        PayoutBracket(6, PayoutTable((6500, 3500))),
        PayoutBracket(10, FIFTY_THIRTY_TWENTY),
        PayoutBracket(None, PayoutTable((4000, 2500, 1500, 1200, 800))),
    )
)


@pytest.mark.parametrize(("entrants", "paid"), [(1, 1), (2, 1), (3, 2), (6, 2), (7, 3), (10, 3), (11, 5), (1_000, 5)])
def test_the_structure_picks_the_first_bracket_covering_the_entrants(entrants, paid):
    assert STRUCTURE.table_for(entrants).places == paid


def test_the_structure_pays_the_pool_of_its_bracket():
    result = STRUCTURE.payouts(entrants=9, collected=9_000)
    assert result.by_place == (4_500, 2_700, 1_800)
    # 4 entrants, 65/35 of a 4,000 guarantee over 3,999 collected.
    result = STRUCTURE.payouts(entrants=4, collected=3_999, guarantee=4_000)
    assert (result.by_place, result.pool.overlay) == ((2_600, 1_400), 1)


def test_a_bounded_structure_refuses_a_larger_field():
    bounded = PayoutStructure((PayoutBracket(6, PayoutTable((6500, 3500))),))
    with pytest.raises(errors.TooManyEntrants) as refused:
        bounded.table_for(7)
    assert refused.value.code == "tournament_too_many_entrants"


@pytest.mark.parametrize(
    "brackets",
    [
        (),
        (PayoutBracket(6, FIFTY_THIRTY_TWENTY), PayoutBracket(6, FIFTY_THIRTY_TWENTY)),
        (PayoutBracket(9, FIFTY_THIRTY_TWENTY), PayoutBracket(6, FIFTY_THIRTY_TWENTY)),
        (PayoutBracket(None, FIFTY_THIRTY_TWENTY), PayoutBracket(9, FIFTY_THIRTY_TWENTY)),
        (PayoutBracket(0, FIFTY_THIRTY_TWENTY),),
    ],
    ids=["empty", "same-bound", "decreasing", "open-not-last", "zero-bound"],
)
def test_malformed_structures_are_refused(brackets):
    with pytest.raises(errors.InvalidPayoutStructure):
        PayoutStructure(brackets)


@st.composite
def tables(draw):
    """A valid table: non-increasing positive shares summing to 10,000 bp."""
    places = draw(st.integers(1, 12))
    cuts = sorted(draw(st.lists(st.integers(1, 9_999), min_size=places - 1, max_size=places - 1, unique=True)))
    shares = [b - a for a, b in zip([0, *cuts], [*cuts, 10_000], strict=True)]
    return PayoutTable(tuple(sorted(shares, reverse=True)))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    table=tables(),
    collected=st.integers(0, 10**9),
    guarantee=st.integers(0, 10**9),
    entrants=st.integers(1, 20),
)
def test_the_pool_is_always_paid_exactly_and_in_order(table, collected, guarantee, entrants):
    result = payouts(table, collected=collected, guarantee=guarantee, entrants=entrants)
    assert sum(result.by_place) == result.pool.amount == max(collected, guarantee)
    assert result.pool.amount - result.pool.overlay == collected or result.pool.overlay == 0
    assert result.paid_places == min(entrants, table.places)
    assert all(a >= b >= 0 for a, b in zip(result.by_place, result.by_place[1:], strict=False))
    # Rounding down: no place below the winner gets more than its exact share of the pool.
    paid_shares = table.shares_bp[: result.paid_places]
    for place in range(2, result.paid_places + 1):
        exact = result.pool.amount * paid_shares[place - 1] / sum(paid_shares)
        assert result.amount(place) <= exact < result.amount(place) + 1


@settings(max_examples=200, deadline=None, derandomize=True)
@given(amount=st.integers(0, 10**12), weights=st.lists(st.integers(1, 10**6), min_size=1, max_size=15))
def test_split_by_weights_sums_exactly(amount, weights):
    parts = split_by_weights(amount, weights)
    assert sum(parts) == amount
    assert len(parts) == len(weights)
