"""Eliminations (issue #23): players finish in the order they bust; busts of one
hand are ranked by their start-of-hand stacks, equal stacks tie and share the
tied places' prizes (odd units to the first tied player from the button)."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.poker.tournament.rules.eliminations import Bust, Finish, champion, rank_bust, standings
from games.poker.tournament.rules.errors import InvalidFinish
from games.poker.tournament.rules.payouts import PayoutTable, payouts

FIFTY_THIRTY_TWENTY = PayoutTable((5000, 3000, 2000))


def by_player(finishes):
    return {finish.player: (finish.place, finish.tied, finish.prize) for finish in finishes}


def test_players_finish_in_the_order_they_bust():
    result = standings(
        [[Bust("dee", 500)], [Bust("cat", 900)], [Bust("bob", 3_000)]],
        "ann",
        FIFTY_THIRTY_TWENTY.amounts(1_000),
    )
    assert [(f.player, f.place, f.prize) for f in result] == [
        ("ann", 1, 500),
        ("bob", 2, 300),
        ("cat", 3, 200),
        ("dee", 4, 0),
    ]


def test_two_busting_in_one_hand_finish_by_their_start_stacks():
    # cat started the hand with more chips than bob: cat is 2nd, bob 3rd,
    # whatever order they are listed in.
    for group in ([Bust("bob", 400), Bust("cat", 1_200)], [Bust("cat", 1_200), Bust("bob", 400)]):
        result = standings([[Bust("dee", 100)], group], "ann", FIFTY_THIRTY_TWENTY.amounts(1_000))
        assert by_player(result) == {
            "ann": (1, 1, 500),
            "cat": (2, 1, 300),
            "bob": (3, 1, 200),
            "dee": (4, 1, 0),
        }


def test_equal_start_stacks_tie_and_share_the_tied_places_prizes():
    # 2nd (300) + 3rd (200) = 500, 250 each; both are "2nd".
    result = standings(
        [[Bust("dee", 100)], [Bust("bob", 700), Bust("cat", 700)]], "ann", FIFTY_THIRTY_TWENTY.amounts(1_000)
    )
    assert by_player(result) == {"ann": (1, 1, 500), "bob": (2, 2, 250), "cat": (2, 2, 250), "dee": (4, 1, 0)}


def test_a_tie_odd_unit_goes_to_the_first_tied_player_from_the_button():
    # 2nd 301 + 3rd 200 = 501: 250 each and the 1 left to the first listed (seat order from the button).
    by_place = (500, 301, 200)
    first = standings([[Bust("bob", 700), Bust("cat", 700)]], "ann", by_place)
    assert by_player(first)["bob"] == (2, 2, 251)
    assert by_player(first)["cat"] == (2, 2, 250)
    swapped = standings([[Bust("cat", 700), Bust("bob", 700)]], "ann", by_place)
    assert by_player(swapped)["cat"] == (2, 2, 251)
    assert by_player(swapped)["bob"] == (2, 2, 250)


def test_a_three_way_tie_with_a_remainder():
    # Pool 1,001 at 35/33/22/10: 350.35/330.33/220.22/100.1 round down to 350/330/220/100,
    # and the 1 left goes to 1st.
    amounts = PayoutTable((3500, 3300, 2200, 1000)).amounts(1_001)
    assert amounts == (351, 330, 220, 100)
    group = [Bust("bob", 250), Bust("cat", 250), Bust("dee", 250)]
    result = standings([[Bust("eve", 90)], group], "ann", amounts)
    # Three tie for 2nd-4th: 330 + 220 + 100 = 650 -> 216 each, the 2 left to bob
    # (first from the button, as a split pot's odd chips).
    assert by_player(result) == {
        "ann": (1, 1, 351),
        "bob": (2, 3, 218),
        "cat": (2, 3, 216),
        "dee": (2, 3, 216),
        "eve": (5, 1, 0),
    }
    assert sum(f.prize for f in result) == 1_001


def test_a_three_way_tie_without_a_remainder():
    # 303 + 202 + 101 = 606 -> 202 each.
    amounts = PayoutTable((4000, 3000, 2000, 1000)).amounts(1_010)
    assert amounts == (404, 303, 202, 101)
    result = standings([[Bust("eve", 90)], [Bust("bob", 250), Bust("cat", 250), Bust("dee", 250)]], "ann", amounts)
    assert [f.prize for f in result] == [404, 202, 202, 202, 0]


def test_a_tie_on_the_bubble_shares_the_last_paid_place():
    # Four left, three paid: two tie for 3rd and 4th and share 3rd's 200.
    result = standings(
        [[Bust("cat", 50), Bust("dee", 50)], [Bust("bob", 10)]], "ann", FIFTY_THIRTY_TWENTY.amounts(1_000)
    )
    assert by_player(result) == {"ann": (1, 1, 500), "bob": (2, 1, 300), "cat": (3, 2, 100), "dee": (3, 2, 100)}


def test_bigger_stacks_above_a_tie_below():
    # One hand busts four: 900 > 500 = 500 > 100.
    group = [Bust("p100", 100), Bust("p500a", 500), Bust("p900", 900), Bust("p500b", 500)]
    finishes = rank_bust(group, players_left=6, by_place=(600, 250, 100, 50))
    assert [(f.player, f.place, f.tied, f.prize) for f in finishes] == [
        ("p900", 3, 1, 100),
        ("p500a", 4, 2, 25),
        ("p500b", 4, 2, 25),
        ("p100", 6, 1, 0),
    ]


def test_a_lone_player_beats_everyone_who_busted():
    assert standings([], "ann", (1_000,)) == (Finish("ann", 1, 1, 1_000),)
    result = standings([[Bust("bob", 10), Bust("cat", 20), Bust("dee", 30)]], "ann", (700, 300))
    assert by_player(result) == {"ann": (1, 1, 700), "dee": (2, 1, 300), "cat": (3, 1, 0), "bob": (4, 1, 0)}


def test_the_tournament_ends_when_one_player_holds_every_chip():
    assert champion({"ann": 3_000, "bob": 0, "cat": 0}) == "ann"
    assert champion({"ann": 2_000, "bob": 1_000, "cat": 0}) is None


@pytest.mark.parametrize(
    ("busts", "winner"),
    [
        ([[Bust("bob", 10)], [Bust("bob", 20)]], "ann"),
        ([[Bust("ann", 10)]], "ann"),
        ([[]], "ann"),
        ([[Bust("bob", 0)]], "ann"),
        ([[Bust("bob", -5)]], "ann"),
        ([[Bust("bob", 1.5)]], "ann"),  # type: ignore[arg-type]
    ],
    ids=["busted-twice", "winner-busted", "empty-bust", "zero-stack", "negative-stack", "float-stack"],
)
def test_inconsistent_finishes_are_refused(busts, winner):
    with pytest.raises(InvalidFinish) as refused:
        standings(busts, winner, (1_000,))
    assert refused.value.code == "tournament_invalid_finish"


def test_a_bust_must_leave_a_survivor():
    with pytest.raises(InvalidFinish):
        rank_bust([Bust("bob", 10), Bust("cat", 10)], players_left=2, by_place=(1_000,))


def test_more_paid_places_than_players_is_refused_rather_than_losing_money():
    with pytest.raises(InvalidFinish):
        standings([[Bust("bob", 10)]], "ann", FIFTY_THIRTY_TWENTY.amounts(1_000))
    # Computed for the entrants, it pays all of the pool.
    result = standings([[Bust("bob", 10)]], "ann", FIFTY_THIRTY_TWENTY.amounts(1_000, entrants=2))
    assert by_player(result) == {"ann": (1, 1, 625), "bob": (2, 1, 375)}


@st.composite
def tournaments(draw):
    """A table, a pool and a field busting in random groups with random (often equal) stacks."""
    places = draw(st.integers(1, 8))
    cuts = sorted(draw(st.lists(st.integers(1, 9_999), min_size=places - 1, max_size=places - 1, unique=True)))
    table = PayoutTable(tuple(sorted((b - a for a, b in zip([0, *cuts], [*cuts, 10_000], strict=True)), reverse=True)))
    entrants = draw(st.integers(1, 30))
    players = [f"p{i}" for i in range(entrants)]
    busted, winner = players[1:], players[0]
    groups = []
    while busted:
        size = draw(st.integers(1, len(busted)))
        groups.append([Bust(p, draw(st.integers(1, 4)) * 100) for p in busted[:size]])
        busted = busted[size:]
    return table, draw(st.integers(0, 10**7)), draw(st.integers(0, 10**7)), entrants, groups, winner


@settings(max_examples=300, deadline=None, derandomize=True)
@given(tournaments())
def test_prizes_always_sum_to_the_pool_and_follow_the_places(case):
    table, collected, guarantee, entrants, groups, winner = case
    result = payouts(table, collected=collected, guarantee=guarantee, entrants=entrants)
    finishes = standings(groups, winner, result)
    assert sum(f.prize for f in finishes) == result.pool.amount == max(collected, guarantee)
    assert len(finishes) == entrants
    assert sorted(f.place for f in finishes) == [f.place for f in finishes]
    # Each tie's equal share never exceeds a better place's; the odd units (fewer
    # than the tied players) go to the first of the tie.
    places = sorted({f.place for f in finishes})
    share = {p: min(f.prize for f in finishes if f.place == p) for p in places}
    assert all(share[a] >= share[b] for a, b in pairwise(places))
    for place in places:
        prizes = [f.prize for f in finishes if f.place == place]
        assert len(prizes) == next(f.tied for f in finishes if f.place == place)
        assert all(prize == share[place] for prize in prizes[1:])
        assert prizes[0] - share[place] < len(prizes)


def test_a_large_tie_remainder_all_goes_to_the_first_tied_player():
    # Documented consequence: four tied on 5/5/4/4 share 18 -> 4 each and 2 left, both to the first.
    result = standings(
        [[Bust("a", 5)], [Bust("b", 10), Bust("c", 10), Bust("d", 10), Bust("e", 10)]], "w", (10, 5, 5, 4, 4)
    )
    assert [(f.player, f.place, f.prize) for f in result] == [
        ("w", 1, 10),
        ("b", 2, 6),
        ("c", 2, 4),
        ("d", 2, 4),
        ("e", 2, 4),
        ("a", 6, 0),
    ]
