"""The money rows held to the legs in the hashed events (``ledger.legs``).

From the ``legs`` epoch on (``IntegrityEpoch``, feature ``legs``: the smallest
``first_event_id``; no row at all: every event), per currency:

- every ``ledger_transfer`` row naming such an event equals one of that
  event's legs (kind, accounts, amount, currency, hold id), and every leg has
  its row: a forged row, a changed amount, a deleted row, a leg moved to
  other accounts are each named with the row and the event;
- every ``ledger_hold`` row opened by such an event equals its opening leg
  (accounts, destination, amount, currency), and its status, posted amount and
  resolving event agree with its resolution leg (or its lack of one);
- every account's balance equals the sum of its legs (plus, for events before
  the epoch, the transfer rows, checked as before);
- every statement line equals its side of a transfer row that is a leg
  (account, signed amount, transfer, event), and the running balances add up.

One pass over the events with legs and one over each money table, in memory
keyed by event (no query per row). Called by ``verify_ledger``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import Any
from uuid import UUID

from django.db import connection

from ledger.legs import BadLeg, Opening, Row, parse_legs, resolution_rows
from ledger.services.events import json_value, read_cursor
from ledger.services.problems import Problem

CHECK = "legs"


def legs_bound(cursor: Any) -> int:
    """The first event id that must carry its money legs (0: every event)."""
    cursor.execute("SELECT MIN(first_event_id) FROM ledger_integrity_epoch WHERE feature = %s", ["legs"])
    row = cursor.fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _hold_text(value: Any) -> str:
    return str(value if isinstance(value, UUID) else UUID(str(value)))


def _events_with_legs(bound: int, batch: int = 20000) -> Iterator[tuple[int, Any]]:
    """(id, legs value) of every event at or above ``bound`` whose data has a
    ``legs`` key, in id order (the text is searched in the database first)."""
    text = "data::text" if connection.vendor == "postgresql" else "data"
    after = bound - 1
    with read_cursor() as cursor:
        while True:
            cursor.execute(
                f"SELECT id, data FROM ledger_event WHERE id > %s AND strpos({text}, '\"legs\"') > 0 "
                "ORDER BY id LIMIT %s"
                if connection.vendor == "postgresql"
                else f"SELECT id, data FROM ledger_event WHERE id > %s AND instr({text}, '\"legs\"') > 0 "
                "ORDER BY id LIMIT %s",
                [after, batch],
            )
            rows = cursor.fetchall()
            for event_id, data in rows:
                decoded = json_value(data)
                if isinstance(decoded, dict) and "legs" in decoded:
                    yield int(event_id), decoded["legs"]
            if len(rows) < batch:
                return
            after = rows[-1][0]


def _describe(row: Row) -> str:
    hold = f", hold {row.hold_id}" if row.hold_id else ""
    return f"{row.kind} {row.amount} {row.currency} from account {row.debit} to account {row.credit}{hold}"


def check_legs(cursor: Any) -> list[Problem]:
    """Every disagreement between the money rows and the legs, each naming the
    row and the event (``Problem``s of check ``legs``)."""
    problems: list[Problem] = []
    bound = legs_bound(cursor)

    # 1. The legs, by event.
    expected: dict[int, Counter[Row]] = defaultdict(Counter)
    openings: dict[str, tuple[Opening, int]] = {}
    resolutions: dict[str, tuple[int | None, int]] = {}
    for event_id, legs in _events_with_legs(bound):
        try:
            parsed = parse_legs(legs, _hold_text)
        except BadLeg as exc:
            problems.append(Problem(CHECK, f"event {event_id}: unreadable legs: {exc}", event_id))
            continue
        expected[event_id].update(parsed.transfers)
        for hold_id, opening in parsed.openings:
            if hold_id in openings:
                problems.append(Problem(CHECK, f"hold {hold_id} is opened again by event {event_id} (first by "
                                               f"event {openings[hold_id][1]})", event_id))  # fmt: skip
            openings[hold_id] = (opening, event_id)
        for hold_id, posted in parsed.resolutions:
            if hold_id in resolutions:
                problems.append(Problem(CHECK, f"hold {hold_id} is resolved again by event {event_id} (first by "
                                               f"event {resolutions[hold_id][1]})", event_id))  # fmt: skip
            resolutions[hold_id] = (posted, event_id)

    # 2. The hold rows against their legs (and the resolutions' transfers).
    cursor.execute(
        "SELECT id, source_id, escrow_id, destination_id, amount, currency, status, posted_amount, opened_event_id, "
        "resolved_event_id FROM ledger_hold WHERE opened_event_id >= %s OR resolved_event_id >= %s",
        [bound, bound],
    )
    seen_holds: set[str] = set()
    for (
        hold_row,
        source,
        escrow,
        destination,
        amount,
        currency,
        status,
        posted,
        opened_event,
        resolved,
    ) in cursor.fetchall():
        hold_id = _hold_text(hold_row)
        seen_holds.add(hold_id)
        row_opening = Opening(int(source), int(escrow), int(destination), int(amount), currency)
        if opened_event >= bound:
            found = openings.get(hold_id)
            if found is None:
                problems.append(Problem(CHECK, f"hold {hold_id} ({_opening(row_opening)}) has no opening leg in "
                                               f"event {opened_event}", opened_event))  # fmt: skip
                continue
            opening, leg_event = found
            if (opening, leg_event) != (row_opening, opened_event):
                problems.append(Problem(CHECK, f"hold {hold_id}: the row says {_opening(row_opening)}, opened by "
                                               f"event {opened_event}; the leg in event {leg_event} says "
                                               f"{_opening(opening)}", leg_event))  # fmt: skip
        else:
            opening = row_opening  # opened before the epoch: the row, checked as before
        posted_leg, resolving_event = resolutions.get(hold_id, (None, None))
        want: tuple[str, int | None, int | None] = ("pending", None, None)
        if resolving_event is not None:  # a void leaves posted_amount at 0
            want = ("voided", 0, resolving_event) if posted_leg is None else ("posted", posted_leg, resolving_event)
        got = (status, None if posted is None else int(posted), None if resolved is None else int(resolved))
        if got != want:
            problems.append(Problem(CHECK, f"hold {hold_id} is {status} (posted {posted}, resolved by event "
                                           f"{resolved}); the legs say {want[0]} (posted {want[1]}, resolved by "
                                           f"event {want[2]})", resolving_event or opened_event))  # fmt: skip
        if resolving_event is not None:
            expected[resolving_event].update(resolution_rows(hold_id, opening, posted_leg))
    for hold_id, (opening, event_id) in openings.items():
        if hold_id not in seen_holds:
            problems.append(Problem(CHECK, f"event {event_id} opens hold {hold_id} ({_opening(opening)}): no such "
                                           "hold row", event_id))  # fmt: skip
    for hold_id, (_, event_id) in resolutions.items():
        if hold_id not in seen_holds:
            problems.append(Problem(CHECK, f"event {event_id} resolves hold {hold_id}: no such hold row", event_id))

    # 3. The transfer rows against the legs; the balances from the legs.
    balances: dict[int, int] = defaultdict(int)
    for rows in expected.values():
        for row, count in rows.items():
            balances[row.debit] -= row.amount * count
            balances[row.credit] += row.amount * count
    cursor.execute(
        "SELECT id, event_id, kind, debit_account_id, credit_account_id, amount, currency, hold_id "
        "FROM ledger_transfer WHERE event_id >= %s ORDER BY id",
        [bound],
    )
    bad_transfers: list[int] = []
    for transfer_id, event_id, kind, debit, credit, amount, currency, hold in cursor.fetchall():
        row = Row(kind, int(debit), int(credit), int(amount), currency, _hold_text(hold) if hold else None)
        legs = expected.get(event_id)
        if legs is not None and legs[row] > 0:
            legs[row] -= 1
            continue
        bad_transfers.append(transfer_id)
        problems.append(Problem(CHECK, f"transfer {transfer_id} ({_describe(row)}) is no leg of event {event_id}",
                                event_id))  # fmt: skip
    for event_id, rows in sorted(expected.items()):
        for row, count in sorted(rows.items()):
            for _ in range(count):
                problems.append(Problem(CHECK, f"event {event_id} has the leg {_describe(row)} with no transfer row",
                                        event_id))  # fmt: skip
    # Events before the epoch: their transfer rows, as before.
    cursor.execute(
        "SELECT a, SUM(d) FROM (SELECT debit_account_id AS a, -amount AS d FROM ledger_transfer WHERE event_id < %s "
        "UNION ALL SELECT credit_account_id, amount FROM ledger_transfer WHERE event_id < %s) s GROUP BY a",
        [bound, bound],
    )
    for account_id, total in cursor.fetchall():
        balances[int(account_id)] += int(total)
    cursor.execute("SELECT id, balance FROM ledger_account ORDER BY id")
    for account_id, balance in cursor.fetchall():
        if int(balance) != balances.get(account_id, 0):
            problems.append(Problem(CHECK, f"account {account_id} balance {balance}, its legs say "
                                           f"{balances.get(account_id, 0)}"))  # fmt: skip

    # 4. Statement lines: their side of their transfer; running balances.
    cursor.execute(
        "SELECT l.id, l.transfer_id, l.event_id, l.account_id, l.amount, t.event_id FROM ledger_statement_line l "
        "LEFT JOIN ledger_transfer t ON t.id = l.transfer_id WHERE t.id IS NULL OR l.event_id <> t.event_id OR NOT "
        "((l.account_id = t.debit_account_id AND l.amount = -t.amount) OR "
        "(l.account_id = t.credit_account_id AND l.amount = t.amount))"
    )
    for line_id, transfer_id, event_id, account_id, amount, transfer_event in cursor.fetchall():
        problems.append(Problem(CHECK, f"statement line {line_id} (account {account_id}, {amount:+d}, event "
                                       f"{event_id}) is no side of transfer {transfer_id} (event {transfer_event})",
                                event_id))  # fmt: skip
    cursor.execute(
        "SELECT t.id, t.event_id, COUNT(l.id), COALESCE(SUM(l.amount), 0) FROM ledger_transfer t "
        "LEFT JOIN ledger_statement_line l ON l.transfer_id = t.id GROUP BY t.id, t.event_id "
        "HAVING COUNT(l.id) <> 2 OR SUM(l.amount) <> 0 ORDER BY t.id"
    )
    for transfer_id, event_id, count, total in cursor.fetchall():
        problems.append(Problem(CHECK, f"transfer {transfer_id} of event {event_id} has {count} statement lines "
                                       f"summing to {total}, not its two sides", event_id))  # fmt: skip
    if bad_transfers:
        for start in range(0, len(bad_transfers), 1000):
            chunk = bad_transfers[start : start + 1000]
            cursor.execute(
                "SELECT id, transfer_id, event_id, account_id FROM ledger_statement_line WHERE transfer_id IN ("
                + ", ".join(["%s"] * len(chunk))
                + ") ORDER BY id",
                chunk,
            )
            for line_id, transfer_id, event_id, account_id in cursor.fetchall():
                problems.append(Problem(CHECK, f"statement line {line_id} (account {account_id}) is a side of "
                                               f"transfer {transfer_id}, which is no leg of event {event_id}",
                                        event_id))  # fmt: skip
    cursor.execute(
        "SELECT id, account_id, event_id, balance_after, running FROM (SELECT id, account_id, event_id, balance_after, "
        "SUM(amount) OVER (PARTITION BY account_id ORDER BY id) AS running FROM ledger_statement_line) s "
        "WHERE balance_after <> running ORDER BY id"
    )
    for line_id, account_id, event_id, after, running in cursor.fetchall():
        problems.append(Problem(CHECK, f"statement line {line_id} (account {account_id}): balance after {after}, "
                                       f"its lines add up to {running}", event_id))  # fmt: skip
    return problems


def _opening(opening: Opening) -> str:
    return (f"{opening.amount} {opening.currency} from account {opening.source} held in {opening.escrow} for "
            f"{opening.destination}")  # fmt: skip
