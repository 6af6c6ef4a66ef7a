"""A command batch's ledger part (appends whose heads the caller read, plus
hold openings: chips and decisions) as data-modifying ``WITH`` parts, for a
caller that sends them inside its own statement with its own writes
(``games.house.store.batches.saving_commands_and_ledger``): ``settle_prepared``'s
rows, result and errors in that one round trip instead of about a dozen.

``hold_batch_writes`` gives ``None`` for anything else (SQLite, hold
settlements, plain transfers, an append whose head was not read, a batch
without events): the caller then keeps ``settle_prepared``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import IntegrityError, connection

from casino.collector import collector_paused
from casino.errors import DomainError
from ledger.errors import HoldAlreadyResolved, IdempotencyKeyReused, StaleStreamVersion
from ledger.services.batch import BatchResult, PreparedBatch, _hash_appends, _plan_appends
from ledger.services.money import check_account
from ledger.services.postings import MAX_KEY, diagnose_refusal, text_array
from ledger.services.small import SmallWrites


def hold_batch_writes(batch: PreparedBatch) -> SmallWrites | None:
    """``batch`` (a ``prepare_batch`` result) as ``WITH`` parts (``SmallWrites.parts``)
    when it is only appends (each new or carrying its head's hash,
    ``StreamAppend.head_hash``) and hold openings; ``None`` otherwise.

    The rows are ``settle_prepared``'s: the events hash-chained onto the heads
    (``ev``, ids from the column's default in the appends' order); the key's
    claim with its result (``cl``); the balances by the conditional UPDATE of
    ``apply_deltas`` (``acc``, net per account); the pending holds, each
    destination required to exist in the batch's currency (``ho``); one
    ``hold`` transfer per opening, in the openings' order (``tr``, written only
    for holds written); both statement lines of each (``ln``: the balance
    after is the account's new balance less what its later lines of the batch
    move). ``finish_row`` raises what ``settle_prepared`` raises when a row was
    refused (the key claimed already, an overdraft, a destination missing):
    the caller's transaction must then roll back, as it does when the
    statement itself fails (``integrity_error`` names a unique violation)."""
    if (
        connection.vendor != "postgresql"
        or batch.holds
        or batch.transfers
        or not batch.appends
        or not batch.idempotency_key
        or len(batch.idempotency_key) > MAX_KEY
        or any(a.expected_version is None or (a.expected_version and a.head_hash is None) for a in batch.appends)
    ):
        return None
    currency, at, key = batch.currency, batch.at, batch.idempotency_key
    with collector_paused():
        planned = _plan_appends(None, batch.appends, {})  # every head is known: nothing is read
        prepared = _hash_appends(planned, at, batch.encoded, batch.metadata_jsons)
        openings = batch.open_holds
        deltas: dict[int, int] = {}
        for h in openings:
            deltas[h.source] = deltas.get(h.source, 0) - h.amount
            deltas[h.escrow] = deltas.get(h.escrow, 0) + h.amount
        ids = sorted(deltas)  # a stable lock order, as ``apply_deltas``
        params: list[Any] = [v for p in prepared for v in p]
        params += [key, batch.digest, len(prepared), len(openings), at]
        if openings:
            params += [text_array(ids), text_array(deltas[i] for i in ids), currency]
            params += [v for n, h in enumerate(openings)
                       for v in (n, str(h.hold_id), h.source, h.escrow, h.destination, h.amount,
                                 h.cause.stream_id, h.cause.version)]  # fmt: skip
            params += [currency, currency, at, at]
            params += [v for line in _lines(openings) for v in line]
    sql = _parts(len(prepared), len(openings))

    def parts(p: str) -> tuple[list[str], list[Any], list[str]]:
        selects = [f"(SELECT count(*) FROM {p}cl)", f"ARRAY(SELECT id FROM {p}ev ORDER BY id)"]
        if openings:
            selects += [
                f"ARRAY(SELECT id FROM {p}acc)",
                f"(SELECT count(*) FROM {p}ho)",
                f"(SELECT count(*) FROM {p}ln)",
            ]
        return [part.replace("{p}", p) for part in sql], params, selects

    def finish_row(row: Sequence[Any]) -> BatchResult:
        if not row[0]:
            raise IdempotencyKeyReused(f"idempotency key {key!r} was claimed already", key=key,
                                       command="settle_batch")  # fmt: skip
        event_ids = [int(i) for i in row[1]]
        if openings:
            updated = {int(i) for i in row[2]}
            with connection.cursor() as cursor:
                if len(updated) != len(ids):
                    diagnose_refusal(cursor, [i for i in ids if i not in updated], deltas, currency)
                if row[3] != len(openings):
                    for destination in sorted({h.destination for h in openings}):
                        check_account(cursor, destination, currency)  # raises the reason
                    raise AssertionError("a hold was not written, its destination exists")  # not reached
            if row[4] != 2 * len(openings):
                raise AssertionError(f"{row[4]} statement lines for {len(openings)} holds")
        return BatchResult(len(event_ids), len(openings), min(event_ids, default=0), max(event_ids, default=0))

    return SmallWrites(parts, finish_row)


def integrity_error(exc: IntegrityError) -> DomainError | None:
    """The domain error behind a unique violation of these parts (as
    ``settle_prepared`` raises it): a hold id taken, or a stream moved on
    (another writer took a version of its events); ``None`` for another."""
    constraint = getattr(getattr(exc.__cause__, "diag", None), "constraint_name", "") or ""
    if constraint == "ledger_hold_pkey":
        return HoldAlreadyResolved("a hold of this batch already exists", code="hold_exists")
    if constraint == "ledger_event_stream_version_uniq":
        return StaleStreamVersion("another writer appended to a stream of this batch")
    return None


def _lines(openings: Sequence[Any]) -> list[tuple[int, str, int, int, int]]:
    """Both statement lines of each opening, in ``statement_rows``' order (the
    debit's, then the credit's): (line, hold id, account, signed amount, what
    the account's later lines of this batch move)."""
    later: dict[int, int] = {}
    lines: list[tuple[int, str, int, int, int]] = []
    for h in reversed(openings):
        lines.append((0, str(h.hold_id), h.escrow, h.amount, later.get(h.escrow, 0)))
        later[h.escrow] = later.get(h.escrow, 0) + h.amount
        lines.append((0, str(h.hold_id), h.source, -h.amount, later.get(h.source, 0)))
        later[h.source] = later.get(h.source, 0) - h.amount
    lines.reverse()
    return [(n, *line[1:]) for n, line in enumerate(lines)]


_PARTS: dict[tuple[int, int], list[str]] = {}


def _parts(events: int, openings: int) -> list[str]:
    """The ``WITH`` parts for ``events`` events and ``openings`` holds, ``{p}``
    standing for their names' prefix; ``%s`` placeholders in the order of
    ``hold_batch_writes``' parameters."""
    if (events, openings) in _PARTS:
        return _PARTS[(events, openings)]
    parts = [
        "{p}ev AS (INSERT INTO ledger_event (stream_id, version, type, schema_version, data, metadata, recorded_at, "
        "prev_hash, hash, mac) VALUES "
        + ", ".join(["(%s, %s, %s, %s, %s::json, %s::json, %s, %s, %s, %s)"] * events)
        + " RETURNING id, stream_id, version)",
        "{p}cl AS (INSERT INTO ledger_idempotency (key, command, request_hash, result, created_at) "
        "SELECT %s::text, 'settle_batch', %s::text, jsonb_build_object('events', %s::int, 'transfers', %s::int, "
        "'first_event_id', min(id), 'last_event_id', max(id)), %s::timestamptz FROM {p}ev "
        "ON CONFLICT (key) DO NOTHING RETURNING 1)",
    ]
    if openings:
        parts += [
            "{p}acc AS (UPDATE ledger_account a SET balance = a.balance + v.delta "
            "FROM unnest(%s::text::bigint[], %s::text::bigint[]) AS v(id, delta) "
            "WHERE a.id = v.id AND a.currency = %s AND (a.may_go_negative OR a.balance + v.delta >= 0) "
            "RETURNING a.id, a.balance)",
            "{p}op AS (SELECT * FROM (VALUES "
            + ", ".join(
                ["(%s::int, %s::uuid, %s::bigint, %s::bigint, %s::bigint, %s::bigint, %s::text, %s::int)"] * openings
            )
            + ") AS v(n, hold, source, escrow, destination, amount, stream, version))",
            "{p}ho AS (INSERT INTO ledger_hold (id, source_id, escrow_id, destination_id, amount, currency, status, "
            "opened_event_id) SELECT o.hold, o.source, o.escrow, d.id, o.amount, d.currency, 'pending', e.id "
            "FROM {p}op o JOIN {p}ev e ON e.stream_id = o.stream AND e.version = o.version "
            "JOIN ledger_account d ON d.id = o.destination AND d.currency = %s ORDER BY o.n RETURNING id)",
            "{p}tr AS (INSERT INTO ledger_transfer (debit_account_id, credit_account_id, amount, currency, kind, "
            "hold_id, event_id, created_at) SELECT o.source, o.escrow, o.amount, %s, 'hold', o.hold, e.id, %s "
            "FROM {p}op o JOIN {p}ho h ON h.id = o.hold "
            "JOIN {p}ev e ON e.stream_id = o.stream AND e.version = o.version ORDER BY o.n "
            "RETURNING id, hold_id, event_id)",
            "{p}ln AS (INSERT INTO ledger_statement_line (account_id, transfer_id, event_id, amount, balance_after, "
            "created_at) SELECT l.account, t.id, t.event_id, l.amount, a.balance - l.later, %s FROM (VALUES "
            + ", ".join(["(%s::int, %s::uuid, %s::bigint, %s::bigint, %s::bigint)"] * (2 * openings))
            + ") AS l(n, hold, account, amount, later) JOIN {p}tr t ON t.hold_id = l.hold "
            "JOIN {p}acc a ON a.id = l.account ORDER BY l.n RETURNING 1)",
        ]
    if len(_PARTS) < 1024:
        _PARTS[(events, openings)] = parts
    return parts
