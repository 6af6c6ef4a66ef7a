"""A tournament's first seating, drawn at random (pure).

Rules implemented:

- ``N`` registered players sit at the fewest tables of ``max_seats`` (2 to 10,
  the ring tables' range): ``ceil(N / max_seats)`` tables, sizes within one
  (the first ``N mod tables`` tables have one player more).
- The draw: the players are put in a uniformly random order by the project's
  Fisher-Yates shuffle (``games.cards.shuffle``) driven by the injected
  ``RandomSource`` (production: ``SecureRandomSource``; tests a
  ``SeededRandomSource``), then dealt round the tables like cards: the k-th
  player of the order (from 0) takes table ``k mod tables + 1``, seat
  ``k // tables + 1``. So the seats of a table are 1, 2, ... with the free
  seats at the end, and ``seat_in_order`` (the deal without the draw) is a
  plain deterministic function of the order.
- Tables are numbered 1, 2, ... here; the service maps them to its tables.
  The first button of each table is then drawn by high card as at a ring table
  (``games.poker.engine.button``).
- With two-seat tables an odd field leaves one player alone at a table: they
  wait for a balancing move (``balancing``).
"""

from __future__ import annotations

from collections.abc import Sequence

from games.cards.shuffle import RandomSource, shuffled
from games.poker.engine.errors import PokerError

PlayerId = int
TableNumber = int
SeatNumber = int

MIN_SEATS = 2
MAX_SEATS = 10


class SeatingError(PokerError, code="tournament_seating_error"):
    """The players cannot be seated as asked."""


class InvalidTableSize(SeatingError, code="tournament_invalid_table_size"):
    """A tournament table has 2 to 10 seats."""


class NotEnoughPlayers(SeatingError, code="tournament_not_enough_players"):
    """A tournament needs at least two players to seat."""


class DuplicatePlayer(SeatingError, code="tournament_duplicate_player"):
    """A player can hold only one seat in a tournament."""


def check_table_size(max_seats: int) -> None:
    if not MIN_SEATS <= max_seats <= MAX_SEATS:
        raise InvalidTableSize(max_seats=max_seats)


def tables_needed(players: int, max_seats: int) -> int:
    """The fewest tables of ``max_seats`` that hold ``players`` (0 for nobody)."""
    check_table_size(max_seats)
    return -(-players // max_seats)


def seat_in_order(order: Sequence[PlayerId], max_seats: int) -> dict[TableNumber, dict[SeatNumber, PlayerId]]:
    """Seat the players in this order round the fewest tables (the deal, given the draw)."""
    check_table_size(max_seats)
    if len(order) < 2:
        raise NotEnoughPlayers(players=len(order))
    if len(set(order)) != len(order):
        raise DuplicatePlayer()
    count = tables_needed(len(order), max_seats)
    tables: dict[TableNumber, dict[SeatNumber, PlayerId]] = {number: {} for number in range(1, count + 1)}
    for k, player in enumerate(order):
        tables[k % count + 1][k // count + 1] = player
    return tables


def draw_seating(
    players: Sequence[PlayerId], max_seats: int, rng: RandomSource
) -> dict[TableNumber, dict[SeatNumber, PlayerId]]:
    """The first seating: a random order from ``rng``, dealt round the fewest tables."""
    check_table_size(max_seats)
    if len(set(players)) != len(players):
        raise DuplicatePlayer()
    return seat_in_order(shuffled(players, rng), max_seats)
