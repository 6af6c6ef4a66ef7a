"""The first seating of a tournament (issue #23: "seating is drawn at random"): the fewest tables,
sizes within one, the draw from the injected random source."""

from __future__ import annotations

from collections import Counter

import pytest

from casino.errors import DomainError
from games.cards.shuffle import SecureRandomSource, SeededRandomSource
from games.poker.tournament.rules.seating import draw_seating, seat_in_order


def sizes(tables: dict[int, dict[int, int]]) -> list[int]:
    return sorted((len(seats) for seats in tables.values()), reverse=True)


def test_23_players_at_9_max_tables_sit_8_8_7() -> None:
    tables = draw_seating(list(range(1, 24)), 9, SeededRandomSource(23))
    assert sizes(tables) == [8, 8, 7]


@pytest.mark.parametrize("max_seats", range(2, 11))
def test_every_field_sits_at_the_fewest_tables_with_sizes_within_one(max_seats: int) -> None:
    for players in range(2, 61):
        tables = draw_seating(list(range(players)), max_seats, SeededRandomSource(players))
        seated = [player for seats in tables.values() for player in seats.values()]
        assert sorted(seated) == list(range(players)), "everyone seated exactly once"
        assert (len(tables) - 1) * max_seats < players <= len(tables) * max_seats, "the fewest tables"
        assert max(sizes(tables)) - min(sizes(tables)) <= 1
        assert all(1 <= seat <= max_seats for seats in tables.values() for seat in seats)


def test_nine_players_at_9_max_sit_at_one_table_and_ten_at_two_of_five() -> None:
    assert sizes(draw_seating(list(range(9)), 9, SeededRandomSource(1))) == [9]
    assert sizes(draw_seating(list(range(10)), 9, SeededRandomSource(1))) == [5, 5]


def test_the_seating_is_a_function_of_the_draw() -> None:
    players = list(range(100, 140))
    assert draw_seating(players, 9, SeededRandomSource("a")) == draw_seating(players, 9, SeededRandomSource("a"))
    assert draw_seating(players, 9, SeededRandomSource("a")) != draw_seating(players, 9, SeededRandomSource("b"))


def test_the_order_drawn_is_dealt_round_the_tables() -> None:
    tables = seat_in_order([11, 12, 13, 14, 15], 3)
    assert tables == {1: {1: 11, 2: 13, 3: 15}, 2: {1: 12, 2: 14}}


def test_the_production_source_seats_everyone() -> None:
    tables = draw_seating(list(range(30)), 6, SecureRandomSource())
    assert sizes(tables) == [6, 6, 6, 6, 6]


def test_each_player_is_equally_likely_at_each_table_and_seat() -> None:
    # 6 players, 3-max: two tables, six (table, seat) places; player 0 should land on each about 1/6 of the time.
    rng = SeededRandomSource(2026)
    counts: Counter[tuple[int, int]] = Counter()
    draws = 6000
    for _ in range(draws):
        tables = draw_seating(list(range(6)), 3, rng)
        counts.update((table, seat) for table, seats in tables.items() for seat, player in seats.items() if player == 0)
    assert len(counts) == 6
    assert all(abs(count - draws / 6) < 5 * (draws * (1 / 6) * (5 / 6)) ** 0.5 for count in counts.values())


@pytest.mark.parametrize(
    ("players", "max_seats", "code"),
    [
        ([1, 2, 3], 1, "tournament_invalid_table_size"),
        ([1, 2, 3], 11, "tournament_invalid_table_size"),
        ([1], 9, "tournament_not_enough_players"),
        ([1, 2, 2], 9, "tournament_duplicate_player"),
    ],
)
def test_an_impossible_seating_is_refused_with_its_code(players: list[int], max_seats: int, code: str) -> None:
    with pytest.raises(DomainError) as refused:
        draw_seating(players, max_seats, SeededRandomSource(0))
    assert refused.value.code == code
