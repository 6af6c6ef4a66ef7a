"""A player's poker action read in one round trip, and the table's pacing
written without the ORM (PostgreSQL; prepared statements).

``read_act`` sends its statements together in psycopg's pipeline mode, in
this order, inside the caller's transaction: the idempotency key's claim, the
table row ``FOR UPDATE``, then the table's current hand row, the seat rows
dealt into it, the hand stream's head and the ledger accounts (the seats' and
the hand's pot and the table's rake). Each statement takes its own snapshot
(READ COMMITTED), so whatever follows the lock reads what the transaction
holding the lock before us committed: the same reads, in the same order, as
``lock_table``, ``PokerHand.objects.filter(...)`` and ``dealt_in_seats`` one
after the other, in one round trip instead of several.

The rows come back as model instances (``Model.from_db``), the same the ORM
would build, so the services and projectors use them unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import psycopg
from django.db import IntegrityError, connection, models

from games.poker.models import PokerHand, PokerSeat, PokerTable
from ledger.errors import StaleStreamVersion
from ledger.services.events import now as ledger_now
from ledger.services.postings import bulk_cursor, claim, pipelined, record_result
from ledger.services.small import SmallWrites

M = TypeVar("M", bound=models.Model)


def _columns(model: type[models.Model], alias: str) -> str:
    return ", ".join(f"{alias}.{connection.ops.quote_name(str(f.column))}" for f in model._meta.concrete_fields)


def _instance(model: type[M], values: tuple[Any, ...]) -> M:
    """``values`` (every concrete column, in field order) as the ORM's instance,
    through the fields' converters (JSON text -> Python)."""
    converted = [
        f.from_db_value(v, None, connection) if v is not None and hasattr(f, "from_db_value") else v
        for f, v in zip(model._meta.concrete_fields, values, strict=True)
    ]
    return model.from_db(connection.alias, [f.attname for f in model._meta.concrete_fields], converted)


_CLAIM = (
    "INSERT INTO ledger_idempotency (key, command, request_hash, result, created_at) "
    "VALUES (%s, %s, %s, NULL, %s) ON CONFLICT (key) DO NOTHING RETURNING key"
)
_LOCK = f"SELECT {_columns(PokerTable, 't')} FROM games_pokertable t WHERE t.id = %s FOR UPDATE"
_HAND = (
    f"SELECT {_columns(PokerHand, 'h')} FROM games_pokerhand h JOIN games_pokertable t "
    "ON h.hand_id = t.current_hand_id WHERE t.id = %s AND t.current_hand_id <> ''"
)
# ``dealt_in_seats``: the seat rows linked from the current hand's players.
_SEATS = (
    f"SELECT {_columns(PokerSeat, 's')} FROM games_pokerseat s "
    "JOIN games_pokerhandplayer hp ON hp.seat_id = s.id JOIN games_pokerhand h ON h.id = hp.hand_id "
    "JOIN games_pokertable t ON h.hand_id = t.current_hand_id WHERE t.id = %s AND t.current_hand_id <> ''"
)
# The hand stream's head (``games.poker.event_types.hand_stream``).
_HEAD = (
    "SELECT e.version, e.hash FROM ledger_event e JOIN games_pokertable t "
    "ON e.stream_id = 'poker-hand-' || t.current_hand_id WHERE t.id = %s AND t.current_hand_id <> '' "
    "ORDER BY e.version DESC LIMIT 1"
)
# The accounts an action may move (``games.poker.services.tables``: seat_account,
# pot_account, rake_account; ``ledger.services.money.account_key``).
_ACCOUNTS = (
    "SELECT a.key, a.id FROM ledger_account a WHERE a.key = ANY(ARRAY("
    "SELECT 'poker_seat:poker-table:' || s.table_id || ':player:' || s.player_id || ':' || t.currency "
    "FROM games_pokerseat s JOIN games_pokertable t ON t.id = s.table_id WHERE t.id = %s "
    "UNION ALL SELECT 'poker_pot:poker-hand:' || t.current_hand_id || ':' || t.currency "
    "FROM games_pokertable t WHERE t.id = %s "
    "UNION ALL SELECT 'rake:poker-table:' || t.id || ':' || t.currency FROM games_pokertable t WHERE t.id = %s))"
)


@dataclass
class ActRead:
    """What ``read_act`` found (``claimed`` false: a retry of the key, nothing else read)."""

    claimed: bool
    table: PokerTable | None = None
    hand: PokerHand | None = None
    seats: dict[int, PokerSeat] = field(default_factory=dict)
    head: tuple[int, str] | None = None  # (version, hash) of the hand stream's last event
    accounts: dict[str, int] = field(default_factory=dict)  # ledger account id by key


def read_act(*, table_id: int, key: str, command: str, digest: str) -> ActRead:
    """Claim ``key`` for ``command`` and read the action's context, in one round
    trip, inside the caller's transaction (module docstring). A table that does
    not exist reads as ``table`` None (the caller refuses; its claim rolls back)."""
    pg = connection.connection
    with bulk_cursor() as first:
        cursors = [first] + [psycopg.Cursor(pg) for _ in range(5)]
        claim_c, lock_c, hand_c, seats_c, head_c, accounts_c = cursors
        try:
            with pipelined():
                claim_c.execute(_CLAIM, [key, command, digest, ledger_now()], prepare=True)
                lock_c.execute(_LOCK, [table_id], prepare=True)
                hand_c.execute(_HAND, [table_id], prepare=True)
                seats_c.execute(_SEATS, [table_id], prepare=True)
                head_c.execute(_HEAD, [table_id], prepare=True)
                accounts_c.execute(_ACCOUNTS, [table_id, table_id, table_id], prepare=True)
            claimed = claim_c.fetchone() is not None
            table_row = lock_c.fetchone()
            hand_row = hand_c.fetchone()
            seat_rows = seats_c.fetchall()
            head = head_c.fetchone()
            accounts = {k: int(v) for k, v in accounts_c.fetchall()}
        finally:
            for cursor in cursors[1:]:
                cursor.close()
    if not claimed:
        return ActRead(False)
    seats = {seat.seat_number: seat for seat in (_instance(PokerSeat, row) for row in seat_rows)}
    return ActRead(
        True,
        _instance(PokerTable, table_row) if table_row is not None else None,
        _instance(PokerHand, hand_row) if hand_row is not None else None,
        seats,
        (int(head[0]), head[1]) if head is not None else None,
        accounts,
    )


def first_result(*, key: str, command: str, digest: str) -> Any:
    """The first result stored under ``key`` (``IdempotencyKeyReused`` for another request)."""
    with connection.cursor() as cursor:
        return claim(cursor, key=key, command=command, digest=digest, at=ledger_now())


_RESULT = "UPDATE ledger_idempotency SET result = %s::jsonb WHERE key = %s"


def save_result(*, key: str, result: dict[str, Any]) -> None:
    """The command's result under its claimed key (``record_result``'s write)."""
    if not _defer(_RESULT, [json.dumps(result), key]):
        with connection.cursor() as cursor:
            record_result(cursor, key=key, result=result)


_SET_PHASE = "UPDATE games_pokertable SET phase = %s, phase_seq = %s, deadline = %s WHERE id = %s"


def save_table_phase(*, table_id: int, phase: str, phase_seq: int, deadline: datetime | None) -> None:
    """The locked table's phase, sequence and deadline (``set_table``'s write), prepared."""
    params = [phase, phase_seq, deadline, table_id]
    if not _defer(_SET_PHASE, params):
        with bulk_cursor() as cursor:
            cursor.execute(_SET_PHASE, params, prepare=True)


# --- deferred writes: the action's writes sent together ----------------------------------------------


@dataclass
class _Queue:
    writes: list[tuple[str, list[Any], bool]] = field(default_factory=list)  # sql, params, must change one row
    finishers: list[tuple[int, int, Callable[[Sequence[Any]], Any]]] = field(default_factory=list)


_QUEUE: ContextVar[_Queue | None] = ContextVar("poker_deferred_writes", default=None)


@contextmanager
def deferred_writes() -> Iterator[None]:
    """PostgreSQL: inside, the ledger batch of the step (``queue_batch``),
    ``save_row`` (of a row that exists), ``save_table_phase`` and ``save_result``
    queue their statements; the queue is sent in one pipeline when the block ends
    without an error, or earlier by ``stop_deferring``, and checked then (the
    ledger's refusals; each UPDATE of a row must find it, else ``RuntimeError``),
    rolling the caller's transaction back on a refusal. Only for a step whose
    other statements read none of the queued rows meanwhile (the caller's
    contract). Elsewhere: nothing deferred."""
    if connection.vendor != "postgresql":
        yield
        return
    token = _QUEUE.set(_Queue())
    try:
        yield
        stop_deferring()
    finally:
        _QUEUE.reset(token)


def deferring() -> bool:
    return _QUEUE.get() is not None


def queue_batch(writes: SmallWrites) -> None:
    """Queue a ledger batch's statements (``ledger.services.small.small_batch_writes``)."""
    queue = _QUEUE.get()
    assert queue is not None, "queue_batch outside deferred_writes"
    queue.finishers.append((len(queue.writes), len(writes.statements), writes.finish))
    queue.writes += [(sql, params, False) for sql, params in writes.statements]


def stop_deferring() -> None:
    """Send the queued statements now and check them; later writes of the block run at once."""
    queue = _QUEUE.get()
    if queue is None:
        return
    _QUEUE.set(None)
    if not queue.writes:
        return
    pg = connection.connection
    cursors = [psycopg.Cursor(pg) for _ in queue.writes]
    try:
        try:
            with bulk_cursor(), pipelined():
                for cursor, (sql, params, _) in zip(cursors, queue.writes, strict=True):
                    cursor.execute(sql, params, prepare=True)
        except IntegrityError as exc:
            if queue.finishers:  # another writer appended to the hand's stream meanwhile
                raise StaleStreamVersion("another writer appended to the stream of this step") from exc
            raise
        for start, count, finish in queue.finishers:
            finish(cursors[start : start + count])
        missing = [sql for cursor, (sql, _, one) in zip(cursors, queue.writes, strict=True)
                   if one and cursor.rowcount != 1]  # fmt: skip
    finally:
        for cursor in cursors:
            cursor.close()
    if missing:
        raise RuntimeError(f"a deferred write found no row: {missing[0]}")


def _defer(sql: str, params: list[Any]) -> bool:
    queue = _QUEUE.get()
    if queue is None:
        return False
    queue.writes.append((sql, params, True))
    return True


def save_row(row: models.Model, fields: Sequence[str] | None = None) -> None:
    """``row.save()`` (``fields``: ``save(update_fields=fields)``) of a row that
    exists, as one prepared UPDATE by primary key on PostgreSQL, without the ORM
    compiling it; a row not yet saved, or one the UPDATE does not find, is saved
    by the ORM (SQLite: always)."""
    if connection.vendor != "postgresql" or row._state.adding or row.pk is None:
        row.save(update_fields=fields)
        return
    meta = row._meta
    chosen = [f for f in meta.concrete_fields if not f.primary_key and (fields is None or f.name in fields)]
    sql = _UPDATES.get((meta.db_table, tuple(f.attname for f in chosen)))
    if sql is None:
        sets = ", ".join(f"{connection.ops.quote_name(str(f.column))} = %s" for f in chosen)
        sql = f"UPDATE {connection.ops.quote_name(meta.db_table)} SET {sets} WHERE id = %s"
        _UPDATES[(meta.db_table, tuple(f.attname for f in chosen))] = sql
    params = [f.get_db_prep_save(getattr(row, f.attname), connection) for f in chosen]
    if _defer(sql, [*params, row.pk]):
        return
    with bulk_cursor() as cursor:
        cursor.execute(sql, [*params, row.pk], prepare=True)
        updated = cursor.rowcount
    if updated != 1:
        row.save(update_fields=fields)


_UPDATES: dict[tuple[str, tuple[str, ...]], str] = {}
