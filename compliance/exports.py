"""Audit exports: the events, ledger entries and seals of a period, with a
signed manifest a regulator verifies offline (``tools/verify_export.py``).

Layout, manifest and what verification proves: docs/compliance.md. The file
encoding and the checks live in ``tools.verify_export`` (no Django), so the
exporter writes exactly the bytes the verifier reads.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.conf import settings

from casino.errors import DomainError
from ledger.errors import SealRefused
from ledger.services.events import aware_datetime, json_value, now, read_cursor, timestamp
from ledger.services.seals import seal
from tools.verify_export import (
    EXPORT_FORMAT,
    FILES,
    SIGNATURE_ALGORITHM,
    encode_rows,
    entry_totals,
    file_name,
    manifest_message,
)


class ExportRefused(DomainError, code="export_refused", http_status=400):
    """The period cannot be exported as asked."""


class PeriodNotSealed(DomainError, code="period_not_sealed", http_status=409):
    """Events of the period are not sealed yet (the period is too recent or a writer is still running)."""


@dataclass(frozen=True)
class ExportFilters:
    table: str | None = None
    player: str | None = None

    @property
    def active(self) -> bool:
        return self.table is not None or self.player is not None

    def as_dict(self) -> dict[str, str | None]:
        return {"table": self.table, "player": self.player}


@dataclass(frozen=True)
class ExportResult:
    directory: Path
    manifest: dict[str, Any]


def signing_key() -> Ed25519PrivateKey:
    seed = settings.CASINO_EXPORT_SIGNING_KEY
    if not seed:
        raise RuntimeError("CASINO_EXPORT_SIGNING_KEY is not set")
    return Ed25519PrivateKey.from_private_bytes(bytes.fromhex(seed))


def public_key_hex() -> str:
    """The export signing key's public half (hex): what a regulator pins."""
    return signing_key().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()


_EVENT_COLUMNS = "id, txid, stream_id, version, type, schema_version, data, metadata, recorded_at, prev_hash, hash"


def _event_rows(cursor: Any, where: str, params: list[Any]) -> list[dict[str, Any]]:
    cursor.execute(f"SELECT {_EVENT_COLUMNS} FROM ledger_event WHERE {where} ORDER BY txid, id", params)
    return [
        {
            "position": int(r[0]),
            "txid": int(r[1]),
            "stream_id": r[2],
            "version": int(r[3]),
            "type": r[4],
            "schema_version": int(r[5]),
            "data": json_value(r[6]),
            "metadata": json_value(r[7]),
            "recorded_at": timestamp(aware_datetime(r[8])),
            "prev_hash": r[9],
            "hash": r[10],
        }
        for r in cursor.fetchall()
    ]


def _account_ids(cursor: Any, owner: str) -> set[int]:
    cursor.execute("SELECT id FROM ledger_account WHERE owner = %s", [owner])
    return {int(row[0]) for row in cursor.fetchall()}


def _events_touching(cursor: Any, accounts: set[int], positions: Iterable[int]) -> set[int]:
    wanted = list(positions)
    if not accounts or not wanted:
        return set()
    found: set[int] = set()
    ids = sorted(accounts)
    marks = ",".join(["%s"] * len(ids))
    for start in range(0, len(wanted), 5000):
        chunk = wanted[start : start + 5000]
        cursor.execute(
            f"SELECT DISTINCT event_id FROM ledger_transfer WHERE event_id IN ({','.join(['%s'] * len(chunk))}) "
            f"AND (debit_account_id IN ({marks}) OR credit_account_id IN ({marks}))",
            [*chunk, *ids, *ids],
        )
        found.update(int(row[0]) for row in cursor.fetchall())
    return found


def _matches_id(value: Any, wanted: str) -> bool:
    return value is not None and str(value) == wanted


def _filter(cursor: Any, events: list[dict[str, Any]], filters: ExportFilters) -> list[dict[str, Any]]:
    """The events a table and/or player filter selects (docs/compliance.md, "Filters")."""
    positions = [e["position"] for e in events]
    if filters.player is not None:
        player = filters.player
        accounts = _account_ids(cursor, f"player:{player}")
        streams = {f"account-{a}" for a in accounts}
        money = _events_touching(cursor, accounts, positions)
        events = [
            e
            for e in events
            if e["stream_id"] in streams
            or e["stream_id"].endswith(f"-player-{player}")
            or _matches_id(e["data"].get("player_id"), player)
            or e["position"] in money
        ]
    if filters.table is not None:
        table = filters.table
        accounts = _account_ids(cursor, f"table:{table}")
        money = _events_touching(cursor, accounts, [e["position"] for e in events])
        events = [
            e
            for e in events
            if _matches_id(e["data"].get("table_id"), table)
            or _matches_id(e["metadata"].get("table_id"), table)
            or e["position"] in money
        ]
    return events


def seal_through(*, start: datetime, end: datetime) -> None:
    """Seal what has committed, so a past period is fully covered, waiting up to
    ``CASINO_EXPORT_SEAL_WAIT_SECONDS`` for the seal to cover every event of
    ``[start, end)`` committed now. A seal never reads past a transaction of
    this database still running (docs/ledger.md, "Global order"): a dealer's,
    a moment; a stuck one, until PostgreSQL ends it
    (``CASINO_DB_IDLE_IN_TRANSACTION_SECONDS`` on the runtime role). A refused
    seal (an event without a valid MAC, a moved integrity epoch: logged) sealed
    at most what came before the problem; ``collect`` then refuses the period as
    not sealed."""
    deadline = time.monotonic() + settings.CASINO_EXPORT_SEAL_WAIT_SECONDS
    while True:
        try:
            seal()
        except SealRefused:
            return
        with read_cursor() as cursor:
            cursor.execute(
                "SELECT MAX(txid) < (SELECT COALESCE(MAX(to_txid), 0) FROM ledger_seal) FROM ledger_event "
                "WHERE recorded_at >= %s AND recorded_at < %s",
                [start, end],
            )
            covered = cursor.fetchone()[0]
        if covered is not False or time.monotonic() >= deadline:
            return  # covered (None: the period has no event)
        time.sleep(0.1)


def collect(*, start: datetime, end: datetime, filters: ExportFilters) -> dict[str, Any]:
    """Rows of every export file and the manifest's unsigned facts, read in one snapshot."""
    if end <= start:
        raise ExportRefused("the period's end must be after its start", start=str(start), end=str(end))
    seal_through(start=start, end=end)
    with read_cursor() as cursor:
        cursor.execute(
            "SELECT MIN(txid), MAX(txid), COUNT(*) FROM ledger_event WHERE recorded_at >= %s AND recorded_at < %s",
            [start, end],
        )
        min_txid, max_txid, count = cursor.fetchone()
        seals: list[dict[str, Any]] = []
        if count:
            cursor.execute(
                "SELECT id, from_txid, to_txid, event_count, last_event_id, merkle_root, prev_root, algorithm, "
                "signature, created_at, epochs FROM ledger_seal WHERE to_txid > %s AND from_txid <= %s ORDER BY id",
                [min_txid, max_txid],
            )
            seals = [
                {
                    "id": int(r[0]),
                    "from_txid": int(r[1]),
                    "to_txid": int(r[2]),
                    "event_count": int(r[3]),
                    "last_event_id": None if r[4] is None else int(r[4]),
                    "merkle_root": r[5],
                    "prev_root": r[6],
                    "algorithm": r[7],
                    "signature": r[8],
                    "created_at": timestamp(aware_datetime(r[9])),
                    "epochs": None if r[10] is None else json.loads(r[10]),  # signed with the seal
                }
                for r in cursor.fetchall()
            ]
            if not seals or seals[-1]["to_txid"] <= max_txid:
                raise PeriodNotSealed("events of the period are not sealed yet; export again shortly")
        period = {"from": timestamp(start), "to": timestamp(end)}
        if seals:
            lo, hi = seals[0]["from_txid"], seals[-1]["to_txid"]
            leaves = _leaves(cursor, seals)
            if filters.active:
                in_period = _event_rows(
                    cursor, "recorded_at >= %s AND recorded_at < %s AND txid < %s", [start, end, hi]
                )
                events = _filter(cursor, in_period, filters)
            else:
                # Every event of the covering seals, so each seal's completeness can be checked.
                events = _event_rows(cursor, "txid >= %s AND txid < %s", [lo, hi])
        else:
            leaves, events = [], []
        entries = _entries(cursor, [e["position"] for e in events])
    in_period_positions = {e["position"] for e in events if period["from"] <= e["recorded_at"] < period["to"]}
    return {
        "period": period,
        "events": events,
        "entries": entries,
        "seals": seals,
        "seal_leaves": leaves,
        "in_period": in_period_positions,
    }


def _leaves(cursor: Any, seals: list[dict[str, Any]]) -> list[dict[str, Any]]:
    leaves: list[dict[str, Any]] = []
    for record in seals:
        cursor.execute(
            "SELECT id, hash FROM ledger_event WHERE txid >= %s AND txid < %s ORDER BY txid, id",
            [record["from_txid"], record["to_txid"]],
        )
        leaves.extend(
            {"seal_id": record["id"], "index": index, "position": int(row[0]), "hash": row[1]}
            for index, row in enumerate(cursor.fetchall())
        )
    return leaves


def _entries(cursor: Any, positions: list[int]) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for start in range(0, len(positions), 5000):
        chunk = positions[start : start + 5000]
        cursor.execute(
            "SELECT t.id, t.event_id, t.debit_account_id, d.key, t.credit_account_id, c.key, t.amount, t.currency, "
            "t.kind, t.hold_id, t.created_at FROM ledger_transfer t "
            "JOIN ledger_account d ON d.id = t.debit_account_id JOIN ledger_account c ON c.id = t.credit_account_id "
            f"WHERE t.event_id IN ({','.join(['%s'] * len(chunk))}) ORDER BY t.id",
            chunk,
        )
        entries.extend(
            {
                "id": int(r[0]),
                "event_position": int(r[1]),
                "debit_account": int(r[2]),
                "debit_account_key": r[3],
                "credit_account": int(r[4]),
                "credit_account_key": r[5],
                "amount": int(r[6]),
                "currency": r[7],
                "kind": r[8],
                "hold_id": None if r[9] is None else str(r[9]),
                "created_at": timestamp(aware_datetime(r[10])),
            }
            for r in cursor.fetchall()
        )
    entries.sort(key=lambda e: e["id"])
    return entries


def export_audit(
    *, start: datetime, end: datetime, filters: ExportFilters, file_format: str, out: Path
) -> ExportResult:
    """Write the export of ``[start, end)`` into ``out`` (created; must be empty) and sign its manifest."""
    if file_format not in ("jsonl", "csv"):
        raise ExportRefused(f"unknown format {file_format!r}", format=file_format)
    out.mkdir(parents=True, exist_ok=True)
    if any(out.iterdir()):
        raise ExportRefused(f"{out} is not empty", out=str(out))
    data = collect(start=start, end=end, filters=filters)
    files: dict[str, dict[str, Any]] = {}
    for kind in FILES:
        raw = encode_rows(kind, data[kind], file_format)
        name = file_name(kind, file_format)
        (out / name).write_bytes(raw)
        files[name] = {"sha256": hashlib.sha256(raw).hexdigest(), "rows": len(data[kind])}
    key = signing_key()
    manifest: dict[str, Any] = {
        "format": EXPORT_FORMAT,
        "period": data["period"],
        "filters": filters.as_dict(),
        "filtered": filters.active,
        "software_version": settings.CASINO_VERSION,
        "generated_at": timestamp(now()),
        "file_format": file_format,
        "files": files,
        "counts": {
            "events": len(data["events"]),
            "events_in_period": len(data["in_period"]),
            "entries": len(data["entries"]),
            "seals": len(data["seals"]),
            "seal_leaves": len(data["seal_leaves"]),
        },
        "totals": entry_totals(data["entries"], data["in_period"]),
        "seals": [
            {"id": s["id"], "from_txid": s["from_txid"], "to_txid": s["to_txid"], "merkle_root": s["merkle_root"]}
            for s in data["seals"]
        ],
    }
    public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()
    manifest["signature"] = {"algorithm": SIGNATURE_ALGORITHM, "public_key": public}
    manifest["signature"]["value"] = key.sign(manifest_message(manifest)).hex()
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return ExportResult(out, manifest)
