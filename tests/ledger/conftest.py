"""Ledger fixtures: funded players, and a snapshot of everything the ledger stores."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import connection

from ledger.services import (
    HoldResult,
    NewEvent,
    PlayerAccounts,
    StreamAppend,
    cashier_account,
    deposit,
    house_account,
    open_hold,
    player_accounts,
)
from tests.db import rows
from tests.platform.conftest import runtime_role  # noqa: F401 (the runtime role as setup_db_roles makes it)

CURRENCY = "EUR"
_keys = itertools.count()


def key(prefix: str = "k") -> str:
    return f"{prefix}-{next(_keys)}"


def bet_event(stream: str, amount: int, expected_version: int = 0) -> StreamAppend:
    return StreamAppend(stream, expected_version, [NewEvent("test.bet_placed", {"amount": amount})], {"actor": "test"})


def fund(player: int | str, amount: int, currency: str = CURRENCY) -> PlayerAccounts:
    accounts = player_accounts(player_id=player, currency=currency)
    if amount:
        deposit(
            wallet=accounts.wallet,
            amount=amount,
            currency=currency,
            external_reference=key("ref"),
            idempotency_key=key("dep"),
            actor="test",
        )
    return accounts


def stake(
    player: PlayerAccounts, house: int, amount: int, *, idempotency_key: str, cause: StreamAppend, **extra: Any
) -> HoldResult:
    """A bet: ``amount`` held from the player's wallet in their escrow, due to ``house`` (``extra``: ``hold_id``)."""
    return open_hold(source=player.wallet, escrow=player.held, destination=house, amount=amount, currency=CURRENCY,
                     idempotency_key=idempotency_key, cause=cause, **extra)  # fmt: skip


@dataclass(frozen=True)
class World:
    alice: PlayerAccounts
    bob: PlayerAccounts
    house: int
    cashier: int


@pytest.fixture
def world(db: Any) -> World:
    return World(
        alice=fund("alice", 10_000),
        bob=fund("bob", 5_000),
        house=house_account(table_id="t1", currency=CURRENCY),
        cashier=cashier_account(currency=CURRENCY),
    )


def snapshot() -> dict[str, Any]:
    """Everything a refused command must leave exactly as it was."""
    return rows("ledger_event", "ledger_transfer", "ledger_statement_line", "ledger_hold", "ledger_idempotency",
                "ledger_account")  # fmt: skip


def balances(*account_ids: int) -> list[int]:
    with connection.cursor() as cursor:
        out = []
        for account_id in account_ids:
            cursor.execute("SELECT balance FROM ledger_account WHERE id = %s", [account_id])
            out.append(cursor.fetchone()[0])
    return out
