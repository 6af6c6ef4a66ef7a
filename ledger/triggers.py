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

from typing import Any

APPEND_ONLY_TABLES = ("ledger_event", "ledger_transfer", "ledger_seal")
# Rows that others point at without foreign keys: never deleted.
UNDELETABLE_TABLES = ("ledger_account",)

POSTGRES_INSTALL = (
    [
        """
    CREATE OR REPLACE FUNCTION ledger_reject_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'ledger: % on % is forbidden (append-only)', TG_OP, TG_TABLE_NAME
            USING ERRCODE = 'restrict_violation';
    END
    $$
    """,
        "ALTER TABLE ledger_event ALTER COLUMN txid SET DEFAULT (pg_current_xact_id()::text::bigint)",
    ]
    + [
        sql
        for table in APPEND_ONLY_TABLES
        for sql in (
            f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION ledger_reject_change()",
            f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_change()",
        )
    ]
    + [
        sql
        for table in UNDELETABLE_TABLES
        for sql in (
            f"CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION ledger_reject_change()",
            f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_change()",
        )
    ]
)

POSTGRES_UNINSTALL = (
    [
        sql
        for table in APPEND_ONLY_TABLES
        for sql in (
            f"DROP TRIGGER IF EXISTS {table}_append_only ON {table}",
            f"DROP TRIGGER IF EXISTS {table}_no_truncate ON {table}",
        )
    ]
    + [
        sql
        for table in UNDELETABLE_TABLES
        for sql in (
            f"DROP TRIGGER IF EXISTS {table}_no_delete ON {table}",
            f"DROP TRIGGER IF EXISTS {table}_no_truncate ON {table}",
        )
    ]
    + ["ALTER TABLE ledger_event ALTER COLUMN txid DROP DEFAULT", "DROP FUNCTION IF EXISTS ledger_reject_change()"]
)

# SQLite has no TRUNCATE statement: its "truncate optimisation" of an
# unqualified DELETE is disabled when a DELETE trigger exists, so the DELETE
# trigger covers it.
SQLITE_INSTALL = [
    sql
    for table in APPEND_ONLY_TABLES
    for sql in (
        f"CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table} "
        f"BEGIN SELECT RAISE(ABORT, 'ledger: UPDATE on {table} is forbidden (append-only)'); END",
        f"CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table} "
        f"BEGIN SELECT RAISE(ABORT, 'ledger: DELETE on {table} is forbidden (append-only)'); END",
    )
] + [
    f"CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table} "
    f"BEGIN SELECT RAISE(ABORT, 'ledger: DELETE on {table} is forbidden (append-only)'); END"
    for table in UNDELETABLE_TABLES
]

SQLITE_UNINSTALL = [
    f"DROP TRIGGER IF EXISTS {table}_{op}" for table in APPEND_ONLY_TABLES for op in ("no_update", "no_delete")
] + [f"DROP TRIGGER IF EXISTS {table}_no_delete" for table in UNDELETABLE_TABLES]


# Added by migration 0011 (the table is younger than migration 0002): the
# integrity epochs, append-only like the events. Same trigger function and names.
EPOCH_TABLES = ("ledger_integrity_epoch",)

POSTGRES_EPOCH_INSTALL = [
    sql
    for table in EPOCH_TABLES
    for sql in (
        f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
        "FOR EACH ROW EXECUTE FUNCTION ledger_reject_change()",
        f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
        "FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_change()",
    )
]
POSTGRES_EPOCH_UNINSTALL = [
    f"DROP TRIGGER IF EXISTS {table}_{name} ON {table}"
    for table in EPOCH_TABLES
    for name in ("append_only", "no_truncate")
]
SQLITE_EPOCH_INSTALL = [
    sql
    for table in EPOCH_TABLES
    for sql in (
        f"CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table} "
        f"BEGIN SELECT RAISE(ABORT, 'ledger: UPDATE on {table} is forbidden (append-only)'); END",
        f"CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table} "
        f"BEGIN SELECT RAISE(ABORT, 'ledger: DELETE on {table} is forbidden (append-only)'); END",
    )
]
SQLITE_EPOCH_UNINSTALL = [
    f"DROP TRIGGER IF EXISTS {table}_{op}" for table in EPOCH_TABLES for op in ("no_update", "no_delete")
]


def epoch_statements(vendor: str, *, install: bool) -> list[str]:
    """The SQL that installs (or removes) the integrity epochs' guards (migration 0011)."""
    if vendor == "postgresql":
        return POSTGRES_EPOCH_INSTALL if install else POSTGRES_EPOCH_UNINSTALL
    if vendor == "sqlite":
        return SQLITE_EPOCH_INSTALL if install else SQLITE_EPOCH_UNINSTALL
    raise NotImplementedError(f"no append-only triggers for {vendor}")


def run_epoch_guards(cursor: Any, vendor: str, *, install: bool) -> None:
    for sql in epoch_statements(vendor, install=install):
        cursor.execute(sql)


def statements(vendor: str, *, install: bool) -> list[str]:
    """The SQL that installs (or removes) the guards on this database vendor."""
    if vendor == "postgresql":
        return POSTGRES_INSTALL if install else POSTGRES_UNINSTALL
    if vendor == "sqlite":
        return SQLITE_INSTALL if install else SQLITE_UNINSTALL
    raise NotImplementedError(f"no append-only triggers for {vendor}")


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
