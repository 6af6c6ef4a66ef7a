"""Rebuild the money projections (account balances, statement lines) from
the transfers, the ledger entries they are projections of."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from django.db import connection, transaction


def iter_transfers(cursor: Any, batch: int = 20000) -> Iterator[tuple[int, int, int, int, int, Any]]:
    """(id, debit, credit, amount, event, created_at) of every transfer in id order."""
    after = 0
    while True:
        cursor.execute(
            "SELECT id, debit_account_id, credit_account_id, amount, event_id, created_at FROM ledger_transfer "
            "WHERE id > %s ORDER BY id LIMIT %s",
            [after, batch],
        )
        rows = cursor.fetchall()
        yield from rows
        if len(rows) < batch:
            return
        after = rows[-1][0]


def expected_projections(cursor: Any) -> tuple[dict[int, int], list[tuple[int, int, int, int, int, Any]]]:
    """Balances and statement lines as the transfers say they must be."""
    balances: dict[int, int] = defaultdict(int)
    lines = []
    for transfer_id, debit, credit, amount, event_id, created_at in iter_transfers(cursor):
        balances[debit] -= amount
        lines.append((debit, transfer_id, event_id, -amount, balances[debit], created_at))
        balances[credit] += amount
        lines.append((credit, transfer_id, event_id, amount, balances[credit], created_at))
    return dict(balances), lines


def rebuild_projections() -> int:
    """Recompute every balance and statement line from the transfers; returns
    the number of statement lines written."""
    with transaction.atomic(), connection.cursor() as cursor:
        balances, lines = expected_projections(cursor)
        cursor.execute("DELETE FROM ledger_statement_line")
        # Balances are set in one pass; the CHECK holds because the
        # transfers never overdrew (verify_ledger says so otherwise).
        cursor.execute("UPDATE ledger_account SET balance = 0")
        cursor.executemany(
            "UPDATE ledger_account SET balance = %s WHERE id = %s", [(b, a) for a, b in balances.items()]
        )
        cursor.executemany(
            "INSERT INTO ledger_statement_line (account_id, transfer_id, event_id, amount, balance_after, created_at) "
            "VALUES (%s, %s, %s, %s, %s, %s)",
            lines,
        )
        return len(lines)


def check_money_projections() -> list[str]:
    """Every balance and statement line that differs from its rebuild from the
    transfers, named (nothing is written)."""
    out: list[str] = []
    with connection.cursor() as cursor:
        balances, lines = expected_projections(cursor)
        cursor.execute("SELECT id, balance FROM ledger_account ORDER BY id")
        for account_id, balance in cursor.fetchall():
            if balance != balances.get(account_id, 0):
                out.append(f"ledger_account [money] row id={account_id}: balance live {balance}, "
                           f"rebuilt {balances.get(account_id, 0)}")  # fmt: skip
        cursor.execute("SELECT account_id, transfer_id, event_id, amount, balance_after FROM ledger_statement_line")
        live = {(a, t): (e, amount, after) for a, t, e, amount, after in cursor.fetchall()}
    rebuilt = {(a, t): (e, amount, after) for a, t, e, amount, after, _ in lines}
    for key in sorted(set(live) | set(rebuilt)):
        where = f"ledger_statement_line [money] row account_id={key[0]}, transfer_id={key[1]}"
        if key not in live:
            out.append(f"{where}: missing (the transfers have it)")
        elif key not in rebuilt:
            out.append(f"{where}: extra (no such transfer leg)")
        elif live[key] != rebuilt[key]:
            out.append(f"{where}: (event, amount, balance_after) live {live[key]}, rebuilt {rebuilt[key]}")
    return out
