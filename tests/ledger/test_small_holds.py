"""The lean write of a command batch's ledger part (``ledger.services.small_holds``):
appends onto heads the caller read plus hold openings, as ``WITH`` parts of
one statement, leave exactly ``settle_prepared``'s rows (the same batch written
both ways: the same events, hashes and MACs, transfers, statement lines with
their balances after, holds, balances and idempotency row) and refuse what it
refuses, leaving nothing behind."""

from __future__ import annotations

import itertools
import json
import uuid
from dataclasses import replace
from typing import Any

import pytest
from django.db import IntegrityError, connection, transaction

from casino.errors import DomainError
from ledger.errors import (
    HoldAlreadyResolved,
    IdempotencyKeyReused,
    InsufficientFunds,
    StaleStreamVersion,
    UnknownAccount,
)
from ledger.services import (
    EventRef,
    HoldOpening,
    NewEvent,
    PreparedBatch,
    StreamAppend,
    append_events,
    prepare_batch,
    read_stream,
    settle_prepared,
)
from ledger.services.batch import BatchResult
from ledger.services.postings import bulk_cursor
from ledger.services.seals import seal_key
from ledger.services.small_holds import hold_batch_writes, integrity_error
from ledger.services.verify import verify_ledger
from tests.db import ledger_sums

from .conftest import CURRENCY, World, key, snapshot

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


def _batch(world: World, *, alice: tuple[int, int] = (300, 200), bob: int = 400) -> PreparedBatch:
    """Alice's stream (one event already, its head read) gets two events, each
    opening a hold of ``alice``'s amounts (two legs on her wallet and escrow);
    Bob's new stream one event opening a hold of ``bob``; all bound for the house."""
    tag = key("s")
    first = append_events(stream_id=f"{tag}-alice", expected_version=0, events=[NewEvent("test.joined", {"n": 0})])
    appends = [
        StreamAppend(
            f"{tag}-alice",
            1,
            [NewEvent("test.bet", {"n": 1}), NewEvent("test.bet", {"n": 2})],
            {"actor": "test"},
            first[-1].hash,
        ),
        StreamAppend(f"{tag}-bob", 0, [NewEvent("test.bet", {"n": 3})], {"actor": "test"}),
    ]
    a, b = world.alice, world.bob
    opens = [
        HoldOpening(uuid.uuid4(), a.wallet, a.held, world.house, alice[0], EventRef(f"{tag}-alice", 2)),
        HoldOpening(uuid.uuid4(), a.wallet, a.held, world.house, alice[1], EventRef(f"{tag}-alice", 3)),
        HoldOpening(uuid.uuid4(), b.wallet, b.held, world.house, bob, EventRef(f"{tag}-bob", 1)),
    ]
    return prepare_batch(idempotency_key=key("batch"), currency=CURRENCY, appends=appends, open_holds=opens)


def _lean(batch: PreparedBatch) -> BatchResult:
    """``batch`` written by the lean parts as one statement, in a transaction of
    its own (a refusal rolls it back), errors as the house store translates them."""
    writes = hold_batch_writes(batch)
    assert writes is not None
    ((sql, params),) = writes.statements
    with transaction.atomic():
        try:
            with bulk_cursor() as cursor:  # Django's error translation on leaving
                cursor.execute(sql, params)
                return writes.finish([cursor])
        except IntegrityError as exc:
            raise (integrity_error(exc) or exc) from exc


def _rows(batch: PreparedBatch) -> dict[str, Any]:
    """Every row the batch wrote, events and transfers named by their order
    (their ids come from sequences, which a rollback does not rewind)."""
    streams = [a.stream_id for a in batch.appends]
    accounts = sorted({x for h in batch.open_holds for x in (h.source, h.escrow, h.destination)})
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, stream_id, version, type, schema_version, data::text, metadata::text, recorded_at, prev_hash, "
            "hash, mac FROM ledger_event WHERE stream_id = ANY(%s) ORDER BY id",
            [streams],
        )
        events = cursor.fetchall()
        event_ids = {row[0]: n for n, row in enumerate(events)}
        cursor.execute(
            "SELECT id, debit_account_id, credit_account_id, amount, currency, kind, hold_id, event_id, created_at "
            "FROM ledger_transfer WHERE event_id = ANY(%s) ORDER BY id",
            [list(event_ids)],
        )
        transfers = cursor.fetchall()
        transfer_ids = {row[0]: n for n, row in enumerate(transfers)}
        cursor.execute(
            "SELECT account_id, transfer_id, event_id, amount, balance_after, created_at FROM ledger_statement_line "
            "WHERE event_id = ANY(%s) ORDER BY id",
            [list(event_ids)],
        )
        lines = cursor.fetchall()
        cursor.execute(
            "SELECT id, source_id, escrow_id, destination_id, amount, currency, status, opened_event_id "
            "FROM ledger_hold WHERE opened_event_id = ANY(%s) ORDER BY id",
            [list(event_ids)],
        )
        holds = cursor.fetchall()
        cursor.execute("SELECT id, balance FROM ledger_account WHERE id = ANY(%s) ORDER BY id", [accounts])
        balances = cursor.fetchall()
        cursor.execute("SELECT command, request_hash, result FROM ledger_idempotency WHERE key = %s",
                       [batch.idempotency_key])  # fmt: skip
        command, digest, result = cursor.fetchone()
    result = json.loads(result) if isinstance(result, str) else result
    return {
        "events": [row[1:] for row in events],
        "transfers": [(*row[1:7], event_ids[row[7]], row[8]) for row in transfers],
        "lines": [(a, transfer_ids[t], event_ids[e], *rest) for a, t, e, *rest in lines],
        "holds": [(*row[:7], event_ids[row[7]]) for row in holds],
        "balances": balances,
        "idempotency": (
            command,
            digest,
            result["events"],
            result["transfers"],
            event_ids[result["first_event_id"]],
            event_ids[result["last_event_id"]],
        ),
    }


def test_the_lean_write_leaves_the_rows_settle_prepared_leaves(world: World) -> None:
    batch = _batch(world)
    point = transaction.savepoint()
    settled = settle_prepared(batch)
    expected = _rows(batch)
    transaction.savepoint_rollback(point)
    lean = _lean(batch)
    assert _rows(batch) == expected
    assert (lean.events, lean.transfers, lean.last_event_id - lean.first_event_id) == (
        settled.events, settled.transfers, settled.last_event_id - settled.first_event_id)  # fmt: skip
    # Alice's two legs: each statement line's balance after is hers at that line.
    lines = [(a, amount, after) for a, _, _, amount, after, _ in expected["lines"]]
    assert lines[:4] == [(world.alice.wallet, -300, 9_700), (world.alice.held, 300, 300),
                         (world.alice.wallet, -200, 9_500), (world.alice.held, 200, 500)]  # fmt: skip
    assert [e[0:2] for e in expected["events"]] == [
        (batch.appends[0].stream_id, 1), (batch.appends[0].stream_id, 2), (batch.appends[0].stream_id, 3),
        (batch.appends[1].stream_id, 1),
    ]  # fmt: skip
    assert ledger_sums() == {CURRENCY: 0}
    assert verify_ledger(key=seal_key()) == []


def test_every_stream_is_chained_onto_the_head_the_caller_read(world: World) -> None:
    batch = _batch(world)
    _lean(batch)
    for append in batch.appends:
        recorded = read_stream(stream_id=append.stream_id)
        assert [e.version for e in recorded] == list(range(1, len(recorded) + 1))
        assert all(later.prev_hash == earlier.hash for earlier, later in itertools.pairwise(recorded))
    assert verify_ledger(key=seal_key()) == []


def _refused(error: type[DomainError], batch: PreparedBatch) -> None:
    before = snapshot()
    with pytest.raises(error):
        _lean(batch)
    assert snapshot() == before


def test_an_overdraft_in_the_middle_of_the_batch_writes_nothing(world: World) -> None:
    _refused(InsufficientFunds, _batch(world, bob=5_001))  # Bob holds 5,000; Alice's holds fit


def test_a_stream_moved_on_since_its_head_was_read_writes_nothing(world: World) -> None:
    batch = _batch(world)
    append_events(stream_id=batch.appends[0].stream_id, expected_version=1, events=[NewEvent("test.other", {})])
    _refused(StaleStreamVersion, batch)


def test_a_key_claimed_already_writes_nothing(world: World) -> None:
    first = _batch(world)
    _lean(first)
    # Another batch under the same key (the lean write's contract is a new key: refused, not answered).
    _refused(IdempotencyKeyReused, replace(_batch(world), idempotency_key=first.idempotency_key))


def test_a_hold_id_taken_writes_nothing(world: World) -> None:
    first = _batch(world)
    _lean(first)
    second = _batch(world)
    opens = [replace(second.open_holds[0], hold_id=first.open_holds[2].hold_id), *second.open_holds[1:]]
    again = prepare_batch(idempotency_key=key("batch"), currency=CURRENCY, appends=second.appends, open_holds=opens)
    _refused(HoldAlreadyResolved, again)


def test_a_destination_that_does_not_exist_writes_nothing(world: World) -> None:
    batch = _batch(world)
    opens = [*batch.open_holds[:2], replace(batch.open_holds[2], destination=10**9)]
    missing = prepare_batch(idempotency_key=key("batch"), currency=CURRENCY, appends=batch.appends, open_holds=opens)
    _refused(UnknownAccount, missing)


def test_what_the_lean_write_does_not_cover_keeps_settle_prepared(world: World) -> None:
    batch = _batch(world)
    unread = [replace(batch.appends[0], head_hash=None), batch.appends[1]]
    assert hold_batch_writes(replace(batch, appends=unread)) is None
    assert hold_batch_writes(replace(batch, appends=[replace(a, expected_version=None) for a in batch.appends])) is None
