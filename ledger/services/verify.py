"""``verify_ledger``: walk every stream's hash chain and the events' MACs, every
seal and the money invariants; report problems, the first bad event first.

The ledger imports no app. An app whose rows mirror ledger money (the poker
seats' stacks, the house rounds' wagers) registers a check of them with
``register_check`` in its ``AppConfig.ready``; ``verify_ledger`` runs every
registered check after its own. ``Problem`` (what each check returns) is
``ledger.services.problems.Problem``, importable from here too."""

from __future__ import annotations

import hmac
import json
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.db import connection, transaction

from ledger.canonical import GENESIS_HASH, NotCanonical, canonical_json, chain_hash, event_body, merkle_root
from ledger.services.events import json_value, read_cursor, timestamp
from ledger.services.macs import integrity_epochs, mac_epoch, mac_is_valid, verification_keys
from ledger.services.problems import Problem
from ledger.services.projections import expected_projections
from ledger.services.seals import SealRecord, moved_epochs, record_message, sealed_hashes, sign
from ledger.services.verify_legs import check_legs

ExtraCheck = Callable[[], list[Problem]]
_extra_checks: dict[str, ExtraCheck] = {}


def register_check(name: str, check: ExtraCheck) -> None:
    """Run ``check`` in every ``verify_ledger`` from now on (registering ``name``
    again replaces it). ``check`` reads the database on the default connection and
    returns what it finds wrong, each ``Problem`` naming the rows; it must change
    nothing. Call from an ``AppConfig.ready``."""
    _extra_checks[name] = check


def registered_checks() -> dict[str, ExtraCheck]:
    """The checks other apps registered, by name."""
    return dict(_extra_checks)


def _events_by_stream(cursor: Any, batch: int = 20000) -> Iterator[tuple[Any, ...]]:
    after: tuple[str, int] = ("", 0)
    while True:
        cursor.execute(
            "SELECT id, stream_id, version, type, schema_version, data, metadata, recorded_at, prev_hash, hash, mac "
            "FROM ledger_event WHERE (stream_id, version) > (%s, %s) ORDER BY stream_id, version LIMIT %s",
            [after[0], after[1], batch],
        )
        rows = cursor.fetchall()
        yield from rows
        if len(rows) < batch:
            return
        after = (rows[-1][1], rows[-1][2])


def check_chains(cursor: Any, *, mac_keys: Sequence[bytes], first_mac_event: int) -> list[Problem]:
    """Each stream's versions, links and recomputed hashes, and the MAC of every
    event from ``first_mac_event`` on (under one of ``mac_keys``)."""
    problems: list[Problem] = []
    stream, version, last_hash = None, 0, GENESIS_HASH
    for row in _events_by_stream(cursor):
        event_id, stream_id, ver, type_, schema, data, metadata, recorded_at, prev_hash, digest, mac = row
        if stream_id != stream:
            stream, version, last_hash = stream_id, 0, GENESIS_HASH
        if ver != version + 1:
            problems.append(Problem("chain", f"{stream_id}: version {ver} follows {version}", event_id))
        if prev_hash != last_hash:
            problems.append(
                Problem("chain", f"{stream_id}@{ver}: prev_hash does not match the previous hash", event_id)
            )
        try:
            body = canonical_json(
                event_body(
                    stream_id=stream_id,
                    version=ver,
                    type=type_,
                    schema_version=schema,
                    data=json_value(data),
                    metadata=json_value(metadata),
                    recorded_at=timestamp(recorded_at),
                )
            )
            if chain_hash(prev_hash, body) != digest:
                problems.append(Problem("chain", f"{stream_id}@{ver}: hash does not match the content", event_id))
        except (NotCanonical, ValueError) as exc:
            problems.append(Problem("chain", f"{stream_id}@{ver}: not canonical: {exc}", event_id))
        if event_id >= first_mac_event and not mac_is_valid(mac_keys, digest, mac):
            why = "has no MAC" if not mac else "MAC does not verify under the event keys"
            problems.append(
                Problem("mac", f"{stream_id}@{ver} {type_}: {why} (written without the application's key)", event_id)
            )
        version, last_hash = ver, digest
    return problems


def check_seals(cursor: Any, key: bytes, epochs: dict[str, int] | None = None) -> list[Problem]:
    """Each seal's chain, signature and recomputed Merkle root, and the integrity
    epochs (``epochs``, read if not given) against those each seal signed."""
    problems: list[Problem] = []
    if epochs is None:
        epochs = integrity_epochs(cursor)
    cursor.execute(
        "SELECT id, from_txid, to_txid, event_count, last_event_id, merkle_root, prev_root, algorithm, signature, "
        "epochs FROM ledger_seal ORDER BY id"
    )
    previous_to, previous_root = 0, GENESIS_HASH
    for row in cursor.fetchall():
        seal_id, from_txid, to_txid, count, last_event_id, root, prev_root, algorithm, signature, signed = row
        try:
            sealed_epochs = None if signed is None else {str(k): int(v) for k, v in json.loads(signed).items()}
        except (ValueError, TypeError, AttributeError):
            problems.append(Problem("seal", f"seal {seal_id}: its epochs are not a JSON object of event ids"))
            sealed_epochs = {}
        if from_txid != previous_to or prev_root != previous_root:
            problems.append(Problem("seal", f"seal {seal_id} does not follow the previous seal"))
        stored = SealRecord(
            seal_id, from_txid, to_txid, count, last_event_id, root, prev_root, algorithm, signature, sealed_epochs
        )
        message = record_message(stored)
        if not hmac.compare_digest(sign(message, key), signature):
            problems.append(Problem("seal", f"seal {seal_id}: signature does not verify"))
        problems += [Problem("epoch", f"seal {seal_id}: {moved}") for moved in moved_epochs(sealed_epochs, epochs)]
        with connection.cursor() as events:
            covered = list(sealed_hashes(events, from_txid, to_txid))
        if len(covered) != count or merkle_root(h for _, h in covered) != root:
            problems.append(
                Problem("seal", f"seal {seal_id}: {len(covered)} events now, {count} sealed; Merkle root differs")
            )
        previous_to, previous_root = to_txid, root
    return problems


def check_money(cursor: Any) -> list[Problem]:
    problems: list[Problem] = []
    cursor.execute("SELECT currency, SUM(balance) FROM ledger_account GROUP BY currency")
    for currency, total in cursor.fetchall():
        if total != 0:
            problems.append(Problem("money", f"{currency} balances sum to {total}, not 0"))
    cursor.execute("SELECT id, kind, currency, balance, may_go_negative FROM ledger_account")
    accounts = {row[0]: row[1:] for row in cursor.fetchall()}
    expected, _ = expected_projections(cursor)
    for account_id, (kind, _, balance, may_go_negative) in sorted(accounts.items()):
        if balance != expected.get(account_id, 0):
            problems.append(
                Problem("money", f"account {account_id} balance {balance}, transfers say {expected.get(account_id, 0)}")
            )
        if balance < 0 and not may_go_negative:
            problems.append(Problem("money", f"{kind} account {account_id} is negative ({balance})"))
    # No foreign keys on the hot tables (see ledger.models): every reference is checked here.
    cursor.execute(
        "SELECT t.id, t.event_id, e.id IS NULL, d.id IS NULL OR c.id IS NULL FROM ledger_transfer t "
        "LEFT JOIN ledger_event e ON e.id = t.event_id LEFT JOIN ledger_account d ON d.id = t.debit_account_id "
        "LEFT JOIN ledger_account c ON c.id = t.credit_account_id "
        "WHERE e.id IS NULL OR d.id IS NULL OR c.id IS NULL OR t.currency <> d.currency OR t.currency <> c.currency "
        "OR t.amount <= 0"
    )
    for transfer_id, event_id, no_event, no_account in cursor.fetchall():
        why = "names a missing event" if no_event else "names a missing account" if no_account else "bad currency"
        problems.append(Problem("money", f"transfer {transfer_id} {why}", event_id))
    cursor.execute(
        "SELECT h.id, h.opened_event_id FROM ledger_hold h LEFT JOIN ledger_event e ON e.id = h.opened_event_id "
        "LEFT JOIN ledger_event r ON r.id = h.resolved_event_id LEFT JOIN ledger_account s ON s.id = h.source_id "
        "LEFT JOIN ledger_account w ON w.id = h.escrow_id LEFT JOIN ledger_account d ON d.id = h.destination_id "
        "WHERE e.id IS NULL OR (h.resolved_event_id IS NOT NULL AND r.id IS NULL) OR s.id IS NULL OR w.id IS NULL "
        "OR d.id IS NULL"
    )
    for hold_id, event_id in cursor.fetchall():
        problems.append(Problem("money", f"hold {hold_id} names a missing event or account", event_id))
    cursor.execute(
        "SELECT l.id, l.event_id FROM ledger_statement_line l LEFT JOIN ledger_transfer t ON t.id = l.transfer_id "
        "LEFT JOIN ledger_account a ON a.id = l.account_id WHERE t.id IS NULL OR a.id IS NULL"
    )
    for line_id, event_id in cursor.fetchall():
        problems.append(Problem("money", f"statement line {line_id} names a missing transfer or account", event_id))
    problems += _check_holds(cursor, accounts)
    return problems


def _check_holds(cursor: Any, accounts: dict[int, tuple[Any, ...]]) -> list[Problem]:
    problems: list[Problem] = []
    cursor.execute(
        "SELECT hold_id, kind, SUM(amount) FROM ledger_transfer WHERE hold_id IS NOT NULL GROUP BY hold_id, kind"
    )
    moved: dict[str, dict[str, int]] = defaultdict(dict)
    for hold_id, kind, total in cursor.fetchall():
        moved[str(hold_id).replace("-", "")][kind] = int(total)
    cursor.execute("SELECT id, escrow_id, amount, status, posted_amount, opened_event_id FROM ledger_hold")
    pending: dict[int, int] = defaultdict(int)
    for hold_id, escrow, amount, status, posted, event_id in cursor.fetchall():
        legs = moved.get(str(hold_id).replace("-", ""), {})
        want = {"hold": amount}
        if status == "pending":
            pending[escrow] += amount
        elif status == "posted":
            want |= {"post": posted} | ({"release": amount - posted} if amount - posted else {})
        else:
            want["void"] = amount
        if legs != want:
            problems.append(Problem("money", f"hold {hold_id} ({status}) moved {legs}, expected {want}", event_id))
    for account_id, (kind, _, balance, _) in accounts.items():
        if kind == "held" and balance != pending.get(account_id, 0):
            problems.append(
                Problem(
                    "money", f"held account {account_id} holds {balance}, pending holds {pending.get(account_id, 0)}"
                )
            )
    return problems


def check_projections() -> list[Problem]:
    """Every row of a registered projection that differs from its rebuild from
    the log (``ledger.services.projectors``), named."""
    from ledger.services.projectors import check_projections as differences

    return [Problem("projection", str(difference)) for difference in differences()]


def verify_ledger(*, key: bytes, projections: bool = True, mac_keys: Sequence[bytes] | None = None) -> list[Problem]:
    """Every problem found; events first (chains and MACs), in event order (the
    first is the first bad event), then seals and the integrity epochs they
    signed, money, the registered checks (``register_check``) and, unless
    ``projections`` is false, the read models against their rebuild from the
    log (``check_projections``). ``key``: the seal key; ``mac_keys``: the event
    keys (default: the settings' current and retired ones).

    Every check reads one snapshot of the database (``_one_snapshot``), so a
    system that goes on taking bets while it is verified is never reported
    for a bet that landed between two of the checks' queries."""
    with _one_snapshot():
        with read_cursor() as events:
            epochs = integrity_epochs(events)
            problems = check_chains(events, mac_keys=mac_keys or verification_keys(), first_mac_event=mac_epoch(epochs))
        with connection.cursor() as cursor:
            problems.sort(key=lambda p: p.event_id or 0)
            problems += check_seals(cursor, key, epochs)
            problems += check_money(cursor)
            problems += check_legs(cursor)
        for check in _extra_checks.values():
            problems += check()
        if projections:
            problems += check_projections()
    return problems


@contextmanager
def _one_snapshot() -> Iterator[None]:
    """A transaction whose reads all see one snapshot: REPEATABLE READ on
    PostgreSQL (its default, READ COMMITTED, gives each statement its own, so
    a balance and its legs could be read either side of a concurrent bet); a
    SQLite transaction is one snapshot already. Inside a caller's transaction
    (a test's, a command's) that transaction is used as it is."""
    if connection.in_atomic_block:
        yield
        return
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield
