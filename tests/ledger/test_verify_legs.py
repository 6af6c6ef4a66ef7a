"""Money legs in the hashed events, verified both ways (issue 33, part 1).

Every service path writes its legs into the data of the event its rows name;
``verify_ledger`` then finds every row without its leg and every leg without
its row, named by row and event, whoever forged them: the runtime role (which
may insert transfers and statement lines and move balances) or the owner with
the append-only trigger disabled."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection, transaction

from ledger import triggers
from ledger.legs import parse_legs, resolution_rows
from ledger.services import (
    EventRef,
    HoldOpening,
    HoldSettlement,
    Move,
    NewEvent,
    StreamAppend,
    TransferSpec,
    cashier_account,
    deposit,
    open_hold,
    post_hold,
    read_stream,
    settle_batch,
    transfer,
    transfer_many,
    void_hold,
    withdraw,
)
from ledger.services.verify import Problem, verify_ledger
from ledger.services.verify_legs import check_legs
from tests.platform.conftest import RuntimeRole, connected_as

from .conftest import CURRENCY, bet_event, fund, house_account, key

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True, databases=["default", "owner"])]


def problems() -> list[Problem]:
    return verify_ledger(key=settings.CASINO_SEAL_KEY.encode(), projections=False)


def legs_problems() -> list[Problem]:
    with connection.cursor() as cursor:
        return check_legs(cursor)


def fetch(sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])
        return cursor.fetchall()


def event_data(event_id: int) -> Any:
    [(stream, version)] = fetch("SELECT stream_id, version FROM ledger_event WHERE id = %s", [event_id])
    [event] = read_stream(stream_id=stream, after_version=version - 1, limit=1)
    return event.data


def rows_of(event_id: int) -> list[tuple[Any, ...]]:
    return sorted(
        (kind, debit, credit, amount, currency, str(hold) if hold else None)
        for kind, debit, credit, amount, currency, hold in fetch(
            "SELECT kind, debit_account_id, credit_account_id, amount, currency, hold_id FROM ledger_transfer "
            "WHERE event_id = %s",
            [event_id],
        )
    )


def rows_from_legs(event_id: int) -> list[tuple[Any, ...]]:
    """The transfer rows an event's legs describe (resolutions through the hold's opening leg)."""
    parsed = parse_legs(event_data(event_id)["legs"])
    rows = [tuple(row) for row in parsed.transfers]
    for hold_id, posted in parsed.resolutions:
        [(opened_by,)] = fetch("SELECT opened_event_id FROM ledger_hold WHERE id = %s", [hold_id])
        [opening] = [o for h, o in parse_legs(event_data(opened_by)["legs"]).openings if h == hold_id]
        rows += [tuple(row) for row in resolution_rows(hold_id, opening, posted)]
    return sorted(rows)


def named(found: list[Problem], *, event_id: int, text: str) -> bool:
    return any(p.check == "legs" and p.event_id == event_id and text in p.message for p in found)


# --- every service path writes its legs ------------------------------------------------------------------


def test_every_service_path_writes_legs_equal_to_its_rows() -> None:
    alice, bob = fund("alice", 10_000), fund("bob", 5_000)
    house = house_account(table_id="t1", currency=CURRENCY)
    dep = deposit(wallet=alice.wallet, amount=700, currency=CURRENCY, external_reference="psp-1",
                  idempotency_key=key(), actor="test")  # fmt: skip
    cashier = cashier_account(currency=CURRENCY)
    assert event_data(dep.event_id)["legs"] == [["deposit", cashier, alice.wallet, 700, CURRENCY]]
    wd = withdraw(wallet=bob.wallet, amount=300, currency=CURRENCY, external_reference="psp-2",
                  idempotency_key=key(), actor="test")  # fmt: skip
    assert event_data(wd.event_id)["legs"] == [["withdraw", bob.wallet, cashier, 300, CURRENCY]]
    single = transfer(debit_account=alice.wallet, credit_account=bob.wallet, amount=50, currency=CURRENCY,
                      idempotency_key=key(), kind="gift", cause=bet_event("gift-1", 50))  # fmt: skip
    assert event_data(single.event_id)["legs"] == [["gift", alice.wallet, bob.wallet, 50, CURRENCY]]
    many = transfer_many(moves=[Move(alice.wallet, house, 40, "fee"), Move(bob.wallet, house, 60, "fee")],
                         currency=CURRENCY, idempotency_key=key(), cause=bet_event("fees-1", 0))  # fmt: skip
    # A hold opened inside a transaction, posted in part (post + release legs).
    with transaction.atomic():
        in_tx = open_hold(source=alice.wallet, escrow=alice.held, destination=house, amount=500, currency=CURRENCY,
                          idempotency_key=key(), cause=bet_event("r1-alice", 500))  # fmt: skip
    opened_legs = event_data(in_tx.event_id)["legs"]
    assert opened_legs == [["hold", alice.wallet, alice.held, 500, CURRENCY, in_tx.hold_id, house]]
    posted = post_hold(hold_id=uuid.UUID(in_tx.hold_id), amount=200, idempotency_key=key(),
                       cause=bet_event("r1-alice", 0, expected_version=1))  # fmt: skip
    assert event_data(posted.event_id)["legs"] == [["post", in_tx.hold_id, 200]]
    # A hold opened on its own (the autocommitted bet statement), then voided.
    assert connection.get_autocommit()
    assert not connection.in_atomic_block
    alone = open_hold(source=bob.wallet, escrow=bob.held, destination=house, amount=250, currency=CURRENCY,
                      idempotency_key=key(), cause=bet_event("r2-bob", 250))  # fmt: skip
    voided = void_hold(hold_id=uuid.UUID(alone.hold_id), idempotency_key=key(),
                       cause=bet_event("r2-bob", 0, expected_version=1))  # fmt: skip
    assert event_data(voided.event_id)["legs"] == [["void", alone.hold_id]]
    # The bulk path: holds opened, then posted and voided with a payout, all through COPY.
    hold_a, hold_b = uuid.uuid4(), uuid.uuid4()
    settle_batch(
        idempotency_key=key(), currency=CURRENCY,
        appends=[bet_event("r3-alice", 100), bet_event("r3-bob", 100)],
        open_holds=[HoldOpening(hold_a, alice.wallet, alice.held, house, 100, EventRef("r3-alice", 1)),
                    HoldOpening(hold_b, bob.wallet, bob.held, house, 100, EventRef("r3-bob", 1))],
    )  # fmt: skip
    settle_batch(
        idempotency_key=key(), currency=CURRENCY,
        appends=[StreamAppend("r3-alice", 1, [NewEvent("test.settled", {"won": True})]),
                 StreamAppend("r3-bob", 1, [NewEvent("test.settled", {"won": False}), NewEvent("test.noted", {})])],
        holds=[HoldSettlement(hold_a, 0, EventRef("r3-alice", 2)), HoldSettlement(hold_b, 100, EventRef("r3-bob", 2))],
        transfers=[TransferSpec(house, alice.wallet, 100, EventRef("r3-alice", 2))],
    )  # fmt: skip
    bob_settled = read_stream(stream_id="r3-bob")
    assert "legs" not in bob_settled[2].data  # an event that moves no money carries none
    causes = [dep.event_id, wd.event_id, single.event_id, many.event_id, in_tx.event_id, posted.event_id,
              alone.event_id, voided.event_id, *(e.position for e in read_stream(stream_id="r3-alice")),
              bob_settled[0].position, bob_settled[1].position]  # fmt: skip
    for event_id in causes:
        assert rows_of(event_id), event_id
        assert rows_of(event_id) == rows_from_legs(event_id), event_id
    assert problems() == []


def test_the_legs_key_is_reserved() -> None:
    from ledger.errors import InvalidEvent
    from ledger.services import append_events

    alice = fund("alice", 1_000)
    house = house_account(table_id="t1", currency=CURRENCY)
    forged = [["deposit", house, alice.wallet, 10**6, CURRENCY]]
    with pytest.raises(InvalidEvent):
        append_events(stream_id="x-1", expected_version=0, events=[NewEvent("test.noted", {"legs": forged})])
    with pytest.raises(InvalidEvent):
        transfer(debit_account=alice.wallet, credit_account=house, amount=1, currency=CURRENCY,
                 idempotency_key=key(), cause=StreamAppend("x-2", 0, [NewEvent("test.noted", {"legs": []})]),
                 )  # fmt: skip
    with pytest.raises(InvalidEvent):
        settle_batch(idempotency_key=key(), currency=CURRENCY,
                     appends=[StreamAppend("x-3", 0, [NewEvent("test.noted", {"legs": forged})])])  # fmt: skip
    assert fetch("SELECT COUNT(*) FROM ledger_event WHERE stream_id LIKE 'x-%%'") == [(0,)]


# --- forgeries ------------------------------------------------------------------------------------------


@contextmanager
def as_owner_without_trigger() -> Iterator[Any]:
    """A separate owner (superuser) connection with the append-only triggers off: a DBA."""
    db = settings.DATABASES["default"]
    with psycopg.connect(host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432, user=db["USER"],
                         dbname=db["NAME"], autocommit=False) as conn:  # fmt: skip
        for table in triggers.APPEND_ONLY_TABLES:
            conn.execute(f"ALTER TABLE {table} DISABLE TRIGGER {table}_append_only")
        yield conn
        for table in triggers.APPEND_ONLY_TABLES:
            conn.execute(f"ALTER TABLE {table} ENABLE TRIGGER {table}_append_only")


def a_deposit_of_100000() -> tuple[int, int, int, int]:
    """(wallet, cashier, transfer id, event id) of a real 1,000.00 deposit."""
    alice = fund("alice", 0)
    result = deposit(wallet=alice.wallet, amount=100_000, currency=CURRENCY, external_reference="psp-9",
                     idempotency_key=key(), actor="test")  # fmt: skip
    [(cashier,)] = fetch("SELECT debit_account_id FROM ledger_transfer WHERE id = %s", [result.transfer_id])
    assert event_data(result.event_id)["amount"] == 100_000
    assert problems() == []
    return alice.wallet, cashier, result.transfer_id, result.event_id


def mint(cursor: Any, *, cashier: int, wallet: int, amount: int, event_id: int) -> int:
    """The issue's recipe: a deposit transfer naming an existing deposit event,
    both balances moved, two matching statement lines. Returns the transfer id."""
    cursor.execute(
        "INSERT INTO ledger_transfer (debit_account_id, credit_account_id, amount, currency, kind, hold_id, event_id, "
        "created_at) VALUES (%s, %s, %s, 'EUR', 'deposit', NULL, %s, now()) RETURNING id",
        [cashier, wallet, amount, event_id],
    )
    transfer_id = cursor.fetchone()[0]
    for account, delta in ((cashier, -amount), (wallet, amount)):
        cursor.execute("UPDATE ledger_account SET balance = balance + %s WHERE id = %s RETURNING balance",
                       [delta, account])  # fmt: skip
        after = cursor.fetchone()[0]
        cursor.execute(
            "INSERT INTO ledger_statement_line (account_id, transfer_id, event_id, amount, balance_after, created_at) "
            "VALUES (%s, %s, %s, %s, %s, now())",
            [account, transfer_id, event_id, delta, after],
        )
    return int(transfer_id)


def assert_verify_fails_naming(*, event_id: int, text: str) -> list[Problem]:
    found = problems()
    assert named(found, event_id=event_id, text=text), [str(p) for p in found]
    with pytest.raises(CommandError, match="FAILED"):
        call_command("verify_ledger", "--no-projections")
    return found


def test_money_minted_by_the_runtime_role_is_named_with_its_row_and_event(runtime_role: RuntimeRole) -> None:
    wallet, cashier, _, event_id = a_deposit_of_100000()
    with connected_as(runtime_role), connection.cursor() as cursor:
        forged = mint(cursor, cashier=cashier, wallet=wallet, amount=5_000_000, event_id=event_id)
    found = assert_verify_fails_naming(event_id=event_id, text=f"transfer {forged} (deposit 5000000 EUR")
    assert f"is no leg of event {event_id}" in " ".join(p.message for p in found)
    # The balances no longer equal their legs, and the forged row's statement lines are named.
    assert any(p.check == "legs" and f"account {wallet} balance 5100000, its legs say 100000" in p.message
               for p in found)  # fmt: skip
    assert sum(1 for p in found if f"transfer {forged}, which is no leg" in p.message) == 2
    # The checks before legs saw nothing: the forged row balances with its statement lines.
    assert [p for p in found if p.check != "legs"] == []


def test_money_minted_by_the_owner_is_named_too() -> None:
    wallet, cashier, _, event_id = a_deposit_of_100000()
    with as_owner_without_trigger() as conn, conn.cursor() as cursor:
        forged = mint(cursor, cashier=cashier, wallet=wallet, amount=5_000_000, event_id=event_id)
    assert_verify_fails_naming(event_id=event_id, text=f"transfer {forged} (deposit 5000000 EUR")


def rewrite(cursor: Any, transfer_id: int, *, amount: int | None = None, credit: int | None = None) -> None:
    """Change a transfer row as the owner and "fix" balances and statement lines to match."""
    cursor.execute("SELECT debit_account_id, credit_account_id, amount FROM ledger_transfer WHERE id = %s",
                   [transfer_id])  # fmt: skip
    debit, old_credit, old_amount = cursor.fetchone()
    new_amount, new_credit = amount or old_amount, credit or old_credit
    cursor.execute("UPDATE ledger_transfer SET amount = %s, credit_account_id = %s WHERE id = %s",
                   [new_amount, new_credit, transfer_id])  # fmt: skip
    for account, delta in ((debit, old_amount - new_amount), (old_credit, -old_amount), (new_credit, new_amount)):
        cursor.execute("UPDATE ledger_account SET balance = balance + %s WHERE id = %s", [delta, account])
    cursor.execute("DELETE FROM ledger_statement_line WHERE transfer_id = %s", [transfer_id])
    for account, signed in ((debit, -new_amount), (new_credit, new_amount)):
        cursor.execute(
            "INSERT INTO ledger_statement_line (account_id, transfer_id, event_id, amount, balance_after, created_at) "
            "SELECT %s, t.id, t.event_id, %s, a.balance, now() FROM ledger_transfer t, ledger_account a "
            "WHERE t.id = %s AND a.id = %s",
            [account, signed, transfer_id, account],
        )


def test_a_changed_transfer_amount_is_named() -> None:
    wallet, _, transfer_id, event_id = a_deposit_of_100000()
    with as_owner_without_trigger() as conn, conn.cursor() as cursor:
        rewrite(cursor, transfer_id, amount=900_000)
    found = assert_verify_fails_naming(event_id=event_id, text=f"transfer {transfer_id} (deposit 900000 EUR")
    assert named(found, event_id=event_id, text="has the leg deposit 100000 EUR from account")
    assert any(f"account {wallet} balance 900000, its legs say 100000" in p.message for p in found)


def test_a_deleted_transfer_is_named() -> None:
    wallet, cashier, transfer_id, event_id = a_deposit_of_100000()
    with as_owner_without_trigger() as conn, conn.cursor() as cursor:
        cursor.execute("DELETE FROM ledger_statement_line WHERE transfer_id = %s", [transfer_id])
        cursor.execute("DELETE FROM ledger_transfer WHERE id = %s", [transfer_id])
        cursor.execute("UPDATE ledger_account SET balance = balance - 100000 WHERE id = %s", [wallet])
        cursor.execute("UPDATE ledger_account SET balance = balance + 100000 WHERE id = %s", [cashier])
    assert_verify_fails_naming(event_id=event_id,
                               text=f"has the leg deposit 100000 EUR from account {cashier} to account {wallet} "
                                    "with no transfer row")  # fmt: skip


def test_a_leg_moved_to_another_account_is_named() -> None:
    wallet, _, transfer_id, event_id = a_deposit_of_100000()
    mallory = fund("mallory", 0).wallet
    with as_owner_without_trigger() as conn, conn.cursor() as cursor:
        rewrite(cursor, transfer_id, credit=mallory)
    found = assert_verify_fails_naming(event_id=event_id, text=f"to account {mallory}) is no leg of event {event_id}")
    assert any(f"account {mallory} balance 100000, its legs say 0" in p.message for p in found)
    assert any(f"account {wallet} balance 0, its legs say 100000" in p.message for p in found)


def a_pending_bet() -> tuple[Any, int, str, int]:
    alice = fund("alice", 10_000)
    house = house_account(table_id="t1", currency=CURRENCY)
    held = open_hold(source=alice.wallet, escrow=alice.held, destination=house, amount=400, currency=CURRENCY,
                     idempotency_key=key(), cause=bet_event("r7-alice", 400))  # fmt: skip
    assert problems() == []
    return alice, house, held.hold_id, held.event_id


def test_a_hold_resolved_behind_the_legs_back_by_the_runtime_role_is_named(runtime_role: RuntimeRole) -> None:
    alice, house, hold_id, opened_by = a_pending_bet()
    # The runtime role may update a hold's status and insert the legs' rows: it "loses" the bet for the player.
    with connected_as(runtime_role), connection.cursor() as cursor:
        cursor.execute("UPDATE ledger_hold SET status = 'posted', posted_amount = 400, resolved_event_id = %s "
                       "WHERE id = %s", [opened_by, hold_id])  # fmt: skip
        cursor.execute(
            "INSERT INTO ledger_transfer (debit_account_id, credit_account_id, amount, currency, kind, hold_id, "
            "event_id, created_at) VALUES (%s, %s, 400, 'EUR', 'post', %s, %s, now()) RETURNING id",
            [alice.held, house, hold_id, opened_by],
        )
        forged = cursor.fetchone()[0]
        for account, delta in ((alice.held, -400), (house, 400)):
            cursor.execute("UPDATE ledger_account SET balance = balance + %s WHERE id = %s RETURNING balance",
                           [delta, account])  # fmt: skip
            cursor.execute(
                "INSERT INTO ledger_statement_line (account_id, transfer_id, event_id, amount, balance_after, "
                "created_at) VALUES (%s, %s, %s, %s, %s, now())",
                [account, forged, opened_by, delta, cursor.fetchone()[0]],
            )
    found = assert_verify_fails_naming(event_id=opened_by, text=f"hold {hold_id} is posted")
    assert named(found, event_id=opened_by, text=f"transfer {forged} (post 400 EUR")


def test_a_forged_or_altered_hold_row_is_named() -> None:
    alice, house, hold_id, opened_by = a_pending_bet()
    mallory = fund("mallory", 0).wallet
    forged_hold = uuid.uuid4()
    with as_owner_without_trigger() as conn, conn.cursor() as cursor:
        cursor.execute("UPDATE ledger_hold SET destination_id = %s WHERE id = %s", [mallory, hold_id])
        cursor.execute(
            "INSERT INTO ledger_hold (id, source_id, escrow_id, destination_id, amount, currency, status, "
            "opened_event_id) VALUES (%s, %s, %s, %s, 0 + 1, 'EUR', 'voided', %s)",
            [str(forged_hold), alice.wallet, alice.held, house, opened_by],
        )
    found = problems()
    assert named(found, event_id=opened_by, text=f"hold {hold_id}: the row says 400 EUR from account {alice.wallet} "
                                                  f"held in {alice.held} for {mallory}")  # fmt: skip
    assert named(found, event_id=opened_by, text=f"hold {forged_hold} (1 EUR from account")


def test_epoch_events_before_the_bound_are_checked_as_before() -> None:
    """With an epoch row, a forged row naming an event before it is the old checks' (here: none see it),
    and one naming an event after it is named; the smallest bound counts."""
    wallet, cashier, _, old_event = a_deposit_of_100000()
    [(last,)] = fetch("SELECT MAX(id) FROM ledger_event")
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO ledger_integrity_epoch (feature, first_event_id, recorded_at) "
                       "VALUES ('legs', %s, now()), ('legs', %s, now())", [last + 1, last + 5])  # fmt: skip
    new = deposit(wallet=wallet, amount=100_000, currency=CURRENCY, external_reference="psp-10",
                  idempotency_key=key(), actor="test")  # fmt: skip
    assert legs_problems() == []
    with connection.cursor() as cursor:
        old = mint(cursor, cashier=cashier, wallet=wallet, amount=7, event_id=old_event)
        fresh = mint(cursor, cashier=cashier, wallet=wallet, amount=11, event_id=new.event_id)
    found = legs_problems()
    assert not any(f"transfer {old} " in p.message for p in found)
    assert named(found, event_id=new.event_id, text=f"transfer {fresh} (deposit 11 EUR")
