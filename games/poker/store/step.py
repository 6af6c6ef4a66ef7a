"""The tournament's step read in one round trip (PostgreSQL; prepared statements).

``read_step`` sends its six statements together in psycopg's pipeline mode,
inside the caller's transaction, in the step's lock order
(``games.poker.tournament.services.step``, module docstring):

1. the tournament row, ``FOR NO KEY UPDATE``;
2. every open table of the tournament (read, not locked);
3. the open tables waiting for the step (``phases``), ``FOR UPDATE``, in id order;
4. the seats at the open tables;
5. the entries still playing whose seat at a waiting table has no chips (the
   busts the step records), ``FOR NO KEY UPDATE``, in id order;
6. the stacks those players started their table's current hand with;

and the pool collected so far (the buy-ins of the entries that count).
Each statement takes its own snapshot (READ COMMITTED): what follows a lock
reads what its previous holder committed. A table may finish its hand
between statements 3 and 5: 5 and 6 may then name its players, which the
caller leaves alone (it steps only the tables 3 locked; a lock taken on such
an entry is held to the end of the transaction, and changes nothing).

The rows come back as model instances (``Model.from_db``, ``rows.instance``),
the same the ORM would build, so the services and projectors use them
unchanged. SQLite has the services' ORM reads instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from games.poker.models import PokerHand, PokerHandPlayer, PokerSeat, PokerTable
from games.poker.store.rows import columns, instance, read_together, table
from games.poker.tournament.models import EntryState, Tournament, TournamentEntry

_TOURNAMENT = f"SELECT {columns(Tournament, 't')} FROM {table(Tournament)} t WHERE t.id = %s FOR NO KEY UPDATE"
_OPEN = f"SELECT {columns(PokerTable, 'p')} FROM {table(PokerTable)} p WHERE p.tournament_id = %s AND p.is_open"
_TABLES = f"{_OPEN} ORDER BY p.id"
_WAITING = f"{_OPEN} AND p.phase = ANY(%s) ORDER BY p.id FOR UPDATE"
_SEATS = (
    f"SELECT {columns(PokerSeat, 's')} FROM {table(PokerSeat)} s JOIN {table(PokerTable)} p ON p.id = s.table_id "
    "WHERE p.tournament_id = %s AND p.is_open"
)
# The seats without chips at the tables waiting for the step.
_EMPTY = (
    f"SELECT s.table_id, s.player_id FROM {table(PokerSeat)} s JOIN {table(PokerTable)} p ON p.id = s.table_id "
    "WHERE p.tournament_id = %s AND p.is_open AND p.phase = ANY(%s) AND s.stack = 0"
)
_BUSTS = (
    f"SELECT {columns(TournamentEntry, 'e')} FROM {table(TournamentEntry)} e WHERE e.tournament_id = %s "
    f"AND e.state = %s AND e.player_id IN (SELECT player_id FROM ({_EMPTY}) empty) "
    "ORDER BY e.id FOR NO KEY UPDATE OF e"
)
_STARTS = (
    f"SELECT empty.table_id, hp.player_id, hp.stack_before FROM ({_EMPTY}) empty "
    f"JOIN {table(PokerTable)} p ON p.id = empty.table_id "
    f"JOIN {table(PokerHand)} h ON p.current_hand_id <> '' AND h.hand_id = p.current_hand_id "
    f"JOIN {table(PokerHandPlayer)} hp ON hp.hand_id = h.id AND hp.player_id = empty.player_id"
)
_COLLECTED = (
    f"SELECT coalesce(sum(e.buy_in), 0) FROM {table(TournamentEntry)} e "
    "WHERE e.tournament_id = %s AND e.state = ANY(%s)"
)


@dataclass
class StepRead:
    """What the step found (``tournament`` None: no such tournament, nothing else read)."""

    tournament: Tournament | None
    tables: list[PokerTable] = field(default_factory=list)  # every open table, by id; the waiting ones locked
    waiting: list[PokerTable] = field(default_factory=list)  # the locked ones (the same instances), by id
    seats: list[PokerSeat] = field(default_factory=list)  # at the open tables
    busts: list[TournamentEntry] = field(default_factory=list)  # locked, by id (statement 5)
    starts: dict[tuple[int, int], int] = field(default_factory=dict)  # (table, player) -> stack at the hand's start
    collected: int = 0  # the pool: the buy-ins of the entries that count


def read_step(*, tournament_id: int, phases: Sequence[str], counted: Sequence[str]) -> StepRead:
    """The step's reads (module docstring) in one round trip, inside the caller's
    transaction: the tables in ``phases`` wait for the step; ``counted``: the entry
    states whose buy-ins make the pool."""
    phases = list(phases)
    (tournament_rows, table_rows, waiting_rows, seat_rows, bust_rows, start_rows, collected_rows) = read_together([
        (_TOURNAMENT, [tournament_id]), (_TABLES, [tournament_id]), (_WAITING, [tournament_id, phases]),
        (_SEATS, [tournament_id]), (_BUSTS, [tournament_id, EntryState.PLAYING, tournament_id, phases]),
        (_STARTS, [tournament_id, phases]), (_COLLECTED, [tournament_id, list(counted)]),
    ])  # fmt: skip
    if not tournament_rows:
        return StepRead(None)
    waiting = [instance(PokerTable, row) for row in waiting_rows]
    locked = {row.pk: row for row in waiting}
    tables = [locked.get(row.pk, row) for row in (instance(PokerTable, values) for values in table_rows)]
    return StepRead(
        tournament=instance(Tournament, tournament_rows[0]),
        tables=tables,
        waiting=waiting,
        seats=[instance(PokerSeat, row) for row in seat_rows],
        busts=[instance(TournamentEntry, row) for row in bust_rows],
        starts={(int(t), int(p)): int(stack) for t, p, stack in start_rows},
        collected=int(collected_rows[0][0]),
    )


_LOCK_TABLES = (
    f"SELECT {columns(PokerTable, 'p')} FROM {table(PokerTable)} p WHERE p.id = ANY(%s) ORDER BY p.id FOR UPDATE"
)


def lock_tables(*, table_ids: Sequence[int]) -> list[PokerTable]:
    """The tables ``table_ids`` locked ``FOR UPDATE``, in id order (the step's
    balancing moves' destinations), inside the caller's transaction."""
    ((rows),) = read_together([(_LOCK_TABLES, [list(table_ids)])])
    return [instance(PokerTable, row) for row in rows]
