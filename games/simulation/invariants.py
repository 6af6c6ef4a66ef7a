"""The simulator's ledger-wide invariants (a family adds its own: ``Family.check``).

After every step: money sums to zero in each currency; no balance is negative
(but the kinds that may); every registered ``verify_ledger`` check of rows that
mirror money (the poker seats; the house rounds' pending holds against
their wagers in play: ``hold_resolved_once``). The full check (every ``full_every`` steps and
at the end): ``verify_ledger`` itself: the hash chains, the seals, every balance
against its transfers, the holds, and the projections against their rebuild;
no hold resolved twice and no house player stream paid twice (by the transfers).
"""

from __future__ import annotations

from django.db import connection

from ledger.services.verify import registered_checks

#: ``verify_ledger``'s check names -> the simulator's invariant names.
INVARIANT_OF = {
    "chain": "hash_chains_verify",
    "seal": "hash_chains_verify",
    "money": "money_matches_transfers",
    "projection": "projections_equal_rebuild",
    "poker_seat": "seat_matches_ledger",
    "house_hold": "hold_resolved_once",
}


def ledger_checks(*, full: bool) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    with connection.cursor() as cursor:
        # One query for both cheap checks; the negative accounts are listed only when there are some.
        cursor.execute(
            "SELECT currency, SUM(balance), SUM(CASE WHEN balance < 0 AND NOT may_go_negative THEN 1 ELSE 0 END) "
            "FROM ledger_account GROUP BY currency"
        )
        negative = 0
        for currency, total, below in cursor.fetchall():
            negative += below or 0
            if total != 0:
                found.append(("money_sums_to_zero", f"{currency} balances sum to {total}, not 0"))
        if negative:
            cursor.execute(
                "SELECT id, kind, owner, balance FROM ledger_account WHERE balance < 0 AND NOT may_go_negative "
                "ORDER BY id"
            )
            for account_id, kind, owner, balance in cursor.fetchall():
                found.append(("no_negative_balance", f"{kind} account {account_id} ({owner}) is {balance}"))
    if full:
        found += _resolved_and_paid_once()
        from ledger.services.seals import seal_key
        from ledger.services.verify import verify_ledger

        for problem in verify_ledger(key=seal_key()):
            found.append((INVARIANT_OF.get(problem.check, problem.check), str(problem)))
    else:
        for name, check in registered_checks().items():
            found += [(INVARIANT_OF.get(p.check, name), str(p)) for p in check()]
    return found


def _resolved_and_paid_once() -> list[tuple[str, str]]:
    """No hold resolved by two events (its post, release or void legs), and no
    house player stream paid (``payout``, ``jackpot``) by two events."""
    found: list[tuple[str, str]] = []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT hold_id, COUNT(DISTINCT event_id) FROM ledger_transfer WHERE hold_id IS NOT NULL "
            "AND kind <> 'hold' GROUP BY hold_id HAVING COUNT(DISTINCT event_id) > 1 ORDER BY hold_id"
        )
        for hold_id, events in cursor.fetchall():
            found.append(("hold_resolved_once", f"hold {hold_id} resolved by {events} events"))
        cursor.execute(
            "SELECT e.stream_id, COUNT(DISTINCT t.event_id) FROM ledger_transfer t JOIN ledger_event e "
            "ON e.id = t.event_id WHERE t.kind IN ('payout', 'jackpot') AND e.stream_id LIKE %s "
            "GROUP BY e.stream_id HAVING COUNT(DISTINCT t.event_id) > 1 ORDER BY e.stream_id",
            ["round-%-player-%"],
        )
        for stream_id, events in cursor.fetchall():
            found.append(("no_wager_paid_twice", f"{stream_id} paid by {events} events"))
    return found
