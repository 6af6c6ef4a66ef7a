"""Races on real PostgreSQL connections: retries, overdrafts, double resolution."""

from __future__ import annotations

import uuid
from collections import Counter

import pytest

from ledger.services import post_hold, read_stream, void_hold
from tests.db import ledger_sums, race

from .conftest import CURRENCY, balances, bet_event, fund, house_account, snapshot, stake

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("atomic", [True, False], ids=["in-transaction", "autocommit"])
def test_concurrent_retries_of_one_command_take_effect_once(atomic: bool):
    alice = fund("alice", 10_000)
    house = house_account(table_id="t1", currency=CURRENCY)
    hold_id = uuid.uuid4()
    cause = bet_event("alice-round-1", 700)

    def place_bet(_: int):
        return stake(alice, house, 700, idempotency_key="alice-bet-1", cause=cause, hold_id=hold_id)

    results = race(8, place_bet, atomic=atomic)
    assert all(r == results[0] for r in results), results
    assert balances(alice.wallet, alice.held) == [9_300, 700]
    assert len(read_stream(stream_id="alice-round-1")) == 1


@pytest.mark.parametrize("atomic", [True, False], ids=["in-transaction", "autocommit"])
def test_concurrent_retries_with_another_body_are_refused(atomic: bool):
    alice = fund("alice", 10_000)
    house = house_account(table_id="t1", currency=CURRENCY)

    def place_bet(i: int):
        amount = 100 + i % 2  # two different requests under one key
        return stake(alice, house, amount, idempotency_key="alice-bet-x", cause=bet_event("alice-round-x", amount),
                     hold_id=uuid.UUID(int=i % 2))  # fmt: skip

    results = race(6, place_bet, atomic=atomic)
    wins = [r for r in results if not isinstance(r, str)]
    refused = [r for r in results if isinstance(r, str)]
    assert all(w == wins[0] for w in wins)
    assert set(refused) == {"idempotency_key_reused"}
    assert len(refused) == 3  # the three carrying the other body
    assert balances(alice.wallet) == [10_000 - wins[0].amount]


@pytest.mark.parametrize("atomic", [True, False], ids=["in-transaction", "autocommit"])
def test_concurrent_bets_never_overdraw_the_wallet(atomic: bool):
    alice = fund("alice", 1_000)
    house = house_account(table_id="t1", currency=CURRENCY)

    def place_bet(i: int):
        return stake(alice, house, 300, idempotency_key=f"b-{i}", cause=bet_event(f"alice-{i}", 300))

    results = race(8, place_bet, atomic=atomic)
    outcome = Counter("ok" if not isinstance(r, str) else r for r in results)
    assert outcome == {"ok": 3, "insufficient_funds": 5}
    assert balances(alice.wallet, alice.held) == [100, 900]
    assert ledger_sums() == {CURRENCY: 0}


def test_racing_post_and_void_resolve_a_hold_once():
    alice = fund("alice", 1_000)
    house = house_account(table_id="t1", currency=CURRENCY)
    opened = stake(alice, house, 400, idempotency_key="h", cause=bet_event("alice-r", 400))
    hold_id = uuid.UUID(opened.hold_id)
    before_events = len(snapshot()["ledger_event"])

    def resolve(i: int):
        if i % 2:
            return post_hold(hold_id=hold_id, amount=400, idempotency_key=f"r-{i}", cause=bet_event(f"r-{i}", 0))
        return void_hold(hold_id=hold_id, idempotency_key=f"r-{i}", cause=bet_event(f"r-{i}", 0))

    results = race(6, resolve)
    outcome = Counter("ok" if not isinstance(r, str) else r for r in results)
    assert outcome == {"ok": 1, "hold_already_resolved": 5}
    assert len(snapshot()["ledger_event"]) == before_events + 1
    winner = next(r for r in results if not isinstance(r, str))
    expected = [0, 1_000, 0] if winner.status == "voided" else [400, 600, 0]
    assert balances(house, alice.wallet, alice.held) == expected
