"""Database checks shared by the suites: the rows a refused command must leave
exactly as they were, and the ledger's per-currency sum (always zero)."""

from __future__ import annotations

from typing import Any

from django.db import connection


def rows(*tables: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of each table, in primary-key order: compare before and after a refusal."""
    result: dict[str, list[tuple[Any, ...]]] = {}
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f"SELECT * FROM {table} ORDER BY 1")
            result[table] = cursor.fetchall()
    return result


def ledger_sums() -> dict[str, int]:
    """Sum of every account's balance per currency: zero when no money was created or lost."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT currency, SUM(balance) FROM ledger_account GROUP BY currency")
        return {currency: int(total) for currency, total in cursor.fetchall()}
