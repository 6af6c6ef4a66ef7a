"""``open_hold`` outside any transaction: the bet is one autocommitted
statement. A refusal must raise the same specific error as inside a
transaction and leave nothing behind (no claim, no event, no money moved)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from ledger.errors import (
    CurrencyMismatch,
    DomainError,
    HoldAlreadyResolved,
    IdempotencyKeyReused,
    InsufficientFunds,
    StaleStreamVersion,
    UnknownAccount,
)
from ledger.services import HoldResult, StreamAppend, append_events, open_hold, read_stream
from ledger.services.seals import seal_key
from ledger.services.verify import verify_ledger

from .conftest import CURRENCY, balances, bet_event, fund, house_account, key, snapshot

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def bet(alice: Any, house: int, **overrides: Any) -> HoldResult:
    assert connection.get_autocommit()
    assert not connection.in_atomic_block
    stream = overrides.pop("stream", f"round-1-{uuid.uuid4().hex[:6]}")
    amount = overrides.pop("amount", 300)
    call: dict[str, Any] = {
        "source": alice.wallet,
        "escrow": alice.held,
        "destination": house,
        "amount": amount,
        "currency": CURRENCY,
        "idempotency_key": key("bet"),
        "cause": bet_event(stream, amount),
    }
    return open_hold(**(call | overrides))


def test_an_autocommitted_bet_commits_event_hold_transfer_and_lines_together():
    alice = fund("alice", 1_000)
    house = house_account(table_id="t1", currency=CURRENCY)
    result = bet(alice, house, stream="round-1-alice")
    assert result.status == "pending"
    assert result.amount == 300
    assert balances(alice.wallet, alice.held, house) == [700, 300, 0]
    [event] = read_stream(stream_id="round-1-alice")
    assert event.position == result.event_id
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM ledger_statement_line WHERE transfer_id = %s", [result.transfer_ids[0]])
        assert cursor.fetchone()[0] == 2
    assert verify_ledger(key=seal_key()) == []


def test_an_autocommitted_retry_returns_the_first_result_and_another_body_is_refused():
    alice = fund("alice", 1_000)
    house = house_account(table_id="t1", currency=CURRENCY)
    same = {"idempotency_key": "alice-1", "cause": bet_event("round-1-alice", 300), "hold_id": uuid.uuid4()}
    first = bet(alice, house, **same)
    before = snapshot()
    assert bet(alice, house, **same) == first
    with pytest.raises(IdempotencyKeyReused):
        bet(alice, house, **same, amount=301)
    assert snapshot() == before


REFUSALS: list[tuple[str, Callable[[Any, int, Any], dict[str, Any]], type[DomainError]]] = [
    ("overdraft", lambda alice, house, other: {"amount": 1_001}, InsufficientFunds),
    ("unknown destination", lambda alice, house, other: {"destination": 10**9}, UnknownAccount),
    ("unknown escrow", lambda alice, house, other: {"escrow": 10**9}, UnknownAccount),
    ("destination in another currency", lambda alice, house, other: {"destination": other}, CurrencyMismatch),
    ("stale stream", lambda alice, house, other: {"cause": bet_event("taken", 300)}, StaleStreamVersion),
]


@pytest.mark.parametrize(("change", "error"), [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS])
def test_an_autocommitted_refusal_names_its_reason_and_leaves_nothing(change, error):
    alice = fund("alice", 1_000)
    house = house_account(table_id="t1", currency=CURRENCY)
    other = house_account(table_id="t1", currency="USD")
    append_events(stream_id="taken", expected_version=0, events=bet_event("taken", 1).events)
    before = snapshot()
    with pytest.raises(error):
        bet(alice, house, **change(alice, house, other))
    assert snapshot() == before


def test_an_autocommitted_bet_with_a_taken_hold_id_is_refused():
    alice = fund("alice", 1_000)
    house = house_account(table_id="t1", currency=CURRENCY)
    hold_id = uuid.uuid4()
    bet(alice, house, hold_id=hold_id)
    before = snapshot()
    with pytest.raises(HoldAlreadyResolved) as refused:
        bet(alice, house, hold_id=hold_id)
    assert refused.value.code == "hold_exists"
    assert snapshot() == before


def _head_hash(stream: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT hash FROM ledger_event WHERE stream_id = %s ORDER BY version DESC LIMIT 1", [stream])
        return str(cursor.fetchone()[0])


def test_a_known_head_hash_chains_the_next_bet_without_reading_the_head():
    """The bet path passes the head it read in its own query (StreamAppend.head_hash)."""
    alice = fund("alice", 1_000)
    house = house_account(table_id="t1", currency=CURRENCY)
    bet(alice, house, stream="round-1-alice")
    known = _head_hash("round-1-alice")
    cause = bet_event("round-1-alice", 200, expected_version=1)
    bet(alice, house, amount=200, cause=StreamAppend(cause.stream_id, 1, cause.events, cause.metadata, known))
    first, second = read_stream(stream_id="round-1-alice")
    assert second.version == 2
    assert second.prev_hash == first.hash == known
    assert verify_ledger(key=seal_key()) == []


def test_a_known_head_at_a_stale_version_is_refused_and_leaves_nothing():
    alice = fund("alice", 1_000)
    house = house_account(table_id="t1", currency=CURRENCY)
    bet(alice, house, stream="round-1-alice")
    bet(alice, house, amount=100, cause=bet_event("round-1-alice", 100, expected_version=1))
    stale = _head_hash("round-1-alice")  # any hash: the version is what is checked
    before = snapshot()
    cause = bet_event("round-1-alice", 50, expected_version=1)
    with pytest.raises(StaleStreamVersion):
        bet(alice, house, amount=50, cause=StreamAppend(cause.stream_id, 1, cause.events, cause.metadata, stale))
    assert snapshot() == before
    assert verify_ledger(key=seal_key()) == []
