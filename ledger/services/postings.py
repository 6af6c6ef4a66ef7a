"""Shared machinery of the money services: idempotency claims, balance deltas
applied by conditional UPDATE, transfer rows and statement lines.

Internal to ``ledger.services``; every function takes a cursor inside the
caller's transaction.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, NamedTuple
from uuid import UUID

import psycopg
from django.db import connection

from ledger.canonical import canonical_json
from ledger.errors import (
    CurrencyMismatch,
    IdempotencyKeyReused,
    InsufficientFunds,
    InvalidAmount,
    InvalidTransferKind,
    UnknownAccount,
)
from ledger.services.events import StreamAppend, append_in_cursor

MAX_KEY = 200
MAX_KIND = 16


class Leg(NamedTuple):
    """One transfer row to write: ``amount`` from ``debit`` to ``credit``.
    (A named tuple: a settlement builds tens of thousands.)"""

    debit: int
    credit: int
    amount: int
    currency: str
    kind: str
    event_id: int
    hold_id: UUID | None = None


@contextmanager
def bulk_cursor() -> Iterator[Any]:
    """A cursor for statements with large parameters. PostgreSQL: psycopg's
    server-side binding (arrays travel as parameters, not as SQL text),
    with Django's error translation; SQLite: Django's cursor."""
    if connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            yield cursor
        return
    connection.ensure_connection()
    allow_explicit_prepare(connection.connection)
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
        yield cursor


@contextmanager
def pipelined() -> Iterator[None]:
    """PostgreSQL: psycopg's pipeline mode on Django's connection, so a statement
    sent inside runs on the server while Python carries on (until its rows are
    fetched); errors are raised by then or on leaving. Elsewhere: nothing."""
    if connection.vendor != "postgresql":
        yield
        return
    connection.ensure_connection()
    with connection.wrap_database_errors, connection.connection.pipeline():
        yield


# Django opens psycopg connections with ``prepare_threshold=None``, which turns
# off server-side prepared statements altogether, ``execute(prepare=True)``
# included. The ledger's hot statements ask for preparation explicitly; a
# threshold no query reaches lets exactly those be prepared (parsing and
# planning the bet statement cost more than running it) and nothing else.
EXPLICIT_ONLY = 1 << 30


def allow_explicit_prepare(pg_connection: Any) -> None:
    """Let ``execute(..., prepare=True)`` prepare on this psycopg connection."""
    if pg_connection.prepare_threshold is None:
        pg_connection.prepare_threshold = EXPLICIT_ONLY


def uuid_param(value: UUID) -> str:
    """A UUID as the backend stores it (PostgreSQL uuid; SQLite 32 hex chars)."""
    return str(value) if connection.vendor == "postgresql" else value.hex


def text_array(values: Iterable[Any]) -> str:
    """A PostgreSQL array literal of ints or uuids (cast ``%s::text::bigint[]``):
    psycopg dumps a Python list element by element in Python, ten times slower."""
    return "{" + ",".join(map(str, values)) + "}"


def check_amount(amount: Any, *, allow_zero: bool = False) -> int:
    if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0 or (amount == 0 and not allow_zero):
        raise InvalidAmount(f"amount must be a positive integer in minor units, got {amount!r}", amount=repr(amount))
    return amount


def request_hash(command: str, request: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json({"command": command, "request": request})).hexdigest()


def claim(
    cursor: Any, *, key: str, command: str, digest: str, at: datetime, result: Mapping[str, Any] | None = None
) -> Any | None:
    """Claim ``key`` for this request. ``None``: claimed, do the work. Otherwise
    the first result of the same request (a concurrent first attempt is waited
    for by the unique key); a different request raises ``IdempotencyKeyReused``."""
    if not key or len(key) > MAX_KEY:
        raise IdempotencyKeyReused(f"idempotency key must be 1..{MAX_KEY} characters", code="invalid_idempotency_key")
    cast = "::jsonb" if connection.vendor == "postgresql" else ""
    cursor.execute(
        "INSERT INTO ledger_idempotency (key, command, request_hash, result, created_at) "
        f"VALUES (%s, %s, %s, %s{cast}, %s) ON CONFLICT (key) DO NOTHING RETURNING key",
        [
            key,
            command,
            digest,
            None if result is None else json.dumps(result),
            connection.ops.adapt_datetimefield_value(at),
        ],
    )
    if cursor.fetchone():
        return None
    cursor.execute("SELECT command, request_hash, result FROM ledger_idempotency WHERE key = %s", [key])
    first_command, first_digest, result = cursor.fetchone()
    if (first_command, first_digest) != (command, digest):
        raise IdempotencyKeyReused(
            f"idempotency key {key!r} was used for another {first_command} request", key=key, command=first_command
        )
    return json.loads(result) if isinstance(result, str) else result


def record_result(cursor: Any, *, key: str, result: Mapping[str, Any]) -> None:
    cast = "::jsonb" if connection.vendor == "postgresql" else ""
    cursor.execute(f"UPDATE ledger_idempotency SET result = %s{cast} WHERE key = %s", [json.dumps(result), key])


def cause_event(cursor: Any, cause: StreamAppend) -> tuple[int, list[int]]:
    """Append the causing events (their last one carrying the money legs);
    returns (cause position, positions appended here)."""
    if not isinstance(cause, StreamAppend):
        raise TypeError("cause is a StreamAppend")
    recorded = append_in_cursor(cursor, cause)
    return recorded[-1].position, [event.position for event in recorded]


def check_kind(kind: str) -> str:
    if not isinstance(kind, str) or not 1 <= len(kind) <= MAX_KIND:
        raise InvalidTransferKind(f"transfer kind must be 1..{MAX_KIND} characters", kind=repr(kind))
    return kind


def net_deltas(legs: Iterable[Leg]) -> dict[int, int]:
    deltas: dict[int, int] = defaultdict(int)
    for leg in legs:
        deltas[leg.debit] -= leg.amount
        deltas[leg.credit] += leg.amount
    return dict(deltas)


def apply_deltas(cursor: Any, deltas: Mapping[int, int], currency: str) -> dict[int, int]:
    """Add each delta to its account's balance in ONE conditional UPDATE: the
    row must exist, be in ``currency`` and (unless it may go negative) stay
    at or above zero. The database decides; nothing is read first. Returns
    the new balances; raises (after diagnosing) when any row refused."""
    if not deltas:
        return {}
    ids = sorted(deltas)  # a stable lock order
    if connection.vendor == "postgresql":
        cursor.execute(
            "UPDATE ledger_account a SET balance = a.balance + v.delta "
            "FROM unnest(%s::text::bigint[], %s::text::bigint[]) AS v(id, delta) "
            "WHERE a.id = v.id AND a.currency = %s AND (a.may_go_negative OR a.balance + v.delta >= 0) "
            "RETURNING a.id, a.balance",
            [text_array(ids), text_array(deltas[i] for i in ids), currency],
        )
        balances = {int(row[0]): int(row[1]) for row in cursor.fetchall()}
    else:
        # SQLite (one writer at a time, in-process): one guarded UPDATE per row.
        balances = {}
        for account_id in ids:
            cursor.execute(
                "UPDATE ledger_account SET balance = balance + %s WHERE id = %s AND currency = %s "
                "AND (may_go_negative OR balance + %s >= 0) RETURNING balance",
                [deltas[account_id], account_id, currency, deltas[account_id]],
            )
            row = cursor.fetchone()
            if row is not None:
                balances[account_id] = int(row[0])
    if len(balances) != len(ids):
        diagnose_refusal(cursor, [i for i in ids if i not in balances], deltas, currency)
    return balances


def diagnose_refusal(cursor: Any, refused: Sequence[int], deltas: Mapping[int, int], currency: str) -> None:
    """Raise the reason the first refused account was refused: unknown,
    other currency, or not enough money (error path only; reads, never writes)."""
    cursor.execute(
        "SELECT id, currency, balance FROM ledger_account WHERE id IN ({})".format(", ".join(["%s"] * len(refused))),
        list(refused),
    )
    found = {int(row[0]): (row[1], int(row[2])) for row in cursor.fetchall()}
    for account_id in refused:
        if account_id not in found:
            raise UnknownAccount(f"no account {account_id}", account_id=account_id)
    for account_id in refused:
        account_currency, _ = found[account_id]
        if account_currency != currency:
            raise CurrencyMismatch(
                f"account {account_id} is in {account_currency}, the command in {currency}",
                account_id=account_id,
                account_currency=account_currency,
                currency=currency,
            )
    account_id = refused[0]
    raise InsufficientFunds(
        f"account {account_id} holds {found[account_id][1]}, needs {-deltas[account_id]}",
        account_id=account_id,
        balance=found[account_id][1],
        needed=-deltas[account_id],
    )


def statement_rows(
    legs: Sequence[Leg], transfer_ids: Sequence[int], balances: Mapping[int, int]
) -> list[tuple[int, int, int, int, int]]:
    """(account, transfer, event, signed amount, balance after) for both sides
    of every leg; running balances are derived backwards from the new
    balances the UPDATE returned."""
    running = dict(balances)
    for account_id, delta in net_deltas(legs).items():
        running[account_id] -= delta  # back to the balance before these legs
    rows = []
    for leg, transfer_id in zip(legs, transfer_ids, strict=True):
        running[leg.debit] -= leg.amount
        rows.append((leg.debit, transfer_id, leg.event_id, -leg.amount, running[leg.debit]))
        running[leg.credit] += leg.amount
        rows.append((leg.credit, transfer_id, leg.event_id, leg.amount, running[leg.credit]))
    return rows


def insert_legs(cursor: Any, legs: Sequence[Leg], balances: Mapping[int, int], at: datetime) -> list[int]:
    """Write the transfer rows and their statement lines; return transfer ids."""
    if not legs:
        return []
    ts = connection.ops.adapt_datetimefield_value(at)
    params: list[Any] = []
    for leg in legs:
        hold = uuid_param(leg.hold_id) if leg.hold_id else None
        params += [leg.debit, leg.credit, leg.amount, leg.currency, leg.kind, hold, leg.event_id, ts]
    cursor.execute(
        "INSERT INTO ledger_transfer (debit_account_id, credit_account_id, amount, currency, kind, hold_id, "
        f"event_id, created_at) VALUES {', '.join(['(%s, %s, %s, %s, %s, %s, %s, %s)'] * len(legs))} RETURNING id",
        params,
    )
    transfer_ids = sorted(int(row[0]) for row in cursor.fetchall())
    rows = statement_rows(legs, transfer_ids, balances)
    cursor.execute(
        "INSERT INTO ledger_statement_line (account_id, transfer_id, event_id, amount, balance_after, created_at) "
        f"VALUES {', '.join(['(%s, %s, %s, %s, %s, %s)'] * len(rows))}",
        [x for row in rows for x in (*row, ts)],
    )
    return transfer_ids
