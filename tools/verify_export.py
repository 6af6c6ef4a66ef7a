#!/usr/bin/env python3
"""Verify a compliance audit export offline: no database, no Django.

Usage: ``python tools/verify_export.py DIR [--public-key HEX] [--seal-key KEY]``

Needs this file and ``ledger/canonical.py`` (pure Python, the same code the
ledger hashes and seals with) side by side as in the repository, Python 3.11+
and, for the Ed25519 manifest signature, the ``cryptography`` package.
Exits 0 when everything checks, 1 naming the first problem (all problems are
printed), 2 on bad usage. What each check proves: docs/compliance.md.
"""

from __future__ import annotations

import argparse
import bisect
import csv
import hashlib
import hmac
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ledger.canonical import (
    GENESIS_HASH,
    NotCanonical,
    canonical_json,
    chain_hash,
    event_body,
    merkle_root,
    seal_message,
)

EXPORT_FORMAT = "casino-audit-export/1"
SIGNATURE_ALGORITHM = "Ed25519"
# Files of an export, in the order they are written and checked.
FILES = ("events", "entries", "seals", "seal_leaves")
# Columns of each file; JSON-valued columns are canonical JSON text in CSV.
COLUMNS: dict[str, tuple[str, ...]] = {
    "events": (
        "position", "txid", "stream_id", "version", "type", "schema_version", "data", "metadata",
        "recorded_at", "prev_hash", "hash",
    ),
    "entries": (
        "id", "event_position", "debit_account", "debit_account_key", "credit_account", "credit_account_key",
        "amount", "currency", "kind", "hold_id", "created_at",
    ),
    "seals": (
        "id", "from_txid", "to_txid", "event_count", "last_event_id", "merkle_root", "prev_root", "algorithm",
        "signature", "created_at", "epochs",
    ),
    "seal_leaves": ("seal_id", "index", "position", "hash"),
}  # fmt: skip
INT_COLUMNS = frozenset(
    {"position", "txid", "version", "schema_version", "id", "event_position", "debit_account", "credit_account",
     "amount", "from_txid", "to_txid", "event_count", "last_event_id", "seal_id", "index"}
)  # fmt: skip
JSON_COLUMNS = frozenset({"data", "metadata", "epochs"})
# Columns added after the format's first exports: an export written before them
# lacks them and still verifies (the seals then signed no epochs: ``None``).
LATER_COLUMNS: dict[str, tuple[str, ...]] = {"seals": ("epochs",)}


def _columns_of(kind: str, found: Sequence[str], *, ordered: bool) -> tuple[str, ...] | None:
    """The columns ``found`` in a file of ``kind`` (in this order when ``ordered``:
    a CSV header), if they are the format's: today's, or today's without the
    later columns. ``None`` otherwise."""
    columns = COLUMNS[kind]
    older = tuple(c for c in columns if c not in LATER_COLUMNS.get(kind, ()))
    for candidate in (columns, older):
        if (tuple(found) == candidate) if ordered else (sorted(found) == sorted(candidate)):
            return candidate
    return None


def _with_later_columns(kind: str, row: dict[str, Any]) -> dict[str, Any]:
    for column in LATER_COLUMNS.get(kind, ()):
        row.setdefault(column, None)
    return row


def manifest_message(manifest: dict[str, Any]) -> bytes:
    """The bytes the manifest signature signs: the canonical manifest, its
    signature block without the signature value (so the public key is signed too)."""
    signature = {k: v for k, v in (manifest.get("signature") or {}).items() if k != "value"}
    return canonical_json(manifest | {"signature": signature})


def file_name(kind: str, file_format: str) -> str:
    return f"{kind}.{file_format}"


def encode_rows(kind: str, rows: Sequence[dict[str, Any]], file_format: str) -> bytes:
    """The bytes of one export file (the exporter writes exactly these)."""
    columns = COLUMNS[kind]
    if file_format == "jsonl":
        return b"".join(canonical_json({c: row[c] for c in columns}) + b"\n" for row in rows)
    lines = [",".join(columns)]
    for row in rows:
        cells = []
        for column in columns:
            value = row[column]
            text = "" if value is None else str(value)
            if column in JSON_COLUMNS:
                text = canonical_json(value).decode()
            cells.append(_csv_cell(text))
        lines.append(",".join(cells))
    return ("\r\n".join(lines) + "\r\n").encode()


def _csv_cell(text: str) -> str:
    if any(ch in text for ch in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def decode_rows(kind: str, raw: bytes, file_format: str) -> list[dict[str, Any]]:
    """Parse one export file back into rows (``ValueError`` naming the line if malformed)."""
    columns = COLUMNS[kind]
    rows: list[dict[str, Any]] = []
    if file_format == "jsonl":
        for number, line in enumerate(raw.decode().splitlines(), 1):
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{kind} line {number}: not JSON ({exc})") from None
            if not isinstance(row, dict) or _columns_of(kind, list(row), ordered=False) is None:
                raise ValueError(f"{kind} line {number}: expected the columns {', '.join(columns)}")
            rows.append(_with_later_columns(kind, row))
        return rows
    reader = csv.reader(raw.decode().splitlines())
    header = next(reader, None)
    found = _columns_of(kind, header or (), ordered=True)
    if found is None:
        raise ValueError(f"{kind}: the CSV header is not {','.join(columns)}")
    columns = found
    for number, cells in enumerate(reader, 2):
        if len(cells) != len(columns):
            raise ValueError(f"{kind} line {number}: {len(cells)} cells, expected {len(columns)}")
        row = {}
        for column, cell in zip(columns, cells, strict=True):
            value: Any = cell
            try:
                if column in JSON_COLUMNS:
                    value = json.loads(cell)
                elif column in INT_COLUMNS:
                    value = int(cell) if cell != "" else None
                elif cell == "" and column == "hold_id":
                    value = None
            except ValueError:
                raise ValueError(f"{kind} line {number}: bad {column} {cell!r}") from None
            row[column] = value
        rows.append(_with_later_columns(kind, row))
    return rows


def entry_totals(entries: Sequence[dict[str, Any]], in_period: set[int]) -> dict[str, dict[str, Any]]:
    """Per currency: count and sum of the entries caused by events of the period, and the sum per kind."""
    totals: dict[str, dict[str, Any]] = {}
    for entry in entries:
        if entry["event_position"] not in in_period:
            continue
        cur = totals.setdefault(entry["currency"], {"entries": 0, "amount": 0, "by_kind": {}})
        cur["entries"] += 1
        cur["amount"] += entry["amount"]
        cur["by_kind"][entry["kind"]] = cur["by_kind"].get(entry["kind"], 0) + entry["amount"]
    return totals


@dataclass
class Report:
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def problem(self, text: str) -> None:
        self.problems.append(text)


def _load(directory: Path, report: Report) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]], dict[str, bytes]]:
    manifest_path = directory / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_bytes())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"manifest.json: cannot be read ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != EXPORT_FORMAT:
        raise ValueError(f"manifest.json: not a {EXPORT_FORMAT} manifest")
    file_format = manifest.get("file_format")
    if file_format not in ("jsonl", "csv"):
        raise ValueError(f"manifest.json: unknown file_format {file_format!r}")
    rows: dict[str, list[dict[str, Any]]] = {}
    raw: dict[str, bytes] = {}
    for kind in FILES:
        path = directory / file_name(kind, file_format)
        try:
            raw[kind] = path.read_bytes()
        except OSError:
            raise ValueError(f"{path.name}: missing") from None
        rows[kind] = decode_rows(kind, raw[kind], file_format)
    return manifest, rows, raw


def _check_events(events: list[dict[str, Any]], report: Report, *, complete_streams: bool) -> None:
    previous_key: tuple[int, int] | None = None
    heads: dict[str, tuple[int, str]] = {}
    for line, event in enumerate(events, 1):
        key = (event["txid"], event["position"])
        if previous_key is not None and key <= previous_key:
            report.problem(f"events line {line}: position {event['position']} is out of (txid, position) order")
        previous_key = key
        try:
            body = canonical_json(
                event_body(
                    stream_id=event["stream_id"], version=event["version"], type=event["type"],
                    schema_version=event["schema_version"], data=event["data"], metadata=event["metadata"],
                    recorded_at=event["recorded_at"],
                )
            )  # fmt: skip
        except NotCanonical as exc:
            report.problem(f"event {event['position']}: not canonical ({exc})")
            continue
        if chain_hash(event["prev_hash"], body) != event["hash"]:
            report.problem(f"event {event['position']}: hash does not match its content (altered event)")
    # Chains are checked in stream order, whatever the file order.
    for event in sorted(events, key=lambda e: (e["stream_id"], e["version"])):
        stream, version = event["stream_id"], event["version"]
        head = heads.get(stream)
        if head is None:
            if version == 1 and event["prev_hash"] != GENESIS_HASH:
                report.problem(f"event {event['position']}: first event of {stream} does not start the chain")
        elif version == head[0]:
            report.problem(f"event {event['position']}: {stream} version {version} appears twice")
        elif version == head[0] + 1:
            if event["prev_hash"] != head[1]:
                report.problem(f"event {event['position']}: {stream}@{version} does not link to version {head[0]}")
        elif complete_streams:
            report.problem(f"stream {stream}: versions {head[0] + 1}..{version - 1} are missing")
        heads[stream] = (version, event["hash"])


def _check_seals(
    seals: list[dict[str, Any]],
    leaves: list[dict[str, Any]],
    events: list[dict[str, Any]],
    report: Report,
    *,
    complete: bool,
    seal_key: bytes | None,
) -> None:
    by_seal: dict[int, list[dict[str, Any]]] = {}
    for leaf in leaves:
        by_seal.setdefault(leaf["seal_id"], []).append(leaf)
    previous: dict[str, Any] | None = None
    for seal in seals:
        sid = seal["id"]
        if previous is not None and (
            seal["prev_root"] != previous["merkle_root"] or seal["from_txid"] != previous["to_txid"]
        ):
            report.problem(f"seal {sid}: does not follow seal {previous['id']} (broken seal chain)")
        previous = seal
        own = by_seal.pop(sid, [])
        if [leaf["index"] for leaf in own] != list(range(len(own))):
            report.problem(f"seal {sid}: its leaves are missing or out of order")
        if len(own) != seal["event_count"]:
            report.problem(f"seal {sid}: {len(own)} leaves exported, the seal covers {seal['event_count']}")
        if merkle_root(leaf["hash"] for leaf in own) != seal["merkle_root"]:
            report.problem(f"seal {sid}: Merkle root of its leaves differs from the sealed root")
        if own and max(leaf["position"] for leaf in own) != seal["last_event_id"]:
            report.problem(f"seal {sid}: last event position differs from the sealed one")
        message = seal_message(
            from_txid=seal["from_txid"], to_txid=seal["to_txid"], event_count=seal["event_count"],
            last_event_id=seal["last_event_id"], merkle_root=seal["merkle_root"], prev_root=seal["prev_root"],
            epochs=seal["epochs"],
        )  # fmt: skip
        if seal_key is not None and not hmac.compare_digest(
            hmac.new(seal_key, message, hashlib.sha256).hexdigest(), seal["signature"]
        ):
            report.problem(f"seal {sid}: HMAC signature is invalid for the given seal key")
    for sid in by_seal:
        report.problem(f"seal_leaves: leaves of seal {sid}, which is not in seals")
    leaf_at = {(leaf["seal_id"], leaf["position"]): leaf["hash"] for leaf in leaves}
    exported = {event["position"] for event in events}
    starts = [s["from_txid"] for s in seals]  # ascending: the seal chain was checked above
    for event in events:
        index = bisect.bisect_right(starts, event["txid"]) - 1
        covering = seals[index] if index >= 0 and event["txid"] < seals[index]["to_txid"] else None
        if covering is None:
            report.problem(f"event {event['position']}: no exported seal covers its txid {event['txid']}")
        elif leaf_at.get((covering["id"], event["position"])) != event["hash"]:
            report.problem(f"event {event['position']}: its hash is not the one seal {covering['id']} sealed")
    if complete:
        for leaf in leaves:
            if leaf["position"] not in exported:
                report.problem(
                    f"event {leaf['position']}: sealed by seal {leaf['seal_id']} but missing from the export"
                )


def _check_manifest(
    manifest: dict[str, Any],
    rows: dict[str, list[dict[str, Any]]],
    raw: dict[str, bytes],
    report: Report,
    public_key: str | None,
) -> None:
    file_format = manifest["file_format"]
    files = manifest.get("files", {})
    for kind in FILES:
        name = file_name(kind, file_format)
        entry = files.get(name) or {}
        if hashlib.sha256(raw[kind]).hexdigest() != entry.get("sha256"):
            report.problem(f"{name}: SHA-256 differs from the manifest (file altered)")
        if len(rows[kind]) != entry.get("rows"):
            report.problem(f"{name}: {len(rows[kind])} rows, the manifest says {entry.get('rows')}")
    period = manifest.get("period", {})
    in_period = {
        e["position"] for e in rows["events"] if period.get("from", "") <= e["recorded_at"] < period.get("to", "")
    }
    if manifest.get("counts", {}).get("events_in_period") != len(in_period):
        report.problem("manifest: events_in_period differs from the events of the period in events file")
    if manifest.get("totals") != entry_totals(rows["entries"], in_period):
        report.problem("manifest: totals differ from the entries in the export")
    if [s["id"] for s in rows["seals"]] != [s.get("id") for s in manifest.get("seals", [])] or [
        s["merkle_root"] for s in rows["seals"]
    ] != [s.get("merkle_root") for s in manifest.get("seals", [])]:
        report.problem("manifest: the seals it relies on differ from seals file")
    signature = manifest.get("signature") or {}
    if signature.get("algorithm") != SIGNATURE_ALGORITHM:
        report.problem(f"manifest: signature algorithm is not {SIGNATURE_ALGORITHM}")
        return
    try:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    except ImportError:
        report.problem("manifest: the signature cannot be checked without the 'cryptography' package")
        return
    key_hex = signature.get("public_key", "")
    if public_key is not None and public_key.lower() != key_hex.lower():
        report.problem("manifest: signed with a key other than the pinned public key")
        return
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(key_hex)).verify(
            bytes.fromhex(signature.get("value", "")), manifest_message(manifest)
        )
    except (InvalidSignature, ValueError):
        report.problem("manifest: signature is invalid (manifest altered or signed with another key)")
        return
    if public_key is None:
        report.notes.append(f"manifest signature valid for public key {key_hex} (not pinned: pass --public-key)")


def verify_export(directory: Path, *, public_key: str | None = None, seal_key: bytes | None = None) -> Report:
    """Every check of docs/compliance.md on the export in ``directory``."""
    report = Report()
    try:
        manifest, rows, raw = _load(directory, report)
    except ValueError as exc:
        report.problem(str(exc))
        return report
    filtered = bool(manifest.get("filtered"))
    _check_events(rows["events"], report, complete_streams=not filtered)
    _check_seals(rows["seals"], rows["seal_leaves"], rows["events"], report, complete=not filtered, seal_key=seal_key)
    _check_manifest(manifest, rows, raw, report, public_key)
    if seal_key is None:
        report.notes.append("seal HMACs not checked (no --seal-key); Merkle roots and the seal chain were")
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Verify a casino audit export offline.")
    parser.add_argument("directory", type=Path)
    parser.add_argument("--public-key", help="the operator's Ed25519 export public key (hex) to pin")
    parser.add_argument("--seal-key", help="the ledger seal HMAC key, to check the seals' signatures too")
    args = parser.parse_args(argv)
    report = verify_export(
        args.directory, public_key=args.public_key, seal_key=args.seal_key.encode() if args.seal_key else None
    )
    for line in _lines(report):
        print(line)
    return 1 if report.problems else 0


def _lines(report: Report) -> Iterator[str]:
    if report.problems:
        yield f"FAILED: {report.problems[0]}"
        for problem in report.problems[1:]:
            yield f"  also: {problem}"
    else:
        yield "export verified"
    for note in report.notes:
        yield f"note: {note}"


if __name__ == "__main__":
    sys.exit(main())
