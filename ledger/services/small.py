"""A small batch (one command's few events and transfers) in two round trips on
PostgreSQL: ``settle_batch``'s result, rows and errors without its bulk
machinery (head reads, ``pg_get_serial_sequence``, COPY), which costs a
command of a handful of rows more than the rows themselves.

1. one prepared statement claims the idempotency key and draws the event and
   transfer ids from their sequences;
2. one pipeline writes the events (hash-chained onto the heads the caller
   read, ``StreamAppend.head_hash``), applies the balances (the conditional
   UPDATE of ``apply_deltas``), writes the transfer rows, their statement
   lines (each balance after derived on the server from the account's new
   balance) and the result under the key.

Anything else (SQLite, holds, an append whose head the caller did not read)
goes through ``settle_batch`` unchanged. Runs inside the caller's transaction.

``small_batch_writes``: the same rows as one statement of data-modifying
``WITH`` parts (the ids from the columns' defaults, nothing read before), for
a caller that sends it with its own writes (``games.poker.store.act``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import psycopg
from django.db import IntegrityError, connection, transaction

from casino.collector import collector_paused
from ledger.errors import IdempotencyKeyReused, InvalidEvent, StaleStreamVersion
from ledger.services.batch import (
    BatchResult,
    TransferSpec,
    _hash_appends,
    _plan_appends,
    prepare_batch,
    settle_batch,
)
from ledger.services.events import StreamAppend
from ledger.services.postings import (
    MAX_KEY,
    Leg,
    bulk_cursor,
    claim,
    diagnose_refusal,
    net_deltas,
    pipelined,
    record_result,
    text_array,
)

_SEQUENCES: dict[str, tuple[str, str]] = {}  # database name -> (event id sequence, transfer id sequence)


def _sequences(cursor: Any) -> tuple[str, str]:
    name = connection.settings_dict["NAME"]
    if name not in _SEQUENCES:
        cursor.execute(
            "SELECT pg_get_serial_sequence('ledger_event', 'id'), pg_get_serial_sequence('ledger_transfer', 'id')"
        )
        event_seq, transfer_seq = cursor.fetchone()
        _SEQUENCES[name] = (str(event_seq), str(transfer_seq))
    return _SEQUENCES[name]


def _needs_bulk(appends: Sequence[StreamAppend]) -> bool:
    return connection.vendor != "postgresql" or any(
        a.expected_version is None or (a.expected_version and a.head_hash is None) for a in appends
    )


def settle_small_batch(
    *, idempotency_key: str, currency: str, appends: Sequence[StreamAppend], transfers: Sequence[TransferSpec] = ()
) -> BatchResult:
    """``settle_batch`` (appends and transfers, no holds) for a command's few rows:
    the same rows, result and errors, in two round trips (module docstring) when
    every append is new (expected version 0) or carries its head's hash."""
    if _needs_bulk(appends) or not idempotency_key or len(idempotency_key) > MAX_KEY:
        return settle_batch(idempotency_key=idempotency_key, currency=currency, appends=appends, transfers=transfers)
    batch = prepare_batch(idempotency_key=idempotency_key, currency=currency, appends=appends, transfers=transfers)
    with collector_paused(), transaction.atomic(savepoint=False), bulk_cursor() as cursor:
        events = sum(len(a.events) for a in appends)
        event_seq, transfer_seq = _sequences(cursor)
        cursor.execute(
            "WITH c AS (INSERT INTO ledger_idempotency (key, command, request_hash, result, created_at) "
            "VALUES (%s, 'settle_batch', %s, NULL, %s) ON CONFLICT (key) DO NOTHING RETURNING 1) "
            "SELECT (SELECT count(*) FROM c), ARRAY(SELECT nextval(%s::regclass) FROM generate_series(1, %s)), "
            "ARRAY(SELECT nextval(%s::regclass) FROM generate_series(1, %s))",
            [idempotency_key, batch.digest, batch.at, event_seq, events, transfer_seq, len(transfers)],
            prepare=True,
        )
        claimed, event_ids, transfer_ids = cursor.fetchone()
        if not claimed:
            first = claim(cursor, key=idempotency_key, command="settle_batch", digest=batch.digest, at=batch.at)
            assert first is not None  # claimed by another transaction, which committed (the unique key waited)
            return BatchResult(**first)
        planned = _plan_appends(cursor, appends, {})  # every head is known: nothing is read
        prepared = _hash_appends(planned, batch.at, batch.encoded, batch.metadata_jsons)
        by_ref = {(p.stream_id, p.version): i for p, i in zip(prepared, event_ids, strict=True)}
        legs = [Leg(t.debit, t.credit, t.amount, currency, t.kind, by_ref[(t.cause.stream_id, t.cause.version)])
                for t in transfers]  # fmt: skip
        deltas = net_deltas(legs)
        ids = sorted(deltas)
        result = BatchResult(len(event_ids), len(legs), min(event_ids, default=0), max(event_ids, default=0))
        updated = psycopg.Cursor(connection.connection)
        try:
            with pipelined():
                if prepared:
                    cursor.execute(
                        "INSERT INTO ledger_event (id, stream_id, version, type, schema_version, data, metadata, "
                        "recorded_at, prev_hash, hash, mac) VALUES "
                        + ", ".join(["(%s, %s, %s, %s, %s, %s::json, %s::json, %s, %s, %s, %s)"] * len(prepared)),
                        [v for p, i in zip(prepared, event_ids, strict=True) for v in (i, *p)],
                        prepare=True,
                    )
                if legs:
                    updated.execute(
                        "UPDATE ledger_account a SET balance = a.balance + v.delta "
                        "FROM unnest(%s::text::bigint[], %s::text::bigint[]) AS v(id, delta) "
                        "WHERE a.id = v.id AND a.currency = %s AND (a.may_go_negative OR a.balance + v.delta >= 0) "
                        "RETURNING a.id, a.balance",
                        [text_array(ids), text_array(deltas[i] for i in ids), currency],
                        prepare=True,
                    )
                    _insert_legs(connection.connection, legs, transfer_ids, batch.at)
                with bulk_cursor() as last:
                    record_result(last, key=idempotency_key, result=asdict(result))
            if legs:
                balances = {int(row[0]) for row in updated.fetchall()}
                if len(balances) != len(ids):
                    diagnose_refusal(cursor, [i for i in ids if i not in balances], deltas, currency)
        except IntegrityError as exc:
            raise StaleStreamVersion("another writer appended to a stream of this batch") from exc
        finally:
            updated.close()
        return result


def _insert_legs(pg: Any, legs: list[Leg], transfer_ids: list[int], at: Any) -> None:
    """The transfer rows under their drawn ids and both statement lines of each, in
    leg order; each line's balance after is the account's new balance less what
    the account's later lines of this batch moved (``statement_rows``' running
    balance, derived on the server)."""
    later: dict[int, int] = {}
    lines: list[tuple[int, int, int, int, int]] = []  # account, transfer, event, signed amount, moved later
    for leg, transfer in reversed(list(zip(legs, transfer_ids, strict=True))):
        lines.append((leg.credit, transfer, leg.event_id, leg.amount, later.get(leg.credit, 0)))
        later[leg.credit] = later.get(leg.credit, 0) + leg.amount
        lines.append((leg.debit, transfer, leg.event_id, -leg.amount, later.get(leg.debit, 0)))
        later[leg.debit] = later.get(leg.debit, 0) - leg.amount
    lines.reverse()
    with psycopg.Cursor(pg) as cursor:
        cursor.execute(
            "INSERT INTO ledger_transfer (id, debit_account_id, credit_account_id, amount, currency, kind, event_id, "
            "created_at) VALUES " + ", ".join(["(%s, %s, %s, %s, %s, %s, %s, %s)"] * len(legs)),
            [v for leg, i in zip(legs, transfer_ids, strict=True)
             for v in (i, leg.debit, leg.credit, leg.amount, leg.currency, leg.kind, leg.event_id, at)],
            prepare=True,
        )  # fmt: skip
        cursor.execute(
            "INSERT INTO ledger_statement_line (account_id, transfer_id, event_id, amount, balance_after, created_at) "
            "SELECT v.account, v.transfer, v.event, v.amount, a.balance - v.later, %s "
            "FROM (VALUES " + ", ".join(["(%s::int, %s::bigint, %s::bigint, %s::bigint, %s::bigint, %s::bigint)"]
                                         * len(lines)) + ") AS v(n, account, transfer, event, amount, later) "
            "JOIN ledger_account a ON a.id = v.account ORDER BY v.n",
            [at, *[v for n, line in enumerate(lines) for v in (n, *line)]],
            prepare=True,
        )  # fmt: skip


# --- the same writes as one statement for the caller's own round trip ---------------------------


@dataclass
class SmallWrites:
    """A small batch as one statement of data-modifying ``WITH`` parts.

    ``statements``: that statement alone (with its parameters), to send in the
    caller's pipeline; ``finish``, called with its cursor once it ran, checks the
    claim and the balances (raising as ``settle_batch`` would) and gives the
    batch's result. ``parts(prefix)``: the same ``WITH`` parts (their names
    prefixed), their parameters and the expressions to select from them, for a
    caller that sends them inside a statement of its own; ``finish_row`` then
    takes the values of those expressions. The events' and transfers' ids come
    from their columns' defaults, so nothing is read before sending."""

    parts: Callable[[str], tuple[list[str], list[Any], list[str]]]
    finish_row: Callable[[Sequence[Any]], BatchResult]

    @property
    def statements(self) -> list[tuple[str, list[Any]]]:
        parts, params, selects = self.parts("")
        return [(f"WITH {', '.join(parts)} SELECT {', '.join(selects)}", params)]

    def finish(self, cursors: Sequence[Any]) -> BatchResult:
        row = cursors[0].fetchone()
        assert row is not None
        return self.finish_row(row)


def small_batch_writes(
    *, idempotency_key: str, currency: str, appends: Sequence[StreamAppend], transfers: Sequence[TransferSpec] = ()
) -> SmallWrites | None:
    """``settle_small_batch`` as one statement (``SmallWrites``) for one append
    whose head the caller read; ``None`` when the batch needs
    ``settle_small_batch`` (SQLite, several appends, a head not read). Contract:
    the key is new; the caller claimed its own command's key in this
    transaction first, so a retry never reaches here (a key claimed already is
    refused with ``IdempotencyKeyReused``, rolling the caller's transaction back).

    The parts, run by PostgreSQL as one statement (each sees the others' rows
    only through their ``RETURNING``): the events (``ev``); the key's claim with
    its result, the events' first and last ids (``cl``, ``ON CONFLICT DO
    NOTHING``: nothing returned when claimed already); the balances by
    conditional UPDATE (``acc``, returning each account's new balance); the
    transfer rows in leg order (``tr``, each naming its event by version); both
    statement lines of each (``ln``, the balance after: the account's new
    balance less what its later lines move). The same rows as
    ``settle_small_batch``."""
    if len(appends) != 1 or _needs_bulk(appends) or not idempotency_key or len(idempotency_key) > MAX_KEY:
        return None
    batch = prepare_batch(idempotency_key=idempotency_key, currency=currency, appends=appends, transfers=transfers)
    with collector_paused():
        # The stream id and events checked as ``settle_batch`` checks them; the head
        # is the caller's (``_needs_bulk``: nothing is read).
        planned = _plan_appends(None, appends, {})
        append, first, _ = planned[0]
        prepared = _hash_appends(planned, batch.at, batch.encoded, batch.metadata_jsons)
        stream, last = append.stream_id, first + len(prepared) - 1
        legs = [(t.debit, t.credit, t.amount, t.kind, t.cause.version) for t in transfers]
        for t in transfers:
            if t.cause.stream_id != stream or not first <= t.cause.version <= last:
                raise InvalidEvent(f"{t.cause} is not appended by this batch", stream_id=t.cause.stream_id)
        deltas: dict[int, int] = {}
        for debit, credit, amount, _, _ in legs:
            deltas[debit] = deltas.get(debit, 0) - amount
            deltas[credit] = deltas.get(credit, 0) + amount
        ids = sorted(deltas)
        params: list[Any] = [v for p in prepared for v in p]
        params += [idempotency_key, batch.digest, len(prepared), len(legs), batch.at]
        if legs:
            params += [text_array(ids), text_array(deltas[i] for i in ids), currency]
            params += _leg_params(legs, currency, batch.at)
    events_sql = ", ".join(["(%s, %s, %s, %s, %s::json, %s::json, %s, %s, %s, %s)"] * len(prepared))
    legs_sql = _leg_parts(len(legs)) if legs else None

    def parts(p: str) -> tuple[list[str], list[Any], list[str]]:
        sql = [
            f"{p}ev AS (INSERT INTO ledger_event (stream_id, version, type, schema_version, data, metadata, "
            f"recorded_at, prev_hash, hash, mac) VALUES {events_sql} RETURNING id, version)",
            f"{p}cl AS (INSERT INTO ledger_idempotency (key, command, request_hash, result, created_at) "
            "SELECT %s::text, 'settle_batch', %s::text, jsonb_build_object('events', %s::int, 'transfers', %s::int, "
            f"'first_event_id', min(id), 'last_event_id', max(id)), %s::timestamptz FROM {p}ev "
            "ON CONFLICT (key) DO NOTHING RETURNING 1)",
        ]
        selects = [f"(SELECT count(*) FROM {p}cl)", f"ARRAY(SELECT id FROM {p}ev ORDER BY id)"]
        if legs_sql is not None:
            sql += [part.replace("{p}", p) for part in legs_sql]
            selects.append(f"ARRAY(SELECT id FROM {p}acc)")
        return sql, params, selects

    def finish_row(row: Sequence[Any]) -> BatchResult:
        if not row[0]:
            raise IdempotencyKeyReused(f"idempotency key {idempotency_key!r} was claimed already",
                                       key=idempotency_key, command="settle_batch")  # fmt: skip
        event_ids = [int(i) for i in row[1]]
        if legs:
            updated = {int(i) for i in row[2]}
            if len(updated) != len(ids):
                with connection.cursor() as cursor:
                    diagnose_refusal(cursor, [i for i in ids if i not in updated], deltas, currency)
        return BatchResult(len(event_ids), len(legs), min(event_ids, default=0), max(event_ids, default=0))

    return SmallWrites(parts, finish_row)


def _leg_lines(legs: list[tuple[int, int, int, str, int]]) -> list[tuple[int, int, int, int]]:
    """Both statement lines of each leg, in order: (leg index, account, signed
    amount, what the account's later lines of this batch move)."""
    later: dict[int, int] = {}
    lines: list[tuple[int, int, int, int]] = []
    for n in range(len(legs) - 1, -1, -1):
        debit, credit, amount, _, _ = legs[n]
        lines.append((n, credit, amount, later.get(credit, 0)))
        later[credit] = later.get(credit, 0) + amount
        lines.append((n, debit, -amount, later.get(debit, 0)))
        later[debit] = later.get(debit, 0) - amount
    lines.reverse()
    return lines


def _leg_params(legs: list[tuple[int, int, int, str, int]], currency: str, at: Any) -> list[Any]:
    """The parameters of ``_leg_parts`` after the balances' (in their order)."""
    lines = _leg_lines(legs)
    return [
        currency, at, *[v for n, leg in enumerate(legs) for v in (n, *leg)],
        at, *[v for n, line in enumerate(lines) for v in (n, *line)],
    ]  # fmt: skip


_LEG_PARTS: dict[int, list[str]] = {}


def _leg_parts(count: int) -> list[str]:
    """The balances (``acc``), the transfer rows (``tr``: ids from their default,
    in leg order; each names its event by version) and both statement lines of
    each (``ln``) as ``WITH`` parts, ``{p}`` standing for their names' prefix."""
    if count not in _LEG_PARTS:
        _LEG_PARTS[count] = [
            "{p}acc AS (UPDATE ledger_account a SET balance = a.balance + v.delta "
            "FROM unnest(%s::text::bigint[], %s::text::bigint[]) AS v(id, delta) "
            "WHERE a.id = v.id AND a.currency = %s AND (a.may_go_negative OR a.balance + v.delta >= 0) "
            "RETURNING a.id, a.balance)",
            "{p}tr AS (INSERT INTO ledger_transfer (debit_account_id, credit_account_id, amount, currency, kind, "
            "event_id, created_at) SELECT v.debit, v.credit, v.amount, %s, v.kind, e.id, %s FROM (VALUES "
            + ", ".join(["(%s::int, %s::bigint, %s::bigint, %s::bigint, %s::text, %s::int)"] * count)
            + ") AS v(n, debit, credit, amount, kind, version) JOIN {p}ev e ON e.version = v.version "
            "ORDER BY v.n RETURNING id, event_id)",
            "{p}ln AS (INSERT INTO ledger_statement_line (account_id, transfer_id, event_id, amount, balance_after, "
            "created_at) SELECT v.account, t.id, t.event_id, v.amount, a.balance - v.later, %s FROM (VALUES "
            + ", ".join(["(%s::int, %s::int, %s::bigint, %s::bigint, %s::bigint)"] * (2 * count))
            + ") AS v(n, leg, account, amount, later) "
            "JOIN (SELECT id, event_id, row_number() OVER (ORDER BY id) - 1 AS leg FROM {p}tr) t ON t.leg = v.leg "
            "JOIN {p}acc a ON a.id = v.account ORDER BY v.n RETURNING 1)",
        ]
    return _LEG_PARTS[count]
