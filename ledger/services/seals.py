"""Seals: a signed Merkle root over every event from the previous seal's bound
up to a safe bound of the global log (docs/ledger.md). Seals chain: each
signs the previous root too, so dropping or reordering seals is detectable.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from django.conf import settings
from django.db import connection, transaction

from ledger.canonical import GENESIS_HASH, SEAL_ALGORITHM, merkle_root, seal_message
from ledger.services.events import now, safe_txid_bound

ALGORITHM = SEAL_ALGORITHM


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
    )


def sign(message: bytes, key: bytes) -> str:
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def sealed_hashes(cursor: Any, from_txid: int, to_txid: int, batch: int = 20000) -> Iterator[tuple[int, str]]:
    """(position, hash) of the events a seal covers, in global order."""
    after = (from_txid - 1, 0) if from_txid else (-1, 0)
    while True:
        cursor.execute(
            "SELECT txid, id, hash FROM ledger_event WHERE txid >= %s AND txid < %s AND (txid, id) > (%s, %s) "
            "ORDER BY txid, id LIMIT %s",
            [from_txid, to_txid, after[0], after[1], batch],
        )
        rows = cursor.fetchall()
        for row in rows:
            yield int(row[1]), row[2]
        if len(rows) < batch:
            return
        after = (int(rows[-1][0]), int(rows[-1][1]))


def last_seal(cursor: Any) -> tuple[int, str]:
    """(bound, root) of the latest seal; (0, genesis) before the first."""
    cursor.execute("SELECT to_txid, merkle_root FROM ledger_seal ORDER BY id DESC LIMIT 1")
    row = cursor.fetchone()
    return (int(row[0]), row[1]) if row else (0, GENESIS_HASH)


def seal() -> SealRecord | None:
    """Seal every event committed since the last seal; ``None`` if there is none.

    Runs in its own transaction; concurrent sealers queue on a lock (and the
    unique ``from_txid`` would refuse a second seal of the same range).
    """
    key = seal_key()
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext('ledger_seal'))")
        bound = safe_txid_bound(cursor)  # before this transaction writes anything
        from_txid, prev_root = last_seal(cursor)
        if bound <= from_txid:
            return None
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
        )
        signature = sign(record_message(record), key)
        cursor.execute(
            "INSERT INTO ledger_seal (from_txid, to_txid, event_count, last_event_id, merkle_root, prev_root, "
            "algorithm, signature, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
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
            ],
        )
        seal_id = int(cursor.fetchone()[0])
    return replace(record, id=seal_id, signature=signature)
