"""The runtime database role: the application may add to the ledger's history,
never rewrite it (PostgreSQL; docs/ledger.md, "The runtime role").

Two roles. The *owner* (``DATABASE_OWNER_URL``) owns the tables and runs the
migrations and ``setup_runtime_role``. The *runtime role* (``DATABASE_URL``) is
what the web, worker and beat processes connect as. It owns nothing, so it
cannot ALTER or DROP a table or its triggers (PostgreSQL allows that to an
owner only), and it holds exactly the grants of ``runtime_access``:

- ``ledger_*``: SELECT and INSERT, UPDATE of the columns the ledger's services
  move (``LEDGER_UPDATED_COLUMNS``) and of no other, never DELETE. A ledger
  table not listed there is append-only, so a new one starts closed.
- ``games_tableconfigversion`` (immutable configuration versions): SELECT, INSERT.
- ``django_migrations``: SELECT (migrations run as the owner).
- every other table (the games' projections, players, cashier, sessions,
  auth ...): SELECT, INSERT, UPDATE, DELETE.
- every sequence: USAGE (``nextval``). Nowhere TRUNCATE, REFERENCES or TRIGGER.

It also sets the role's ``idle_in_transaction_session_timeout`` to
``CASINO_DB_IDLE_IN_TRANSACTION_SECONDS``: a session of it left idle in a
transaction is ended by PostgreSQL, so it cannot hold back the ledger's seals
and exports for longer (docs/ledger.md, "Global order").

``setup_runtime_role`` applies that and is idempotent: it sets each table's
grants to exactly the policy. A table created by a later migration has no
grants until it runs again, so it is rerun after every ``migrate``
(``casino.checks.check_database_role`` warns in the meantime). ``audit_role``
reports how a role departs from the policy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, LiteralString

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from psycopg import sql

from casino.db_routing import OWNER_ALIAS
from casino.errors import Conflict, DomainError

TABLE_PRIVILEGES: tuple[LiteralString, ...] = (
    "SELECT",
    "INSERT",
    "UPDATE",
    "DELETE",
    "TRUNCATE",
    "REFERENCES",
    "TRIGGER",
)
# Attributes the runtime role must not hold: each lets it bypass grants, become
# the owner (CREATEROLE grants memberships) or reach beyond this database.
ROLE_ATTRIBUTES: tuple[LiteralString, ...] = ("SUPERUSER", "CREATEROLE", "CREATEDB", "REPLICATION", "BYPASSRLS")


class RolesNeedPostgres(DomainError, code="roles_need_postgresql"):
    """Database roles need PostgreSQL: the embedded SQLite default is one file with no roles or grants."""


class RuntimeRoleMissing(DomainError, code="runtime_role_missing"):
    """DATABASE_URL names no user: the runtime role is the user it connects as."""


class RuntimeRoleTooPowerful(Conflict, code="runtime_role_too_powerful"):
    """The runtime role could rewrite the ledger: it is, or may act as, the owner or a superuser, or holds more
    than the runtime grants."""


@dataclass(frozen=True)
class TableAccess:
    """What a role may do on one table: table-wide ``privileges``, plus UPDATE of
    ``update_columns`` only (column privileges; empty when UPDATE is table-wide)."""

    privileges: frozenset[str]
    update_columns: frozenset[str] = frozenset()

    def __str__(self) -> str:
        parts = [privilege for privilege in TABLE_PRIVILEGES if privilege in self.privileges]
        if self.update_columns:
            parts.append(f"UPDATE ({', '.join(sorted(self.update_columns))})")
        return ", ".join(parts) or "nothing"


READ_WRITE = TableAccess(frozenset({"SELECT", "INSERT", "UPDATE", "DELETE"}))
APPEND_ONLY = TableAccess(frozenset({"SELECT", "INSERT"}))
READ_ONLY = TableAccess(frozenset({"SELECT"}))

# The only columns the ledger's services UPDATE (ledger/services/postings.py,
# money.py, batch.py; games/house/store.py records idempotent results).
LEDGER_UPDATED_COLUMNS: dict[str, tuple[str, ...]] = {
    "ledger_account": ("balance",),  # balances move; an account is never deleted
    "ledger_hold": ("status", "posted_amount", "resolved_event_id"),  # a hold resolves once
    "ledger_idempotency": ("result",),  # a command's first result, written after its claim
}
# Outside the ledger: rows that never change (games 0004's trigger refuses UPDATE).
IMMUTABLE_TABLES = frozenset({"games_tableconfigversion"})
READ_ONLY_TABLES = frozenset({"django_migrations"})


def runtime_access(table: str) -> TableAccess:
    """What the runtime role may do on ``table`` (the policy above)."""
    if table.startswith("ledger_"):
        return TableAccess(APPEND_ONLY.privileges, frozenset(LEDGER_UPDATED_COLUMNS.get(table, ())))
    if table in IMMUTABLE_TABLES:
        return APPEND_ONLY
    if table in READ_ONLY_TABLES:
        return READ_ONLY
    return READ_WRITE


@dataclass(frozen=True)
class Finding:
    """One way a role departs from the runtime policy. ``kind``: ``elevated``
    (role attributes), ``owner`` (owns objects), ``create`` (may create objects),
    ``grants`` (table privileges differ from ``runtime_access``)."""

    kind: str
    message: str


@dataclass(frozen=True)
class RoleAudit:
    """A role against the runtime policy, as PostgreSQL resolves its privileges
    (its own grants, PUBLIC's and those of roles it belongs to)."""

    role: str
    attributes: tuple[str, ...]  # of ROLE_ATTRIBUTES, and "membership of the superuser role 'x'"
    owned: tuple[str, ...]  # "table ledger_event", "function ...", "schema public", "database casino"
    can_create: bool  # CREATE on the schema or the database
    tables: dict[str, TableAccess] = field(default_factory=dict)

    def findings(self) -> list[Finding]:
        """Empty when the role is a proper runtime role. An owner or superuser may
        do anything anyway, so its grants are not listed on top."""
        found: list[Finding] = []
        if self.attributes:
            found.append(
                Finding(
                    "elevated",
                    f"The database role {self.role!r} has {', '.join(self.attributes)}: it can bypass grants or "
                    "become the owner, and so disable the ledger's append-only triggers.",
                )
            )
        if self.owned:
            shown = ", ".join(self.owned[:8]) + (f" and {len(self.owned) - 8} more" if len(self.owned) > 8 else "")
            found.append(
                Finding(
                    "owner",
                    f"The database role {self.role!r} owns, or may act as the owner of, {shown}: it can drop or "
                    "disable the ledger's append-only triggers and alter or drop its tables.",
                )
            )
        if found:
            return found
        if self.can_create:
            found.append(Finding("create", f"The database role {self.role!r} may create objects (DDL)."))
        for table, has in self.tables.items():
            should = runtime_access(table)
            if has != should:
                found.append(Finding("grants", f"{table}: {self.role!r} has {has}; the runtime policy is {should}."))
        return found


@dataclass(frozen=True)
class RuntimeGrants:
    """What ``setup_runtime_role`` left in place."""

    role: str
    created: bool
    tables: dict[str, TableAccess]
    sequences: int
    idle_in_transaction_ms: int = 0  # the role's idle_in_transaction_session_timeout (0: none)


def setup_runtime_role(*, role: str, password: str | None = None, using: str = OWNER_ALIAS) -> RuntimeGrants:
    """Create or update the runtime role ``role`` and set its grants to exactly
    ``runtime_access`` on every table of the schema, and USAGE on every sequence,
    in one transaction on ``using`` (whose user must own the tables). Idempotent.

    LOGIN, with ``password`` when given (else the password is left as it is);
    the attributes of ``ROLE_ATTRIBUTES`` are removed. Refused with
    ``RuntimeRoleTooPowerful`` (nothing changed) when ``role`` is the
    connection's own role, owns or may act as the owner of an object of the
    schema or database, or would still depart from the policy afterwards
    (PUBLIC's or another role's grants, membership in a superuser role);
    ``RolesNeedPostgres`` on SQLite."""
    db = connections[using]
    if db.vendor != "postgresql":
        raise RolesNeedPostgres()
    if not role:
        raise RuntimeRoleMissing()
    name = sql.Identifier(role)
    with transaction.atomic(using=using), db.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext('casino.setup_db_roles'))")  # setups queue
        cursor.execute("SELECT current_user")
        if cursor.fetchone()[0] == role:
            raise RuntimeRoleTooPowerful(
                f"DATABASE_URL connects as {role!r}, the owner: the runtime role needs a role of its own", role=role
            )
        cursor.execute(
            "SELECT rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls FROM pg_roles "
            "WHERE rolname = %s",
            [role],
        )
        existing = cursor.fetchone()
        if existing is None:
            _execute_with_password(cursor, sql.SQL("CREATE ROLE {} LOGIN").format(name), password)
        else:
            owned = _owned(cursor, role)
            if owned:
                raise RuntimeRoleTooPowerful(
                    f"{role!r} owns, or may act as the owner of, {', '.join(owned[:8])}", role=role, owned=list(owned)
                )
            # Only what changes: naming SUPERUSER or REPLICATION at all needs a
            # superuser, and a managed server's owner often is not one.
            removed = [
                sql.SQL("NO" + attribute) for attribute, held in zip(ROLE_ATTRIBUTES, existing, strict=True) if held
            ]
            alter = sql.SQL("ALTER ROLE {} ").format(name) + sql.SQL(" ").join([sql.SQL("LOGIN"), *removed])
            _execute_with_password(cursor, alter, password)
        # Sessions of the runtime role idle in a transaction this long are ended:
        # such a session holds back seals and exports (docs/ledger.md, "Global order").
        idle_ms = round(settings.CASINO_DB_IDLE_IN_TRANSACTION_SECONDS * 1000)
        cursor.execute(
            sql.SQL("ALTER ROLE {} SET idle_in_transaction_session_timeout = {}").format(name, sql.Literal(idle_ms))
        )
        cursor.execute(
            "SELECT current_database(), current_schema(), "
            "has_database_privilege(%s, current_database(), 'CONNECT'), "
            "has_schema_privilege(%s, current_schema(), 'USAGE')",
            [role, role],
        )
        database, schema, can_connect, can_use_schema = cursor.fetchone()
        if not can_connect:
            cursor.execute(sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(sql.Identifier(database), name))
        if not can_use_schema:
            cursor.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(sql.Identifier(schema), name))
        for table in _tables(cursor):
            _grant_exactly(cursor, sql.Identifier(schema, table), name, runtime_access(table))
        cursor.execute(sql.SQL("REVOKE ALL ON ALL SEQUENCES IN SCHEMA {} FROM {}").format(sql.Identifier(schema), name))
        cursor.execute(sql.SQL("GRANT USAGE ON ALL SEQUENCES IN SCHEMA {} TO {}").format(sql.Identifier(schema), name))
        cursor.execute("SELECT count(*) FROM pg_sequences WHERE schemaname = current_schema()")
        sequences = int(cursor.fetchone()[0])
        audit = _audit(cursor, role)
        findings = audit.findings()
        if findings:
            raise RuntimeRoleTooPowerful(
                f"{role!r} would still depart from the runtime policy: {findings[0].message}",
                role=role,
                findings=[finding.message for finding in findings],
            )
        return RuntimeGrants(
            role=role,
            created=existing is None,
            tables=audit.tables,
            sequences=sequences,
            idle_in_transaction_ms=idle_ms,
        )


def audit_role(*, role: str | None = None, using: str = DEFAULT_DB_ALIAS) -> RoleAudit:
    """``role`` (default: the role ``using`` connects as) against the runtime policy."""
    if connections[using].vendor != "postgresql":
        raise RolesNeedPostgres()
    with connections[using].cursor() as cursor:
        if role is None:
            cursor.execute("SELECT current_user")
            role = str(cursor.fetchone()[0])
        return _audit(cursor, role)


def _execute_with_password(cursor: Any, statement: sql.Composable, password: str | None) -> None:
    if password:
        statement += sql.SQL(" PASSWORD {}").format(sql.Literal(password))
    # On psycopg's own cursor (same connection and transaction): Django's
    # wrapper would log the statement, password included, when DEBUG is on.
    cursor.cursor.execute(statement)


def _tables(cursor: Any) -> list[str]:
    cursor.execute(
        "SELECT c.relname FROM pg_class c WHERE c.relnamespace = current_schema()::text::regnamespace "
        "AND c.relkind IN ('r', 'p') ORDER BY c.relname"
    )
    return [row[0] for row in cursor.fetchall()]


def _grant_exactly(cursor: Any, table: sql.Identifier, role: sql.Identifier, access: TableAccess) -> None:
    # REVOKE ALL on a table also revokes its column privileges; all of this
    # commits together, so the application never sees the table without grants.
    cursor.execute(sql.SQL("REVOKE ALL ON TABLE {} FROM {}").format(table, role))
    privileges = [sql.SQL(privilege) for privilege in TABLE_PRIVILEGES if privilege in access.privileges]
    if privileges:
        cursor.execute(sql.SQL("GRANT {} ON TABLE {} TO {}").format(sql.SQL(", ").join(privileges), table, role))
    if access.update_columns:
        columns = sql.SQL(", ").join(sql.Identifier(column) for column in sorted(access.update_columns))
        cursor.execute(sql.SQL("GRANT UPDATE ({}) ON TABLE {} TO {}").format(columns, table, role))


def _owned(cursor: Any, role: str) -> tuple[str, ...]:
    """The schema's tables, sequences, views and functions, the schema and the
    database that ``role`` owns or belongs to the owner of (a member may
    ``SET ROLE`` to it). A function's owner could replace a trigger's function."""
    cursor.execute(
        """
        SELECT kind || ' ' || name FROM (
            SELECT CASE c.relkind WHEN 'S' THEN 'sequence' WHEN 'v' THEN 'view' WHEN 'm' THEN 'view'
                   ELSE 'table' END AS kind, c.relname::text AS name, c.relowner AS owner
            FROM pg_class c
            WHERE c.relnamespace = current_schema()::text::regnamespace AND c.relkind IN ('r', 'p', 'S', 'v', 'm')
            UNION ALL
            SELECT 'function', p.proname::text, p.proowner FROM pg_proc p
            WHERE p.pronamespace = current_schema()::text::regnamespace
            UNION ALL
            SELECT 'schema', n.nspname::text, n.nspowner FROM pg_namespace n WHERE n.nspname = current_schema()
            UNION ALL
            SELECT 'database', d.datname::text, d.datdba FROM pg_database d WHERE d.datname = current_database()
        ) o
        WHERE pg_has_role(%s, o.owner, 'MEMBER')
        ORDER BY kind <> 'table', name NOT LIKE 'ledger\\_%%', name
        """,
        [role],
    )
    return tuple(row[0] for row in cursor.fetchall())


def _audit(cursor: Any, role: str) -> RoleAudit:
    cursor.execute(
        "SELECT r.rolsuper, r.rolcreaterole, r.rolcreatedb, r.rolreplication, r.rolbypassrls, "
        "ARRAY(SELECT s.rolname::text FROM pg_roles s WHERE s.rolsuper AND s.oid <> r.oid "
        "      AND NOT r.rolsuper AND pg_has_role(r.oid, s.oid, 'MEMBER') ORDER BY 1), "
        "has_schema_privilege(r.oid, current_schema(), 'CREATE') "
        "OR has_database_privilege(r.oid, current_database(), 'CREATE') "
        "FROM pg_roles r WHERE r.rolname = %s",
        [role],
    )
    *held, superusers, can_create = cursor.fetchone()
    attributes = [attribute for attribute, on in zip(ROLE_ATTRIBUTES, held, strict=True) if on]
    attributes += [f"membership of the superuser role {superuser!r}" for superuser in superusers]
    cursor.execute(
        """
        SELECT c.relname,
               ARRAY(SELECT p FROM unnest(%s::text[]) AS p WHERE has_table_privilege(%s, c.oid, p)),
               ARRAY(SELECT a.attname::text FROM pg_attribute a
                     WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                       AND has_column_privilege(%s, c.oid, a.attnum, 'UPDATE'))
        FROM pg_class c
        WHERE c.relnamespace = current_schema()::text::regnamespace AND c.relkind IN ('r', 'p')
        ORDER BY c.relname
        """,
        [list(TABLE_PRIVILEGES), role, role],
    )
    tables = {
        table: TableAccess(frozenset(privileges), frozenset() if "UPDATE" in privileges else frozenset(columns))
        for table, privileges, columns in cursor.fetchall()
    }
    return RoleAudit(
        role=role, attributes=tuple(attributes), owned=_owned(cursor, role), can_create=can_create, tables=tables
    )
