"""Table balancing, breaking, the final table and hand-for-hand (issue #23: "tables are balanced
(sizes within one) by moving the player due to be the next big blind, and broken when they can be.
Hand-for-hand play near the money. A final table.")."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casino.errors import DomainError
from games.cards.shuffle import SeededRandomSource
from games.poker.engine.button import next_button
from games.poker.engine.events import BlindPosted
from games.poker.tournament.rules.balancing import (
    Move,
    Rebalance,
    TableSnapshot,
    big_blind_of_next_hand,
    hand_for_hand,
    rebalance,
    seat_for_newcomer,
)
from games.poker.tournament.rules.seating import draw_seating, tables_needed
from tests.poker.engine.helpers import Hand, config


def engine_big_blind(seats: list[int], button: int) -> int:
    """The seat the engine makes post the big blind when the hand starts with the button moved on."""
    hand = Hand(config(), dict.fromkeys(seats, 1000), next_button(button, seats))
    return next(event.seat for event in hand.events if isinstance(event, BlindPosted) and event.kind == "big")


@pytest.mark.parametrize(
    ("seats", "button"),
    [
        ([1, 2, 3, 4, 5, 6, 7, 8, 9], 1),
        ([1, 2, 3, 4, 5, 6, 7, 8, 9], 8),
        ([2, 5, 9], 9),
        ([1, 4, 6, 7], 5),  # the button's player has left the table
        ([3, 7], 3),  # heads-up: the next button posts the small blind
        ([3, 7], 7),
    ],
)
def test_the_player_due_to_be_the_next_big_blind_is_the_one_the_engine_makes_post_it(
    seats: list[int], button: int
) -> None:
    assert big_blind_of_next_hand(seats, button) == engine_big_blind(seats, button)


def snapshot(
    tables: dict[int, dict[int, int]], buttons: dict[int, int | None] | None = None
) -> dict[int, TableSnapshot]:
    buttons = buttons or {}
    return {table: TableSnapshot(seats, buttons.get(table)) for table, seats in tables.items()}


def apply(
    tables: dict[int, dict[int, int]], result: Rebalance, buttons: dict[int, int | None] | None = None
) -> dict[int, dict[int, int]]:
    """Apply the moves in order, checking each against the tables as they are then: the seat left holds
    the player, the seat taken is free, and a balancing move takes the table's next big blind."""
    tables = {table: dict(seats) for table, seats in tables.items()}
    for move in result.moves:
        assert tables[move.from_table].get(move.from_seat) == move.player
        if move.reason == "balance" and buttons is not None:
            assert move.from_seat == big_blind_of_next_hand(tables[move.from_table], buttons[move.from_table])
        assert move.to_seat not in tables[move.to_table]
        del tables[move.from_table][move.from_seat]
        tables[move.to_table][move.to_seat] = move.player
    for table in result.broken:
        assert not tables.pop(table)
    return tables


def full_table(first_player: int, count: int) -> dict[int, int]:
    return {seat: first_player + seat for seat in range(1, count + 1)}


def test_balanced_tables_need_no_move() -> None:
    tables = {1: full_table(100, 8), 2: full_table(200, 8), 3: full_table(300, 7)}
    assert rebalance(snapshot(tables, {1: 3, 2: 3, 3: 3}), 9, SeededRandomSource(0)).moves == ()


def test_eliminations_at_one_table_move_the_next_big_blind_of_the_largest_table_to_the_shortest() -> None:
    # 8/8/8 at 9-max; two players bust at table 3: 8/8/6. Table 1 (the largest, lowest id)
    # played its last hand with the button in seat 4: the next button is 5, small blind 6, big blind 7.
    tables = {1: full_table(100, 8), 2: full_table(200, 8), 3: full_table(300, 8)}
    del tables[3][2], tables[3][5]
    result = rebalance(snapshot(tables, {1: 4, 2: 4, 3: 1}), 9, SeededRandomSource(0))
    assert len(result.moves) == 1
    move = result.moves[0]
    assert (move.player, move.from_table, move.from_seat, move.to_table) == (107, 1, 7, 3)
    assert move.reason == "balance"
    assert result.broken == ()
    after = apply(tables, result)
    assert sorted(len(seats) for seats in after.values()) == [7, 7, 8]


def test_the_moved_player_takes_the_seat_where_they_post_the_big_blind_soonest() -> None:
    # Table 3 has seats 1, 3, 4, 6, 7, 8 after the eliminations; button 1: next button 3, small blind 4,
    # big blind 6. A newcomer in seat 5 (between the small and the big blind) posts the next big blind.
    tables = {1: full_table(100, 8), 2: full_table(200, 8), 3: {1: 301, 3: 303, 4: 304, 6: 306, 7: 307, 8: 308}}
    result = rebalance(snapshot(tables, {1: 4, 2: 4, 3: 1}), 9, SeededRandomSource(0))
    destination = result.moves[0]
    assert (destination.to_table, destination.to_seat) == (3, 5)
    after = apply(tables, result)
    assert big_blind_of_next_hand(after[3], 1) == 5


def test_a_newcomer_seat_when_no_seat_gives_the_big_blind_next_hand() -> None:
    # Seats 1-5, button 1: the next hands' big blinds are seats 4, 5, then whoever sits in the gap 6-9.
    # No free seat lies between the next small and big blind, so the newcomer posts the third hand's
    # big blind at best; of the equal seats 6-9, seat 6 is first clockwise from the button.
    assert seat_for_newcomer([1, 2, 3, 4, 5], 1, 9) == 6
    occupied = [1, 2, 3, 4, 5, 6]
    big_blinds = []
    button = 1
    for _ in range(3):
        big_blinds.append(engine_big_blind(occupied, button))
        button = next_button(button, occupied)
    assert big_blinds == [4, 5, 6]


def test_a_table_with_no_hand_played_yet_gives_its_lowest_seat_and_takes_in_its_lowest_free_seat() -> None:
    assert big_blind_of_next_hand([2, 4, 6], None) == 2
    assert seat_for_newcomer([1, 2, 4], None, 6) == 3


def test_a_table_is_broken_when_the_players_left_fit_on_one_table_fewer() -> None:
    # 6/6/6 at 9-max: 18 players fit on two tables. Table 3 (fewest, ties to the highest id) is broken
    # and its six players fill tables 1 and 2 to 9/9.
    tables = {1: full_table(100, 6), 2: full_table(200, 6), 3: full_table(300, 6)}
    result = rebalance(snapshot(tables, {1: 1, 2: 1, 3: 1}), 9, SeededRandomSource(7))
    assert result.broken == (3,)
    assert {move.player for move in result.moves} == set(tables[3].values())
    assert all(move.reason == "break" for move in result.moves)
    after = apply(tables, result)
    assert sorted(len(seats) for seats in after.values()) == [9, 9]
    assert result.final_table is None


def test_the_broken_tables_players_are_reseated_at_random() -> None:
    tables = {1: full_table(100, 5), 2: full_table(200, 5), 3: full_table(300, 4)}
    outcomes = {
        tuple((m.player, m.to_table, m.to_seat) for m in rebalance(snapshot(tables), 9, SeededRandomSource(seed)).moves)
        for seed in range(20)
    }
    assert len(outcomes) > 1
    same_draw = [rebalance(snapshot(tables), 9, SeededRandomSource(3)) for _ in range(2)]
    assert same_draw[0] == same_draw[1]


def test_ten_players_on_two_10_max_tables_break_to_one_final_table() -> None:
    tables = {1: full_table(100, 6), 2: full_table(200, 4)}
    result = rebalance(snapshot(tables, {1: 2, 2: 2}), 10, SeededRandomSource(1))
    assert result.broken == (2,)
    assert result.final_table == 1
    after = apply(tables, result)
    assert list(after) == [1]
    assert sorted(after[1].values()) == sorted([*tables[1].values(), *tables[2].values()])


def test_nine_players_left_on_two_9_max_tables_go_to_one_final_table() -> None:
    tables = {1: full_table(100, 4), 2: full_table(200, 5)}
    result = rebalance(snapshot(tables), 9, SeededRandomSource(1))
    assert result.broken == (1,)
    assert result.final_table == 2
    assert len(apply(tables, result)[2]) == 9


def test_ten_players_left_on_two_9_max_tables_stay_on_two() -> None:
    tables = {1: full_table(100, 5), 2: full_table(200, 5)}
    result = rebalance(snapshot(tables), 9, SeededRandomSource(1))
    assert result == Rebalance(moves=(), broken=(), final_table=None, tables=tables)


def test_an_emptied_table_is_broken_without_moves() -> None:
    tables: dict[int, dict[int, int]] = {1: full_table(100, 5), 2: full_table(200, 5), 3: {}}
    result = rebalance(snapshot(tables), 9, SeededRandomSource(1))
    assert (result.moves, result.broken) == ((), (3,))


@pytest.mark.parametrize(
    ("tables", "code"),
    [
        ({1: {10: 1, 2: 2}}, "tournament_invalid_snapshot"),
        ({1: {1: 1, 2: 2}, 2: {1: 1, 2: 3}}, "tournament_duplicate_player"),
    ],
)
def test_an_invalid_snapshot_is_refused(tables: dict[int, dict[int, int]], code: str) -> None:
    with pytest.raises(DomainError) as refused:
        rebalance(snapshot(tables), 9, SeededRandomSource(0))
    assert refused.value.code == code


def test_a_snapshot_with_a_button_off_the_table_is_refused() -> None:
    with pytest.raises(DomainError) as refused:
        rebalance({1: TableSnapshot({1: 1, 2: 2}, button=12)}, 9, SeededRandomSource(0))
    assert refused.value.code == "tournament_invalid_snapshot"


@st.composite
def tournaments(draw: st.DrawFn) -> tuple[int, int, list[list[int]], int]:
    max_seats = draw(st.integers(2, 10))
    players = draw(st.integers(2, 60))
    # Rounds of eliminations: each busts some players (indices into those left), never the last one.
    rounds = draw(st.lists(st.lists(st.integers(0, 10**6), max_size=4), max_size=25))
    return max_seats, players, rounds, draw(st.integers(0, 2**32))


@settings(derandomize=True, max_examples=150, deadline=None)
@given(tournaments())
def test_sizes_stay_within_one_on_the_fewest_tables_after_any_eliminations(
    case: tuple[int, int, list[list[int]], int],
) -> None:
    max_seats, players, rounds, seed = case
    rng = SeededRandomSource(seed)
    tables = draw_seating(list(range(players)), max_seats, rng)
    buttons: dict[int, int | None] = dict.fromkeys(tables)
    alive = set(range(players))
    for busts in rounds:
        for pick in busts:
            if len(alive) <= 1:
                break
            victim = sorted(alive)[pick % len(alive)]
            alive.discard(victim)
            for seats in tables.values():
                for seat, player in list(seats.items()):
                    if player == victim:
                        del seats[seat]
        result = rebalance(snapshot(tables, buttons), max_seats, rng)
        tables = apply(tables, result, buttons)
        buttons = {table: buttons[table] for table in tables}
        counts = [len(seats) for seats in tables.values()]
        assert max(counts) - min(counts) <= 1
        assert len(tables) == max(1, tables_needed(len(alive), max_seats))
        assert sorted(p for seats in tables.values() for p in seats.values()) == sorted(alive)
        assert (result.final_table is not None) == (len(tables) == 1)
        # Every table plays a hand: the button moves on where two or more players sit.
        for table, seats in tables.items():
            if len(seats) >= 2:
                current = buttons[table]
                buttons[table] = next_button(current, list(seats)) if current is not None else min(seats)


def test_balancing_moves_are_of_the_next_big_blind_each_time() -> None:
    # 9/9/5 at 9-max (23 players): table 1 and 2 each give their next big blind, in turn, until 8/8/7.
    # Table 1's last button was seat 9: next button 1, small blind 2, big blind 3. Table 2's was 2: big blind 5.
    tables = {1: full_table(100, 9), 2: full_table(200, 9), 3: full_table(300, 5)}
    result = rebalance(snapshot(tables, {1: 9, 2: 2, 3: 1}), 9, SeededRandomSource(0))
    assert [(m.from_table, m.from_seat) for m in result.moves] == [(1, 3), (2, 5)]
    assert all(isinstance(m, Move) and m.to_table == 3 for m in result.moves)


@pytest.mark.parametrize(
    ("players_left", "paid", "tables", "margin", "expected"),
    [
        (11, 10, 2, 0, True),  # exactly on the bubble
        (12, 10, 2, 0, False),
        (12, 10, 2, 1, True),  # margin: one player before the bubble
        (13, 10, 2, 2, True),
        (14, 10, 2, 2, False),
        (10, 10, 2, 0, False),  # everyone left is paid
        (11, 10, 1, 0, False),  # one table: hand-for-hand by nature
    ],
)
def test_hand_for_hand_near_the_money(players_left: int, paid: int, tables: int, margin: int, expected: bool) -> None:
    assert hand_for_hand(players_left, paid, tables, margin) is expected


def test_hand_for_hand_refuses_a_tournament_that_pays_nobody() -> None:
    with pytest.raises(DomainError) as refused:
        hand_for_hand(10, 0, 2)
    assert refused.value.code == "tournament_invalid_paid_places"
