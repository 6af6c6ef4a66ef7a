"""Append-only guards installed by migration 0002 (and, for the integrity
epochs, 0011) on PostgreSQL and SQLite.

UPDATE, DELETE and TRUNCATE on the events, the transfers (ledger entries) and
the seals are rejected by the database itself, and so are DELETE and TRUNCATE
on the accounts. PostgreSQL also fills
``ledger_event.txid`` with ``pg_current_xact_id()`` by default (the global-order
mechanism, docs/ledger.md). Kept here, not only in the migration, so tests can
run the exact SQL against a bare ``sqlite3`` connection.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

APPEND_ONLY_TABLES = ("ledger_event", "ledger_transfer", "ledger_seal")
# Rows that others point at without foreign keys: never deleted.
UNDELETABLE_TABLES = ("ledger_account",)


def _postgres_guards(tables: Sequence[str], name: str, operations: str) -> list[str]:
    """Per table: the row trigger ``{table}_{name}`` rejecting ``operations``, then
    ``{table}_no_truncate`` rejecting TRUNCATE."""
    return [
        sql
        for table in tables
        for sql in (
            f"CREATE TRIGGER {table}_{name} BEFORE {operations} ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION ledger_reject_change()",
            f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_change()",
        )
    ]


def _postgres_drops(tables: Sequence[str], name: str) -> list[str]:
    """Drops what ``_postgres_guards(tables, name, …)`` creates."""
    return [
        f"DROP TRIGGER IF EXISTS {table}_{trigger} ON {table}" for table in tables for trigger in (name, "no_truncate")
    ]


# SQLite has no TRUNCATE statement: its "truncate optimisation" of an
# unqualified DELETE is disabled when a DELETE trigger exists, so the DELETE
# trigger covers it.
def _sqlite_guards(tables: Sequence[str], operations: Sequence[str]) -> list[str]:
    """Per table, a ``no_update``/``no_delete`` trigger for each of ``operations``."""
    return [
        f"CREATE TRIGGER {table}_no_{operation.lower()} BEFORE {operation} ON {table} "
        f"BEGIN SELECT RAISE(ABORT, 'ledger: {operation} on {table} is forbidden (append-only)'); END"
        for table in tables
        for operation in operations
    ]


def _sqlite_drops(tables: Sequence[str], operations: Sequence[str]) -> list[str]:
    """Drops what ``_sqlite_guards(tables, operations)`` creates."""
    return [f"DROP TRIGGER IF EXISTS {table}_no_{operation.lower()}" for table in tables for operation in operations]


_REJECT_FUNCTION = """
    CREATE OR REPLACE FUNCTION ledger_reject_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'ledger: % on % is forbidden (append-only)', TG_OP, TG_TABLE_NAME
            USING ERRCODE = 'restrict_violation';
    END
    $$
    """
POSTGRES_INSTALL = [
    _REJECT_FUNCTION,
    "ALTER TABLE ledger_event ALTER COLUMN txid SET DEFAULT (pg_current_xact_id()::text::bigint)",
    *_postgres_guards(APPEND_ONLY_TABLES, "append_only", "UPDATE OR DELETE"),
    *_postgres_guards(UNDELETABLE_TABLES, "no_delete", "DELETE"),
]
POSTGRES_UNINSTALL = [
    *_postgres_drops(APPEND_ONLY_TABLES, "append_only"),
    *_postgres_drops(UNDELETABLE_TABLES, "no_delete"),
    "ALTER TABLE ledger_event ALTER COLUMN txid DROP DEFAULT",
    "DROP FUNCTION IF EXISTS ledger_reject_change()",
]
SQLITE_INSTALL = [
    *_sqlite_guards(APPEND_ONLY_TABLES, ("UPDATE", "DELETE")),
    *_sqlite_guards(UNDELETABLE_TABLES, ("DELETE",)),
]
SQLITE_UNINSTALL = [
    *_sqlite_drops(APPEND_ONLY_TABLES, ("UPDATE", "DELETE")),
    *_sqlite_drops(UNDELETABLE_TABLES, ("DELETE",)),
]


# Added by migration 0011 (the table is younger than migration 0002): the
# integrity epochs, append-only like the events. Same trigger function and names.
EPOCH_TABLES = ("ledger_integrity_epoch",)

POSTGRES_EPOCH_INSTALL = _postgres_guards(EPOCH_TABLES, "append_only", "UPDATE OR DELETE")
POSTGRES_EPOCH_UNINSTALL = _postgres_drops(EPOCH_TABLES, "append_only")
SQLITE_EPOCH_INSTALL = _sqlite_guards(EPOCH_TABLES, ("UPDATE", "DELETE"))
SQLITE_EPOCH_UNINSTALL = _sqlite_drops(EPOCH_TABLES, ("UPDATE", "DELETE"))

# (install, uninstall) by vendor.
_GUARDS = {"postgresql": (POSTGRES_INSTALL, POSTGRES_UNINSTALL), "sqlite": (SQLITE_INSTALL, SQLITE_UNINSTALL)}
_EPOCH_GUARDS = {
    "postgresql": (POSTGRES_EPOCH_INSTALL, POSTGRES_EPOCH_UNINSTALL),
    "sqlite": (SQLITE_EPOCH_INSTALL, SQLITE_EPOCH_UNINSTALL),
}


def _for_vendor(guards: Mapping[str, tuple[list[str], list[str]]], vendor: str, install: bool) -> list[str]:
    if vendor not in guards:
        raise NotImplementedError(f"no append-only triggers for {vendor}")
    installs, uninstalls = guards[vendor]
    return installs if install else uninstalls


def epoch_statements(vendor: str, *, install: bool) -> list[str]:
    """The SQL that installs (or removes) the integrity epochs' guards (migration 0011)."""
    return _for_vendor(_EPOCH_GUARDS, vendor, install)


def run_epoch_guards(cursor: Any, vendor: str, *, install: bool) -> None:
    for sql in epoch_statements(vendor, install=install):
        cursor.execute(sql)


def statements(vendor: str, *, install: bool) -> list[str]:
    """The SQL that installs (or removes) the guards on this database vendor."""
    return _for_vendor(_GUARDS, vendor, install)


def run(cursor: Any, vendor: str, *, install: bool) -> None:
    for sql in statements(vendor, install=install):
        cursor.execute(sql)


# SQLSTATE of a refused one-statement bet (class "LD", ledger): the client then
# reads why (funds, account, currency, cause) and raises the domain error.
BET_REFUSED_SQLSTATE = "LD001"
BET_REFUSED_FUNCTION = f"""
CREATE OR REPLACE FUNCTION ledger_bet_refused(claimed bigint, held bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF claimed = 1 AND held = 0 THEN
        RAISE EXCEPTION 'ledger: bet refused' USING ERRCODE = '{BET_REFUSED_SQLSTATE}';
    END IF;
    RETURN false;
END
$$
"""
