"""What the poker store's modules share: a model's columns in a SELECT, a row
read back as the ORM's instance, and statements read together in one round
trip (PostgreSQL; psycopg 3's pipeline mode, prepared statements)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import psycopg
from django.db import connection, models

from ledger.services.postings import bulk_cursor, pipelined

M = TypeVar("M", bound=models.Model)


def columns(model: type[models.Model], alias: str) -> str:
    """Every concrete column of ``model``, in field order, qualified by ``alias``
    (what ``instance`` reads back)."""
    return ", ".join(f"{alias}.{connection.ops.quote_name(str(f.column))}" for f in model._meta.concrete_fields)


def table(model: type[models.Model]) -> str:
    """``model``'s table name, quoted."""
    return connection.ops.quote_name(model._meta.db_table)


def instance(model: type[M], values: Sequence[Any]) -> M:
    """``values`` (every concrete column, in field order: ``columns``) as the ORM's
    instance, through the fields' converters (JSON text -> Python)."""
    spec = _SPECS.get(model)
    if spec is None:
        fields = model._meta.concrete_fields
        spec = _SPECS[model] = (
            [f.attname for f in fields],
            [(n, f) for n, f in enumerate(fields) if hasattr(f, "from_db_value")],
        )
    attnames, converters = spec
    if converters:
        values = list(values)
        for n, f in converters:
            if values[n] is not None:
                values[n] = f.from_db_value(values[n], None, connection)
    return model.from_db(connection.alias, attnames, values)


_SPECS: dict[type[models.Model], tuple[list[str], list[tuple[int, Any]]]] = {}


def read_together(statements: Sequence[tuple[str, Sequence[Any]]]) -> list[list[tuple[Any, ...]]]:
    """Each statement's rows (every statement returns rows: a SELECT, or a write
    with RETURNING), the statements sent together in one round trip
    (psycopg's pipeline mode), prepared, in order, inside the caller's
    transaction. Each takes its own snapshot (READ COMMITTED): a statement
    after a row lock reads what the lock's previous holder committed."""
    with bulk_cursor() as first:
        pg = connection.connection
        cursors = [first] + [psycopg.Cursor(pg) for _ in statements[1:]]
        try:
            with pipelined():
                for cursor, (sql, params) in zip(cursors, statements, strict=True):
                    cursor.execute(sql, params, prepare=True)
            return [cursor.fetchall() for cursor in cursors]  # each statement returns rows (a SELECT, a RETURNING)
        finally:
            for cursor in cursors[1:]:
                cursor.close()
