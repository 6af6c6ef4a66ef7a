"""Review of ``ledger.services.small.small_batch_writes`` (the one-statement
ledger batch): its refusals are ``settle_batch``'s, raised before anything is
written or, when the statement ran, rolling the transaction back with nothing
left behind."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import pytest
from django.db import connection, transaction

from ledger.errors import IdempotencyKeyReused, InvalidEvent, UnknownAccount
from ledger.services import EventRef, NewEvent, StreamAppend, TransferSpec, settle_batch
from ledger.services.batch import BatchResult
from ledger.services.events import MAX_STREAM_ID
from ledger.services.small import small_batch_writes
from tests.db import ledger_sums

from .conftest import CURRENCY, fund, house_account, snapshot

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _request(tag: str, stream: str | None = None, events: int = 1) -> dict[str, Any]:
    wallet = fund(f"{tag}-player", 1_000).wallet
    house = house_account(table_id=f"{tag}-table", currency=CURRENCY)
    stream = f"{tag}-stream" if stream is None else stream
    return {
        "idempotency_key": f"{tag}-key",
        "currency": CURRENCY,
        "appends": [StreamAppend(stream, 0, [NewEvent("test.bet", {"n": n}) for n in range(events)], {"actor": "t"})],
        "transfers": [TransferSpec(wallet, house, 300, EventRef(stream, 1), "bet")] if events else [],
    }


def _send(request: dict[str, Any]) -> Any:
    """The batch as its one statement, on the caller's cursor, and its checks."""
    writes = small_batch_writes(**request)
    assert writes is not None
    ((sql, params),) = writes.statements
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return writes.finish([cursor])


@pytest.mark.parametrize(
    "bad", [{"stream": ""}, {"stream": "s" * (MAX_STREAM_ID + 1)}, {"events": 0}], ids=["empty", "long", "no-events"]
)
def test_a_bad_append_is_refused_as_settle_batch_refuses_it(bad: dict[str, Any]) -> None:
    request = _request("bad", **bad)
    before = snapshot()
    with pytest.raises(InvalidEvent), transaction.atomic():
        settle_batch(**request)
    with pytest.raises(InvalidEvent), transaction.atomic():
        _send(request)
    assert snapshot() == before


def test_a_reused_key_is_refused_and_nothing_is_written() -> None:
    settle_batch(**_request("reused"))
    # The key of a settled batch, for another request: refused (a retry of the same
    # request never reaches here: the caller's own claim returned its first result).
    other = _request("reused-other")
    other["idempotency_key"] = "reused-key"
    before = snapshot()
    with pytest.raises(IdempotencyKeyReused), transaction.atomic():
        _send(other)
    assert snapshot() == before


def test_an_unknown_account_is_refused_and_nothing_is_written() -> None:
    request = _request("unknown")
    spec = request["transfers"][0]
    request["transfers"] = [TransferSpec(spec.debit, 10**12, spec.amount, spec.cause, spec.kind)]
    before = snapshot()
    with pytest.raises(UnknownAccount), transaction.atomic():
        _send(request)
    assert snapshot() == before
    assert ledger_sums() == {CURRENCY: 0}


def test_the_result_names_the_events_whose_ids_follow_their_versions() -> None:
    with transaction.atomic():
        result = _send(_request("order", events=3))
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM ledger_event WHERE stream_id = 'order-stream' ORDER BY version")
        ids = [row[0] for row in cursor.fetchall()]
        cursor.execute("SELECT result FROM ledger_idempotency WHERE key = 'order-key'")
        (stored,) = cursor.fetchone()
    assert ids == sorted(ids)  # the global log's (txid, id) order keeps the stream's
    assert result == BatchResult(3, 1, ids[0], ids[-1])
    assert (json.loads(stored) if isinstance(stored, str) else stored) == asdict(result)  # as settle_batch stores it
