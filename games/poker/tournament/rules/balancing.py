"""Keeping a multi-table tournament's tables balanced (pure).

The service calls ``rebalance`` between hands with a snapshot of every table
(``TableSnapshot``: seat -> player, and the button of the hand last played
there, ``None`` before the first hand) and applies the moves it returns, in
order, recording each as an event. Nothing here reads a clock or holds state.

Rules implemented:

- **Breaking.** While the players left fit on fewer tables than there are
  (``ceil(players / max_seats)``), a table is broken: the one with the fewest
  players, ties going to the highest table id (tables are broken from the
  last). Its players, in a random order, each take a free seat drawn
  uniformly from the free seats of the tables that then have the fewest
  players, which keeps the sizes within one. A table with no players left is
  simply broken (no moves).
- **Final table.** When the players left fit on one table every other table is
  broken that way, one at a time (each time the one with the fewest players
  then), into the one that stays; ``Rebalance.final_table`` names it.
- **Balancing.** Then, while the largest table has two or more players more
  than the smallest, one player moves from the largest table (ties: the lowest
  id) to the smallest (ties: the lowest id). The player moved is the one *due
  to be the next big blind* at the table taken from: with the button of the
  hand last played, the next hand's button is ``next_button`` (the first
  occupied seat clockwise after it, the button always moving, as at a ring
  table); heads-up the other player posts the big blind, otherwise the second
  occupied seat after that button. Before the table's first hand (no button)
  it is the player in the lowest-numbered seat.
- **The seat taken** by a player moved to balance: the free seat where they
  will post the big blind soonest, the worst position (a move is no free
  ride past the blinds), counted by playing the button forward from the
  table's button with the newcomer seated; ties (free seats in the same gap
  between players) go to the first seat clockwise from the button. A table
  with no button yet: its lowest free seat. A broken table's players are
  re-seated at random instead (a seat drawn uniformly, above).
- The moves are to be applied in the order given; each is valid on the
  tables as the moves before it left them. After a break of a balanced
  snapshot no balancing move is needed; from an unbalanced one a player
  broken into a table may be moved on in the same call (two moves).
- **Hand-for-hand** (``hand_for_hand``): from the bubble (one more player than
  paid places) and ``margin`` more players before it, while two or more tables
  play, every table plays one hand and waits for the others before the next,
  so that players busting "at the same time" are known (the eliminations
  rank them). It stops once every player left is paid, or when one table is
  left (a single table is hand-for-hand by nature).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Literal

from games.cards.shuffle import RandomSource
from games.poker.engine.button import next_button
from games.poker.tournament.rules.seating import (
    DuplicatePlayer,
    PlayerId,
    SeatingError,
    SeatNumber,
    check_table_size,
    tables_needed,
)

TableId = int


class InvalidSnapshot(SeatingError, code="tournament_invalid_snapshot"):
    """The tables' snapshot is not a valid seating (seat, button or table size)."""


class InvalidPaidPlaces(SeatingError, code="tournament_invalid_paid_places"):
    """Paid places must be at least one, the margin and the player count zero or more."""


@dataclass(frozen=True)
class TableSnapshot:
    """A table between hands: who sits where, and the button of the hand last played (``None``: none yet)."""

    seats: Mapping[SeatNumber, PlayerId]
    button: SeatNumber | None = None


@dataclass(frozen=True)
class Move:
    """Move ``player`` from a table and seat to another; ``reason`` is ``balance`` or ``break``."""

    player: PlayerId
    from_table: TableId
    from_seat: SeatNumber
    to_table: TableId
    to_seat: SeatNumber
    reason: Literal["balance", "break"]


@dataclass(frozen=True)
class Rebalance:
    """What to do between hands: the moves in order, the tables broken, and the final table once reached."""

    moves: tuple[Move, ...] = ()
    broken: tuple[TableId, ...] = ()
    final_table: TableId | None = None
    tables: Mapping[TableId, Mapping[SeatNumber, PlayerId]] = field(default_factory=dict)


def big_blind_of_next_hand(seats: Collection[SeatNumber], button: SeatNumber | None) -> SeatNumber:
    """The seat that posts the big blind in the next hand, everyone in ``seats`` dealt in."""
    if not seats:
        raise InvalidSnapshot("an empty table has no big blind")
    ordered = sorted(seats)
    if button is None or len(ordered) == 1:
        return ordered[0]
    new_button = next_button(button, ordered)
    if len(ordered) == 2:
        return next(seat for seat in ordered if seat != new_button)
    small_blind = next_button(new_button, ordered)
    return next_button(small_blind, ordered)


def seat_for_newcomer(seats: Collection[SeatNumber], button: SeatNumber | None, max_seats: int) -> SeatNumber:
    """The free seat where a player joining the table posts the big blind soonest (ties: first clockwise
    from the button); the lowest free seat at a table with no button yet."""
    free = [seat for seat in range(1, max_seats + 1) if seat not in seats]
    if not free:
        raise InvalidSnapshot("the table has no free seat")
    if button is None:
        return free[0]

    def hands_to_big_blind(seat: SeatNumber) -> int:
        occupied = sorted({*seats, seat})
        current = button
        for hands in range(len(occupied) + 1):
            if big_blind_of_next_hand(occupied, current) == seat:
                return hands
            current = next_button(current, occupied) if len(occupied) >= 2 else current
        return len(occupied) + 1  # a lone player never posts a big blind

    return min(free, key=lambda seat: (hands_to_big_blind(seat), (seat - button - 1) % max_seats))


def _check(tables: Mapping[TableId, TableSnapshot], max_seats: int) -> None:
    check_table_size(max_seats)
    seen: set[PlayerId] = set()
    for table_id, table in tables.items():
        if len(table.seats) > max_seats or any(not 1 <= seat <= max_seats for seat in table.seats):
            raise InvalidSnapshot(table=table_id, max_seats=max_seats)
        if table.button is not None and not 1 <= table.button <= max_seats:
            raise InvalidSnapshot(table=table_id, button=table.button)
        for player in table.seats.values():
            if player in seen:
                raise DuplicatePlayer(player=player)
            seen.add(player)


def rebalance(tables: Mapping[TableId, TableSnapshot], max_seats: int, rng: RandomSource) -> Rebalance:
    """The moves that break what can be broken and balance the rest (see the module's rules)."""
    _check(tables, max_seats)
    seats = {table_id: dict(table.seats) for table_id, table in tables.items()}
    buttons = {table_id: table.button for table_id, table in tables.items()}
    moves: list[Move] = []
    broken: list[TableId] = []
    players = sum(len(table) for table in seats.values())
    target = max(1, tables_needed(players, max_seats))

    def move(
        player: PlayerId,
        src: TableId,
        src_seat: SeatNumber,
        dst: TableId,
        dst_seat: SeatNumber,
        reason: Literal["balance", "break"],
    ) -> None:
        del seats[src][src_seat]
        seats[dst][dst_seat] = player
        moves.append(Move(player, src, src_seat, dst, dst_seat, reason))

    while len(seats) > target:
        victim = min(seats, key=lambda t: (len(seats[t]), -t))
        leaving = [(seat, seats[victim][seat]) for seat in sorted(seats[victim])]
        for k in range(len(leaving) - 1, 0, -1):  # Fisher-Yates: the order they are re-seated in
            j = rng.randbelow(k + 1)
            leaving[k], leaving[j] = leaving[j], leaving[k]
        for seat, player in leaving:
            others = [t for t in seats if t != victim]
            fewest = min(len(seats[t]) for t in others)
            free = [
                (t, s)
                for t in sorted(others)
                if len(seats[t]) == fewest
                for s in range(1, max_seats + 1)
                if s not in seats[t]
            ]
            dst, dst_seat = free[rng.randbelow(len(free))]
            move(player, victim, seat, dst, dst_seat, "break")
        del seats[victim]
        broken.append(victim)

    while seats:
        largest = min(seats, key=lambda t: (-len(seats[t]), t))
        smallest = min(seats, key=lambda t: (len(seats[t]), t))
        if len(seats[largest]) - len(seats[smallest]) <= 1:
            break
        seat = big_blind_of_next_hand(seats[largest], buttons[largest])
        dst_seat = seat_for_newcomer(seats[smallest], buttons[smallest], max_seats)
        move(seats[largest][seat], largest, seat, smallest, dst_seat, "balance")

    return Rebalance(
        moves=tuple(moves),
        broken=tuple(broken),
        final_table=next(iter(seats)) if len(seats) == 1 else None,
        tables={table_id: dict(table) for table_id, table in seats.items()},
    )


def hand_for_hand(players_left: int, paid_places: int, tables: int, margin: int = 0) -> bool:
    """Whether the tables play hand-for-hand: two or more tables, and between the bubble
    (``paid_places + 1`` players left) and ``margin`` players before it."""
    if paid_places < 1 or margin < 0 or players_left < 0 or tables < 0:
        raise InvalidPaidPlaces(players_left=players_left, paid_places=paid_places, margin=margin)
    return tables >= 2 and paid_places < players_left <= paid_places + 1 + margin
