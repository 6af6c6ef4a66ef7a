"""The small-batch path (``ledger.services.small``): a command's few events and
transfers written in two round trips, or as statements for the caller's own
pipeline, leave the same rows as ``settle_batch`` (events with their legs,
transfers, statement lines and their balances, the idempotency row) and a
ledger ``verify_ledger`` finds clean."""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest
from django.db import connection, transaction

from ledger.errors import InsufficientFunds
from ledger.services import EventRef, NewEvent, StreamAppend, TransferSpec, read_stream, settle_batch
from ledger.services.postings import pipelined
from ledger.services.seals import seal_key
from ledger.services.small import settle_small_batch, small_batch_writes
from ledger.services.verify import verify_ledger

from .conftest import CURRENCY, fund, house_account

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _request(tag: str) -> dict[str, Any]:
    """Two events; the first moves 300 wallet -> house and 200 wallet -> house, the second 120 house -> wallet."""
    wallet = fund(f"{tag}-player", 1_000).wallet
    house = house_account(table_id=f"{tag}-table", currency=CURRENCY)
    stream = f"{tag}-stream"
    events = [NewEvent("test.bet", {"amount": 500}), NewEvent("test.won", {"amount": 120})]
    return {
        "idempotency_key": f"{tag}-key",
        "currency": CURRENCY,
        "appends": [StreamAppend(stream, 0, events, {"actor": "test"})],
        "transfers": [
            TransferSpec(wallet, house, 300, EventRef(stream, 1), "bet"),
            TransferSpec(wallet, house, 200, EventRef(stream, 1), "bet"),
            TransferSpec(house, wallet, 120, EventRef(stream, 2), "payout"),
        ],
    }


def _written(tag: str) -> dict[str, Any]:
    """What a request wrote, with its accounts and ids replaced by their order of appearance."""
    stream = f"{tag}-stream"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT t.id, t.debit_account_id, t.credit_account_id, t.amount, t.kind, e.version FROM ledger_transfer t "
            "JOIN ledger_event e ON e.id = t.event_id WHERE e.stream_id = %s ORDER BY t.id",
            [stream],
        )
        transfers = cursor.fetchall()
        cursor.execute(
            "SELECT l.account_id, l.transfer_id, l.amount, l.balance_after FROM ledger_statement_line l "
            "JOIN ledger_event e ON e.id = l.event_id WHERE e.stream_id = %s ORDER BY l.id",
            [stream],
        )
        lines = cursor.fetchall()
        cursor.execute("SELECT result FROM ledger_idempotency WHERE key = %s", [f"{tag}-key"])
        (result,) = cursor.fetchone()
    result = json.loads(result) if isinstance(result, str) else result
    names: dict[int, int] = {}

    def name(account: int) -> int:
        return names.setdefault(account, len(names))

    order = {row[0]: n for n, row in enumerate(transfers)}
    events = [(e.version, e.type, dict(e.data)) for e in read_stream(stream_id=stream)]
    return {
        "events": events,
        "transfers": [(name(d), name(c), amount, kind, version) for _, d, c, amount, kind, version in transfers],
        "lines": [(name(a), order[t], amount, balance) for a, t, amount, balance in lines],
        "result": {k: v for k, v in result.items() if k in ("events", "transfers")},
    }


def _pipelined(request: dict[str, Any]) -> None:
    writes = small_batch_writes(**request)
    assert writes is not None
    cursors = [psycopg.Cursor(connection.connection) for _ in writes.statements]
    with pipelined():
        for cursor, (sql, params) in zip(cursors, writes.statements, strict=True):
            cursor.execute(sql, params)
    writes.finish(cursors)


def test_the_small_paths_write_what_settle_batch_writes() -> None:
    settle_batch(**_request("bulk"))
    settle_small_batch(**_request("small"))
    with transaction.atomic():
        _pipelined(_request("piped"))
    bulk = _written("bulk")
    assert bulk["transfers"]
    assert bulk["lines"]
    for tag in ("small", "piped"):
        written = _written(tag)
        assert written["transfers"] == bulk["transfers"], tag
        assert written["lines"] == bulk["lines"], tag
        assert written["result"] == bulk["result"], tag
        assert [(v, t) for v, t, _ in written["events"]] == [(v, t) for v, t, _ in bulk["events"]], tag
    assert verify_ledger(key=seal_key()) == []


def test_a_retry_of_settle_small_batch_returns_the_first_result_and_writes_nothing() -> None:
    request = _request("retry")
    first = settle_small_batch(**request)
    again = settle_small_batch(**request)
    assert again == first
    assert len(_written("retry")["transfers"]) == 3


def test_a_refused_balance_is_refused_as_settle_batch_refuses_it() -> None:
    request = _request("poor")
    request["transfers"][0] = TransferSpec(request["transfers"][0].debit, request["transfers"][0].credit, 5_000,
                                           EventRef("poor-stream", 1), "bet")  # fmt: skip
    with pytest.raises(InsufficientFunds), transaction.atomic():
        settle_small_batch(**request)
    with pytest.raises(InsufficientFunds), transaction.atomic():
        _pipelined(request)
    assert read_stream(stream_id="poor-stream") == []
