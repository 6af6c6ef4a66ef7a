"""Append-only events, transfers and seals, enforced by database triggers."""

from __future__ import annotations

import sqlite3

import pytest
from django.db import DatabaseError, connection, transaction

from ledger import triggers
from ledger.services import NewEvent, append_events, transfer
from ledger.services.seals import seal
from tests.db import wait_until_readable

from .conftest import CURRENCY, World, bet_event, key

pytestmark = pytest.mark.django_db


def _rejected(sql: str) -> None:
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql)


@pytest.mark.django_db(transaction=True)  # committed rows: TRUNCATE meets no pending FK checks
def test_update_delete_truncate_of_events_and_transfers_are_rejected(world: World):
    append_events(stream_id="t", expected_version=0, events=[NewEvent("t.e", {"v": 1})])
    transfer(
        debit_account=world.alice.wallet,
        credit_account=world.bob.wallet,
        amount=1,
        currency=CURRENCY,
        idempotency_key=key(),
        cause=bet_event("trig", 1),
    )
    _rejected("UPDATE ledger_event SET type = 'forged'")
    _rejected("DELETE FROM ledger_event")
    _rejected("UPDATE ledger_transfer SET amount = amount + 1")
    _rejected("DELETE FROM ledger_transfer")
    if connection.vendor == "postgresql":
        _rejected("TRUNCATE ledger_event CASCADE")
        _rejected("TRUNCATE ledger_transfer CASCADE")
    _rejected(f"DELETE FROM ledger_account WHERE id = {world.bob.held}")  # referenced without foreign keys
    if connection.vendor == "postgresql":
        _rejected("TRUNCATE ledger_account CASCADE")
    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*), MIN(type) FROM ledger_event WHERE stream_id = 't'")
        assert cursor.fetchone() == (1, "t.e")
        cursor.execute("SELECT COUNT(*) FROM ledger_transfer WHERE amount = 1")
        assert cursor.fetchone() == (1,)


@pytest.mark.django_db(transaction=True)
def test_seals_are_append_only(world: World):
    append_events(stream_id="t", expected_version=0, events=[NewEvent("t.e", {})])
    wait_until_readable()
    assert seal() is not None
    _rejected("UPDATE ledger_seal SET merkle_root = 'x'")
    _rejected("DELETE FROM ledger_seal")


def test_the_migration_sqlite_sql_guards_a_bare_sqlite_database():
    """The exact SQL migration 0002 runs on SQLite, on an in-memory database."""
    db = sqlite3.connect(":memory:")
    for table in (*triggers.APPEND_ONLY_TABLES, *triggers.UNDELETABLE_TABLES):
        db.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, v TEXT)")
        db.execute(f"INSERT INTO {table} (v) VALUES ('original')")
    triggers.run(db.cursor(), "sqlite", install=True)
    db.execute("UPDATE ledger_account SET v = 'balance moves'")  # accounts: updates yes, deletes no
    with pytest.raises(sqlite3.IntegrityError, match="forbidden"):
        db.execute("DELETE FROM ledger_account")
    for table in triggers.APPEND_ONLY_TABLES:
        for sql in (f"UPDATE {table} SET v = 'forged'", f"DELETE FROM {table}", f"DELETE FROM {table} WHERE id = 1"):
            with pytest.raises(sqlite3.IntegrityError, match="append-only"):
                db.execute(sql)
        db.execute(f"INSERT INTO {table} (v) VALUES ('appending is fine')")
        assert db.execute(f"SELECT v FROM {table} ORDER BY id").fetchall() == [("original",), ("appending is fine",)]
    triggers.run(db.cursor(), "sqlite", install=False)
    db.execute("DELETE FROM ledger_event")  # removable only by dropping the guards


def test_the_migration_0011_sqlite_sql_guards_the_integrity_epochs_on_a_bare_sqlite_database():
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE ledger_integrity_epoch (id INTEGER PRIMARY KEY, first_event_id INTEGER)")
    db.execute("INSERT INTO ledger_integrity_epoch (first_event_id) VALUES (1)")
    triggers.run_epoch_guards(db.cursor(), "sqlite", install=True)
    for sql in ("UPDATE ledger_integrity_epoch SET first_event_id = 99", "DELETE FROM ledger_integrity_epoch"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            db.execute(sql)
    db.execute("INSERT INTO ledger_integrity_epoch (first_event_id) VALUES (5)")  # adding is fine
    assert db.execute("SELECT first_event_id FROM ledger_integrity_epoch ORDER BY id").fetchall() == [(1,), (5,)]
    triggers.run_epoch_guards(db.cursor(), "sqlite", install=False)
    db.execute("DELETE FROM ledger_integrity_epoch")
