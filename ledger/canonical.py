"""Canonical JSON, the per-stream hash chain and Merkle roots (pure Python).

Canonical form: keys sorted, no insignificant whitespace, UTF-8, no floats,
no NUL characters. With integers, strings, booleans, null, arrays and objects
only (floats are refused: money is integer minor units; NUL is refused: no
PostgreSQL text type can hold it) and keys in the Basic Multilingual
Plane, this is byte-for-byte RFC 8785 (JCS), the reference. An export can be
checked with any JCS implementation plus SHA-256.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import json.encoder as json_encoder
import re
from collections.abc import Iterable, Mapping
from typing import Any

GENESIS_HASH = "0" * 64


class NotCanonical(ValueError):
    """The value has no canonical form (a float, a non-string key...)."""


# A float in canonical JSON is a value at the start or right after ":", "[" or "," (no
# whitespace), and its repr is digits then "." or "e". This finds every one;
# a string that merely looks alike (a time "12:30:15.5") costs a parse, while
# the hex of ids and hashes ("…-4e2a-…") no longer does. The start is checked
# apart (``_may_hold_float``): an alternative with "^" makes the regex engine
# try both at every position, four times slower on a bet's texts.
_FLOAT_AFTER_DELIMITER = re.compile(r"[:,\[]-?\d+[.eE]").search


def _may_hold_float(text: str) -> bool:
    return text[:1] in _NUMBER_STARTS or _FLOAT_AFTER_DELIMITER(text) is not None


_NUMBER_STARTS = frozenset("-0123456789")


# A NUL character, as the encoder escapes it: "\u0000" after an even number
# of backslashes (an odd one is an escaped backslash followed by "u0000").
_ESCAPED_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000").search


def _not_json(value: Any) -> Any:
    raise NotCanonical(f"{type(value).__name__} is not JSON")


def _no_float(text: str) -> Any:
    raise NotCanonical(f"floats are not allowed (use integers): {text}")


# One encoder, reused: ``json.dumps`` with options builds a new one per call.
_ENCODE = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_not_json
).encode
# The same encoder's C core, called directly: ``JSONEncoder.encode`` rebuilds
# it on every call, which costs as much as encoding a small event's data.
# (No cycle check: a cycle is a ``RecursionError``, refused below.)
_C_MAKE_ENCODER = getattr(json_encoder, "c_make_encoder", None)
_C_ENCODE = (
    _C_MAKE_ENCODER(None, _not_json, json_encoder.encode_basestring, None, ":", ",", True, False, False)
    if _C_MAKE_ENCODER is not None
    else None
)


def canonical_text(value: Any) -> str:
    """The canonical encoding as text; ``NotCanonical`` if there is none.

    Both passes run in the C JSON codec: encode with sorted keys, then, only
    when the text could hold a float, parse it once more to refuse any. Object keys become strings, as JSON
    requires (and as they read back from the database).
    """
    try:
        text = "".join(_C_ENCODE(value, 0)) if _C_ENCODE is not None and type(value) is dict else _ENCODE(value)
    except (TypeError, ValueError, RecursionError) as exc:  # mixed key types, NaN, infinity, a cycle
        raise NotCanonical(str(exc)) from exc
    if _may_hold_float(text):
        json.loads(text, parse_float=_no_float)
    if "\\u0000" in text and _ESCAPED_NUL(text) is not None:
        # PostgreSQL's text types (and ``jsonb``) cannot hold NUL; ``json``
        # would store the escape, which no text column could then take.
        raise NotCanonical("NUL characters are not allowed in text")
    return text


def canonical_json(value: Any) -> bytes:
    """The canonical UTF-8 encoding of a JSON value; ``NotCanonical`` otherwise."""
    return canonical_text(value).encode()


def body_from_parts(
    *,
    stream_json: str,
    version: int,
    type_json: str,
    schema_version: int,
    data_json: str,
    metadata_json: str,
    recorded_json: str,
) -> bytes:
    """``canonical_json(event_body(...))`` assembled from parts already in
    canonical text (keys in sorted order), so each part is encoded once."""
    return (
        f'{{"data":{data_json},"metadata":{metadata_json},"recorded_at":{recorded_json},'
        f'"schema_version":{schema_version},"stream_id":{stream_json},"type":{type_json},"version":{version}}}'
    ).encode()


def event_body(
    *,
    stream_id: str,
    version: int,
    type: str,
    schema_version: int,
    data: Mapping[str, Any],
    metadata: Mapping[str, Any],
    recorded_at: str,
) -> dict[str, Any]:
    """The hashed part of an event envelope (everything but position and hashes)."""
    return {
        "stream_id": stream_id,
        "version": version,
        "type": type,
        "schema_version": schema_version,
        "data": data,
        "metadata": metadata,
        "recorded_at": recorded_at,
    }


def chain_hash(prev_hash: str, canonical_body: bytes) -> str:
    """SHA-256 over the previous hash's 32 bytes followed by the canonical body (hex)."""
    return hashlib.sha256(bytes.fromhex(prev_hash) + canonical_body).hexdigest()


def merkle_root(leaves: Iterable[str]) -> str:
    """Merkle root (hex) over hex SHA-256 leaves, RFC 6962 style domain separation.

    Leaf node = SHA-256(0x00 || leaf), inner node = SHA-256(0x01 || left || right);
    an odd node is promoted unchanged. The empty tree's root is SHA-256 of nothing.
    """
    level = [hashlib.sha256(b"\x00" + bytes.fromhex(leaf)).digest() for leaf in leaves]
    if not level:
        return hashlib.sha256(b"").hexdigest()
    while len(level) > 1:
        nxt = [hashlib.sha256(b"\x01" + level[i] + level[i + 1]).digest() for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0].hex()


SEAL_ALGORITHM = "HMAC-SHA256"


def seal_message(
    *,
    from_txid: int,
    to_txid: int,
    event_count: int,
    last_event_id: int | None,
    merkle_root: str,
    prev_root: str,
    epochs: Mapping[str, int] | None = None,
) -> bytes:
    """The bytes a seal's HMAC signs (shared by the ledger and the offline export verifier).
    ``epochs``: feature -> first event id of the ledger's integrity epochs when the
    seal was taken; ``None`` for a seal from before seals signed them (its message
    has no ``epochs`` key, so it verifies as it was signed)."""
    message: dict[str, Any] = {
        "algorithm": SEAL_ALGORITHM,
        "from_txid": from_txid,
        "to_txid": to_txid,
        "event_count": event_count,
        "last_event_id": last_event_id,
        "merkle_root": merkle_root,
        "prev_root": prev_root,
    }
    if epochs is not None:
        message["epochs"] = dict(epochs)
    return canonical_json(message)


def event_mac(key: bytes, event_hash: str) -> str:
    """An event's MAC: HMAC-SHA256 under the application's event key over the
    32 bytes of its chain hash (hex). The hash covers the event's body and its
    predecessor, so the MAC binds both."""
    return hmac.digest(key, bytes.fromhex(event_hash), "sha256").hex()
