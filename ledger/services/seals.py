"""Seals: a signed Merkle root over every event from the previous seal's bound
up to a safe bound of the global log (docs/ledger.md). Seals chain: each
signs the previous root too, so dropping or reordering seals is detectable.
A seal signs the integrity epochs too, and never an event without a valid MAC
(``ledger.services.macs``): it stops before the first such event.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db import connection, transaction

from ledger.canonical import GENESIS_HASH, SEAL_ALGORITHM, canonical_text, merkle_root, seal_message
from ledger.errors import EventNotAuthentic, IntegrityEpochMoved
from ledger.services.events import now, safe_txid_bound
from ledger.services.macs import describe, integrity_epochs, mac_epoch, mac_is_valid, verification_keys

ALGORITHM = SEAL_ALGORITHM

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SealRecord:
    id: int
    from_txid: int
    to_txid: int
    event_count: int
    last_event_id: int | None
    merkle_root: str
    prev_root: str
    algorithm: str
    signature: str
    epochs: Mapping[str, int] | None = None  # None: a seal from before seals signed them


def seal_key() -> bytes:
    key = settings.CASINO_SEAL_KEY
    if not key:
        raise RuntimeError("CASINO_SEAL_KEY is not set")
    return key.encode()


signed_message = seal_message


def record_message(record: SealRecord) -> bytes:
    return signed_message(
        from_txid=record.from_txid,
        to_txid=record.to_txid,
        event_count=record.event_count,
        last_event_id=record.last_event_id,
        merkle_root=record.merkle_root,
        prev_root=record.prev_root,
        epochs=record.epochs,
    )


def sign(message: bytes, key: bytes) -> str:
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def _events_in_range(
    cursor: Any, columns: str, from_txid: int, to_txid: int, *, min_id: int | None = None, batch: int = 20000
) -> Iterator[tuple[Any, ...]]:
    """``(txid, id, *columns)`` of the events with ``from_txid <= txid < to_txid``
    (and ``id >= min_id``, if given), in global ``(txid, id)`` order, ``batch``
    rows a query."""
    after = (from_txid - 1, 0) if from_txid else (-1, 0)
    min_id_clause, min_id_param = ("", []) if min_id is None else (" AND id >= %s", [min_id])
    while True:
        cursor.execute(
            f"SELECT txid, id, {columns} FROM ledger_event WHERE txid >= %s AND txid < %s AND (txid, id) > (%s, %s)"
            f"{min_id_clause} ORDER BY txid, id LIMIT %s",
            [from_txid, to_txid, after[0], after[1], *min_id_param, batch],
        )
        rows = cursor.fetchall()
        yield from rows
        if len(rows) < batch:
            return
        after = (int(rows[-1][0]), int(rows[-1][1]))


def sealed_hashes(cursor: Any, from_txid: int, to_txid: int, batch: int = 20000) -> Iterator[tuple[int, str]]:
    """(position, hash) of the events a seal covers, in global order."""
    for _, position, digest in _events_in_range(cursor, "hash", from_txid, to_txid, batch=batch):
        yield int(position), digest


def last_seal(cursor: Any) -> tuple[int, str]:
    """(bound, root) of the latest seal; (0, genesis) before the first."""
    cursor.execute("SELECT to_txid, merkle_root FROM ledger_seal ORDER BY id DESC LIMIT 1")
    row = cursor.fetchone()
    return (int(row[0]), row[1]) if row else (0, GENESIS_HASH)


def moved_epochs(signed: Mapping[str, int] | None, current: Mapping[str, int]) -> list[str]:
    """The integrity epochs a seal signed (``signed``) that differ now, described.
    A feature the seal did not know (a later migration's) is no difference."""
    moved = []
    for feature, first in sorted((signed or {}).items()):
        if current.get(feature) != first:
            now_at = f"starts at event {current[feature]}" if feature in current else "has no row"
            moved.append(f"integrity epoch {feature!r} {now_at}; the seal signed it starting at event {first}")
    return moved


def _last_signed_epochs(cursor: Any) -> tuple[int | None, dict[str, int] | None]:
    """(id, epochs) of the latest seal that signed epochs; (None, None) if none did."""
    cursor.execute("SELECT id, epochs FROM ledger_seal WHERE epochs IS NOT NULL ORDER BY id DESC LIMIT 1")
    row = cursor.fetchone()
    if row is None:
        return None, None
    try:
        return int(row[0]), {str(k): int(v) for k, v in json.loads(row[1]).items()}
    except (ValueError, TypeError, AttributeError):
        return int(row[0]), {"<unreadable>": -1}  # differs from any epochs: refused


def _first_unauthentic(cursor: Any, from_txid: int, to_txid: int, first_mac_event: int) -> tuple[int, str] | None:
    """(txid, name) of the first event in ``(txid, id)`` order of the range that
    is at or after the ``mac`` epoch and has no valid MAC; ``None`` if all do."""
    keys = verification_keys()
    columns = "hash, mac, stream_id, version, type"
    for txid, position, digest, mac, stream_id, version, type_ in _events_in_range(
        cursor, columns, from_txid, to_txid, min_id=first_mac_event
    ):
        if not mac_is_valid(keys, digest, mac):
            why = "has no MAC" if not mac else "has a MAC that does not verify"
            return int(txid), f"{describe(int(position), stream_id, int(version), type_)} {why}"
    return None


def seal() -> SealRecord | None:
    """Seal every event committed since the last seal; ``None`` if there is none.

    Runs in its own transaction; concurrent sealers queue on a lock (and the
    unique ``from_txid`` would refuse a second seal of the same range).

    Signs the integrity epochs with the rest, and signs nothing
    (``IntegrityEpochMoved``) while they differ from those the last seal signed
    (``moved_epochs``). An event at or after the ``mac``
    epoch without a valid MAC is never sealed: the seal covers only the
    transactions before the first such event's (nothing, if it is in the first
    one), commits that, logs the event and raises ``EventNotAuthentic`` naming
    it (``details["sealed"]``: the seal written before it, or ``None``). Every
    later seal stops at the same event until an operator deals with it.
    """
    key = seal_key()
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext('ledger_seal'))")
        bound = safe_txid_bound(cursor)  # before this transaction writes anything
        from_txid, prev_root = last_seal(cursor)
        if bound <= from_txid:
            return None
        epochs = integrity_epochs(cursor)
        signed_by, signed = _last_signed_epochs(cursor)
        moved = moved_epochs(signed, epochs)
        if moved:
            message = f"{'; '.join(moved)} (seal {signed_by}); sealed nothing"
            logger.error("ledger seal: %s", message)
            raise IntegrityEpochMoved(message, sealed=None)
        refused = _first_unauthentic(cursor, from_txid, bound, mac_epoch(epochs))
        if refused is not None:
            bound = refused[0]  # the bad event's whole transaction stays out
        record = _write_seal(cursor, key, from_txid, bound, prev_root, epochs) if bound > from_txid else None
    if refused is not None:
        sealed = f"sealed up to txid {record.to_txid} (seal {record.id})" if record else "sealed nothing"
        message = f"not sealing {refused[1]} (no valid MAC under the event keys); {sealed}"
        logger.error("ledger seal: %s", message)
        raise EventNotAuthentic(message, sealed=record)
    return record


def _write_seal(
    cursor: Any, key: bytes, from_txid: int, bound: int, prev_root: str, epochs: Mapping[str, int]
) -> SealRecord | None:
    """Insert the seal of the events with ``from_txid <= txid < bound``; ``None`` if there is none."""
    positions: list[int] = []
    hashes: list[str] = []
    for position, digest in sealed_hashes(cursor, from_txid, bound):
        positions.append(position)
        hashes.append(digest)
    if not hashes:
        return None
    record = SealRecord(
        id=0,
        from_txid=from_txid,
        to_txid=bound,
        event_count=len(hashes),
        last_event_id=max(positions),
        merkle_root=merkle_root(hashes),
        prev_root=prev_root,
        algorithm=ALGORITHM,
        signature="",
        epochs=epochs,
    )
    signature = sign(record_message(record), key)
    cursor.execute(
        "INSERT INTO ledger_seal (from_txid, to_txid, event_count, last_event_id, merkle_root, prev_root, "
        "algorithm, signature, created_at, epochs) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
        [
            record.from_txid,
            record.to_txid,
            record.event_count,
            record.last_event_id,
            record.merkle_root,
            record.prev_root,
            ALGORITHM,
            signature,
            connection.ops.adapt_datetimefield_value(now()),
            canonical_text(dict(epochs)),
        ],
    )
    seal_id = int(cursor.fetchone()[0])
    return replace(record, id=seal_id, signature=signature)


@dataclass(frozen=True)
class SealLag:
    """The ledger's seal state for the operator: the last seal's time (``None``:
    never sealed) and the oldest committed event it does not cover yet (``None``:
    every event is sealed)."""

    last_sealed_at: datetime | None
    oldest_unsealed_at: datetime | None


def seal_lag() -> SealLag:
    """Where sealing stands (``SealLag``): two indexed reads (the last seal; the
    first event at or after its bound in global order)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_txid, created_at FROM ledger_seal ORDER BY id DESC LIMIT 1")
        last = cursor.fetchone()
        cursor.execute("SELECT recorded_at FROM ledger_event WHERE txid >= %s ORDER BY txid, id LIMIT 1",
                       [int(last[0]) if last else 0])  # fmt: skip
        first = cursor.fetchone()
    return SealLag(_aware(last[1]) if last else None, _aware(first[0]) if first else None)


def _aware(value: Any) -> datetime:
    """A timestamp column as an aware datetime (SQLite hands back text or naive UTC)."""
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
