"""``verify_ledger``'s check of the poker seats (registered by ``games.apps``):
every seat's stack equals its ``poker_seat`` account's balance, and no such
account holds chips without a seat (docs/poker.md, "Services and money")."""

from __future__ import annotations

from django.db import connection

from games.poker.services.tables import seat_owner
from ledger.models import AccountKind
from ledger.services.verify import Problem

# One statement, so the seats and the balances are read in one snapshot: a step
# committing meanwhile cannot show a seat from before it beside a balance after it.
_SEATS_AND_ACCOUNTS = (
    "SELECT 'seat', s.id, s.table_id, s.player_id, s.seat_number, s.stack, t.currency, NULL "
    "FROM games_pokerseat s JOIN games_pokertable t ON t.id = s.table_id "
    "UNION ALL "
    "SELECT 'account', a.id, NULL, NULL, NULL, a.balance, a.currency, a.owner FROM ledger_account a WHERE a.kind = %s"
)


def check_seat_stacks() -> list[Problem]:
    """One problem per seat whose stack differs from its account's balance (or
    that has no account), in seat id order, then one per ``poker_seat`` account
    holding chips for a player with no seat at that table."""
    with connection.cursor() as cursor:
        cursor.execute(_SEATS_AND_ACCOUNTS, [AccountKind.POKER_SEAT.value])
        rows = cursor.fetchall()
    accounts = {(owner, currency): (account_id, balance) for kind, account_id, _, _, _, balance, currency, owner in rows
                if kind == "account"}  # fmt: skip
    seats = sorted(row[1:7] for row in rows if row[0] == "seat")
    problems: list[Problem] = []
    for seat_id, table_id, player_id, number, stack, currency in seats:
        account = accounts.pop((seat_owner(table_id=table_id, player_id=player_id), currency), None)
        where = f"poker seat {seat_id} (table {table_id}, seat {number}, player {player_id})"
        if account is None:
            problems.append(Problem("poker_seat", f"{where}: stack {stack}, no poker_seat account"))
        elif account[1] != stack:
            problems.append(
                Problem("poker_seat", f"{where}: stack {stack}, its poker_seat account {account[0]} holds {account[1]}")
            )
    for (owner, currency), (account_id, balance) in sorted(accounts.items(), key=lambda item: item[1][0]):
        if balance != 0:
            problems.append(
                Problem("poker_seat", f"poker_seat account {account_id} ({owner}) holds {balance} {currency}: no seat")
            )
    return problems
