"""A player's poker action read in one round trip, and the table's pacing
written without the ORM (PostgreSQL; prepared statements).

``read_act`` sends its four statements together in psycopg's pipeline mode,
in this order, inside the caller's transaction: the idempotency key's claim,
the table row ``FOR UPDATE``, then the table's current hand row with the hand
stream's head and the ledger accounts (the seats' and the hand's pot and the
table's rake) in one row, and the seat rows dealt into the hand. Each
statement takes its own snapshot (READ COMMITTED), so whatever follows the
lock reads what the transaction holding the lock before us committed: the
same reads, in the same order, as ``lock_table``,
``PokerHand.objects.filter(...)`` and ``dealt_in_seats`` one after the other,
in one round trip instead of several. The action's writes go at its end as
one statement (``deferred_writes``).

The rows come back as model instances (``Model.from_db``), the same the ORM
would build, so the services and projectors use them unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg
from django.db import IntegrityError, connection, models

from games.poker.models import PokerHand, PokerHandPlayer, PokerSeat, PokerTable
from games.poker.store.rows import columns, instance, read_together
from ledger.errors import IdempotencyKeyReused, StaleStreamVersion
from ledger.services.events import now as ledger_now
from ledger.services.postings import (
    MAX_KEY,
    allow_explicit_prepare,
    bulk_cursor,
    claim,
    pipelined,
    record_result,
    text_array,
)
from ledger.services.small import SmallWrites

_CLAIM = (
    "INSERT INTO ledger_idempotency (key, command, request_hash, result, created_at) "
    "VALUES (%s, %s, %s, NULL, %s) ON CONFLICT (key) DO NOTHING RETURNING key"
)
_LOCK = f"SELECT {columns(PokerTable, 't')} FROM games_pokertable t WHERE t.id = %s FOR UPDATE"
# The table's current hand row, its stream's head (``games.poker.event_types.hand_stream``)
# and the ledger accounts an action may move (``games.poker.services.tables``:
# seat_account, pot_account, rake_account; ``ledger.services.money.account_key``),
# in one row (no row: no such table; the hand's columns null: no hand).
_HAND_HEAD_ACCOUNTS = (
    f"SELECT {columns(PokerHand, 'h')}, hd.version, hd.hash, ac.keys, ac.ids FROM games_pokertable t "
    "LEFT JOIN games_pokerhand h ON t.current_hand_id <> '' AND h.hand_id = t.current_hand_id "
    "LEFT JOIN LATERAL (SELECT e.version, e.hash FROM ledger_event e WHERE t.current_hand_id <> '' "
    "AND e.stream_id = 'poker-hand-' || t.current_hand_id ORDER BY e.version DESC LIMIT 1) hd ON true "
    "CROSS JOIN LATERAL (SELECT array_agg(a.key) AS keys, array_agg(a.id) AS ids FROM ledger_account a "
    "WHERE a.key = ANY(ARRAY("
    "SELECT 'poker_seat:poker-table:' || s.table_id || ':player:' || s.player_id || ':' || t.currency "
    "FROM games_pokerseat s WHERE s.table_id = t.id "
    "UNION ALL SELECT 'poker_pot:poker-hand:' || t.current_hand_id || ':' || t.currency "
    "UNION ALL SELECT 'rake:poker-table:' || t.id || ':' || t.currency))) ac "
    "WHERE t.id = %s"
)
_HAND_COLUMNS = len(PokerHand._meta.concrete_fields)
# ``dealt_in_seats``: the seat rows linked from the current hand's players.
_SEATS = (
    f"SELECT {columns(PokerSeat, 's')} FROM games_pokerseat s "
    "JOIN games_pokerhandplayer hp ON hp.seat_id = s.id JOIN games_pokerhand h ON h.id = hp.hand_id "
    "JOIN games_pokertable t ON h.hand_id = t.current_hand_id WHERE t.id = %s AND t.current_hand_id <> ''"
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
    not exist reads as ``table`` None (the caller refuses; its claim rolls back).
    A key no command may claim is refused as ``claim`` refuses it."""
    if not key or len(key) > MAX_KEY:
        raise IdempotencyKeyReused(f"idempotency key must be 1..{MAX_KEY} characters", code="invalid_idempotency_key")
    claim_rows, table_rows, hand_rows, seat_rows = read_together([
        (_CLAIM, [key, command, digest, ledger_now()]), (_LOCK, [table_id]), (_HAND_HEAD_ACCOUNTS, [table_id]),
        (_SEATS, [table_id]),
    ])  # fmt: skip
    claimed = bool(claim_rows)
    table_row = table_rows[0] if table_rows else None
    hand_row = hand_rows[0] if hand_rows else None
    if not claimed:
        return ActRead(False)
    seats = {seat.seat_number: seat for seat in (instance(PokerSeat, row) for row in seat_rows)}
    hand = head = None
    accounts: dict[str, int] = {}
    if hand_row is not None:
        version, head_hash, keys, ids = hand_row[_HAND_COLUMNS:]
        if hand_row[0] is not None:
            hand = instance(PokerHand, hand_row[:_HAND_COLUMNS])
        if version is not None:
            head = (int(version), head_hash)
        accounts = {k: int(v) for k, v in zip(keys or (), ids or (), strict=True)}
    return ActRead(
        True, instance(PokerTable, table_row) if table_row is not None else None, hand, seats, head, accounts
    )


def first_result(*, key: str, command: str, digest: str) -> Any:
    """The first result stored under ``key`` (``IdempotencyKeyReused`` for another request)."""
    with connection.cursor() as cursor:
        return claim(cursor, key=key, command=command, digest=digest, at=ledger_now())


_RESULT = "UPDATE ledger_idempotency SET result = %s::jsonb WHERE key = %s"


def save_result(*, key: str, result: dict[str, Any]) -> None:
    """The command's result under its claimed key (``record_result``'s write)."""
    if not _defer(_RESULT, [json.dumps(result), key], ("ledger_idempotency", key)):
        with connection.cursor() as cursor:
            record_result(cursor, key=key, result=result)


_SET_PHASE = "UPDATE games_pokertable SET phase = %s, phase_seq = %s, deadline = %s WHERE id = %s"


def save_table_phase(*, table_id: int, phase: str, phase_seq: int, deadline: datetime | None) -> None:
    """The locked table's phase, sequence and deadline (``set_table``'s write), prepared."""
    params = [phase, phase_seq, deadline, table_id]
    if not _defer(_SET_PHASE, params, (PokerTable._meta.db_table, table_id)):
        with bulk_cursor() as cursor:
            cursor.execute(_SET_PHASE, params, prepare=True)


# --- deferred writes: the action's writes sent together ----------------------------------------------


@dataclass
class _Queue:
    # sql, params, the rows it changes (table, key), whether it must change exactly one row
    writes: list[tuple[str, list[Any], tuple[str, Any], bool]] = field(default_factory=list)
    batches: list[tuple[int, SmallWrites]] = field(default_factory=list)  # (its place among the writes, the batch)


_QUEUE: ContextVar[_Queue | None] = ContextVar("poker_deferred_writes", default=None)


@contextmanager
def deferred_writes() -> Iterator[None]:
    """PostgreSQL: inside, the ledger batch of the step (``queue_batch``),
    ``save_row`` (of a row that exists), ``save_table_phase`` and ``save_result``
    queue their statements; the queue is sent in one round trip when the block
    ends without an error, or earlier by ``stop_deferring``, and checked then
    (the ledger's refusals; each UPDATE of a row must find it, else
    ``RuntimeError``), rolling the caller's transaction back on a refusal. Only
    for a step whose other statements read none of the queued rows meanwhile
    (the caller's contract). Elsewhere: nothing deferred."""
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
    """Queue a ledger batch (``ledger.services.small.small_batch_writes``)."""
    queue = _QUEUE.get()
    assert queue is not None, "queue_batch outside deferred_writes"
    queue.batches.append((len(queue.writes), writes))


def stop_deferring() -> None:
    """Send the queued writes now and check them; later writes of the block run at once.

    They go as one statement: each write a data-modifying ``WITH`` part (the
    ledger batch's parts, each UPDATE ``RETURNING`` its row), selecting what
    the checks need. PostgreSQL runs the parts of one statement on one snapshot,
    none seeing another's rows but through ``RETURNING``: so only writes that
    read nothing of each other (the ledger batch's parts are built so), and no
    two UPDATEs that may meet on a row (then the queue goes as a pipeline of
    statements, one after the other, instead): two writes of one target, a
    write of many rows beside another write of its table, two ledger batches.
    A conflict on an event's (stream, version) is ``StaleStreamVersion``."""
    queue = _QUEUE.get()
    if queue is None:
        return
    _QUEUE.set(None)
    if not queue.writes and not queue.batches:
        return
    targets = [target for _, _, target, _ in queue.writes]
    # A write of many rows (``one`` false: its target names them by another key, e.g. the
    # hand players by hand) may meet any other write of its table.
    spread = {table for _, _, (table, _), one in queue.writes if not one}
    shared = any(sum(table == t for t, _ in targets) > 1 for table in spread)
    # Two batches would UPDATE the same accounts (the step's seats, pot, rake) in one statement.
    if len(set(targets)) == len(targets) and not shared and len(queue.batches) <= 1:
        _send_one(queue)
    else:
        _send_pipeline(queue)


def _send_one(queue: _Queue) -> None:
    parts: list[str] = []
    params: list[Any] = []
    selects: list[str] = []
    spans: list[tuple[int, int, SmallWrites]] = []  # each batch's selects
    for n, (_, batch) in enumerate(queue.batches):
        batch_parts, batch_params, batch_selects = batch.parts(f"b{n}_")
        parts += batch_parts
        params += batch_params
        spans.append((len(selects), len(batch_selects), batch))
        selects += batch_selects
    for n, (sql, write_params, _, _) in enumerate(queue.writes):
        parts.append(f"w{n} AS ({sql} RETURNING 1)")
        params += write_params
    counts = len(selects)
    selects += [f"(SELECT count(*) FROM w{n})" for n in range(len(queue.writes))]
    try:
        row = _fetch_one_raw(f"WITH {', '.join(parts)} SELECT {', '.join(selects)}", params)
    except IntegrityError as exc:
        if queue.batches and _stream_conflict(exc):  # another writer appended to the hand's stream meanwhile
            raise StaleStreamVersion("another writer appended to the stream of this step") from exc
        raise
    assert row is not None
    for start, count, batch in spans:
        batch.finish_row(row[start : start + count])
    missing = [sql for (sql, _, _, one), found in zip(queue.writes, row[counts:], strict=True) if one and found != 1]
    if missing:
        raise RuntimeError(f"a deferred write found no row: {missing[0]}")


def _stream_conflict(exc: IntegrityError) -> bool:
    """The error is an event's (stream, version) taken already: not any other constraint."""
    diag = getattr(exc.__cause__, "diag", None)
    return getattr(diag, "constraint_name", None) == "ledger_event_stream_version_uniq"


_RAW: dict[str, str] = {}


def _fetch_one_raw(sql: str, params: list[Any]) -> Any:
    """The one row of ``sql`` (``%s`` placeholders, no literal ``%``), prepared,
    through psycopg's raw cursor: its ``$n`` placeholders are not parsed again
    on every call, as psycopg does for a statement of more than 50 parameters."""
    raw = _RAW.get(sql)
    if raw is None:
        pieces = sql.split("%s")
        raw = pieces[0] + "".join(f"${n}{piece}" for n, piece in enumerate(pieces[1:], start=1))
        if len(_RAW) < 1024:
            _RAW[sql] = raw
    connection.ensure_connection()
    allow_explicit_prepare(connection.connection)
    with connection.wrap_database_errors, psycopg.RawCursor(connection.connection) as cursor:
        cursor.execute(raw, params, prepare=True)
        return cursor.fetchone()


def _send_pipeline(queue: _Queue) -> None:
    statements: list[tuple[str, list[Any], bool]] = [(sql, params, one) for sql, params, _, one in queue.writes]
    finishers: list[tuple[int, SmallWrites]] = []
    for shift, (place, batch) in enumerate(queue.batches):
        ((sql, params),) = batch.statements
        statements.insert(place + shift, (sql, params, False))
        finishers.append((place + shift, batch))
    pg = connection.connection
    cursors = [psycopg.Cursor(pg) for _ in statements]
    try:
        try:
            with bulk_cursor(), pipelined():
                for cursor, (sql, params, _) in zip(cursors, statements, strict=True):
                    cursor.execute(sql, params, prepare=True)
        except IntegrityError as exc:
            if finishers and _stream_conflict(exc):  # another writer appended to the hand's stream meanwhile
                raise StaleStreamVersion("another writer appended to the stream of this step") from exc
            raise
        for place, batch in finishers:
            batch.finish([cursors[place]])
        missing = [sql for cursor, (sql, _, one) in zip(cursors, statements, strict=True)
                   if one and cursor.rowcount != 1]  # fmt: skip
    finally:
        for cursor in cursors:
            cursor.close()
    if missing:
        raise RuntimeError(f"a deferred write found no row: {missing[0]}")


def _defer(sql: str, params: list[Any], target: tuple[str, Any], *, one: bool = True) -> bool:
    """Queue ``sql`` when deferring (``target``: the rows it changes; ``one``: it must change one row)."""
    queue = _QUEUE.get()
    if queue is None:
        return False
    queue.writes.append((sql, params, target, one))
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
    if _defer(sql, [*params, row.pk], (meta.db_table, row.pk)):
        return
    with bulk_cursor() as cursor:
        cursor.execute(sql, [*params, row.pk], prepare=True)
        updated = cursor.rowcount
    if updated != 1:
        row.save(update_fields=fields)


_UPDATES: dict[tuple[str, tuple[str, ...]], str] = {}


_STACKS_AFTER = (
    "UPDATE games_pokerhandplayer hp SET stack_after = v.stack "
    "FROM unnest(%s::text::int[], %s::text::bigint[]) AS v(seat, stack), games_pokerhand h "
    "WHERE h.hand_id = %s AND hp.hand_id = h.id AND hp.seat_number = v.seat"
)


def save_stacks_after(*, hand_id: str, stacks: Sequence[tuple[int, int]]) -> None:
    """Each hand player's ``stack_after`` (by seat number) of the hand, in one
    prepared UPDATE on PostgreSQL (deferred inside ``deferred_writes``);
    elsewhere one ORM update a seat."""
    if connection.vendor != "postgresql":
        for seat, stack in stacks:
            PokerHandPlayer.objects.filter(hand__hand_id=hand_id, seat_number=seat).update(stack_after=stack)
        return
    params = [text_array(seat for seat, _ in stacks), text_array(stack for _, stack in stacks), hand_id]
    if _defer(_STACKS_AFTER, params, (PokerHandPlayer._meta.db_table, hand_id), one=False):
        return
    with bulk_cursor() as cursor:
        cursor.execute(_STACKS_AFTER, params, prepare=True)
