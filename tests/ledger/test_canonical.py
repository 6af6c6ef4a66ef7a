"""Canonical JSON (RFC 8785 for integer-only data), the chain hash, Merkle roots."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.canonical import (
    GENESIS_HASH,
    NotCanonical,
    body_from_parts,
    canonical_json,
    canonical_text,
    chain_hash,
    event_body,
    merkle_root,
)


def test_canonical_json_sorts_keys_without_whitespace_utf8():
    # RFC 8785 section 3.2.3: keys sorted, no whitespace; non-ASCII kept as UTF-8.
    value = {"b": [1, True, None], "a": {"z": "é€", "y": -5}, "": 0}
    assert canonical_json(value) == '{"":0,"a":{"y":-5,"z":"é€"},"b":[1,true,null]}'.encode()


def test_canonical_json_escapes_like_jcs():
    assert canonical_json({"k": 'q"\\\n\u0001'}) == b'{"k":"q\\"\\\\\\n\\u0001"}'


@pytest.mark.parametrize(
    "bad",
    [
        {"x": 1.5},
        {"x": [1, {"y": 2e3}]},
        {"x": float("nan")},
        {1: "a", "b": 2},
        {"x": object()},
        1.5,
        [0.5],
        {"a": "3e4f-9.1", "b": [2, -0.0]},
        {"t": "12:30:15.5", "n": 1e16},
        {"k": [1, 2, 3.25]},
        {"k": "a\x00b"},  # NUL: no PostgreSQL text type can hold it
        {"a\x00": 1},
        {"k": ["\\\x00"]},  # a backslash, then NUL
    ],
)
def test_values_without_canonical_form_are_refused(bad):
    with pytest.raises(NotCanonical):
        canonical_json(bad)


finite_floats = st.floats(allow_nan=False, allow_infinity=False)
no_nul = st.characters(codec="utf-8", exclude_characters="\x00")  # NUL is refused (above)
json_leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.text(no_nul, max_size=30))
json_values = st.recursive(
    json_leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(no_nul, max_size=8), inner, max_size=4),
)


@settings(max_examples=400, deadline=None)
@given(value=json_values, number=finite_floats, where=st.integers(0, 2))
def test_a_float_anywhere_is_refused(value, number, where):
    # The quick float check must never let one through, wherever it sits and
    # whatever strings (look-alikes included) surround it.
    placed = [number, value] if where == 0 else {"a": value, "b": number} if where == 1 else [value, [{"x": number}]]
    with pytest.raises(NotCanonical):
        canonical_json(placed)


@settings(max_examples=200, deadline=None)
@given(value=json_values)
def test_integer_only_json_round_trips(value):
    assert json.loads(canonical_json(value)) == value


@pytest.mark.parametrize("text", ["\\u0000", "\\\\u0000", "a\\u0000b", "\u0001\\u0000"])
def test_text_that_only_spells_an_escaped_nul_is_text(text):
    # A backslash followed by "u0000" is six ordinary characters, not NUL.
    assert json.loads(canonical_json({"k": text})) == {"k": text}


def test_strings_that_look_like_floats_are_text():
    value = {"id": "3e4f-4e2a-9.5e", "at": "2026-11-23T17:13:13.123456+00:00", "n": [1, -2], "s": "1.5"}
    assert json.loads(canonical_json(value)) == value


def test_chain_hash_is_sha256_of_previous_hash_bytes_then_body():
    body = b'{"a":1}'
    assert chain_hash(GENESIS_HASH, body) == hashlib.sha256(bytes(32) + body).hexdigest()


def test_merkle_root_rfc6962_shape():
    a, b, c = (hashlib.sha256(x).hexdigest() for x in (b"a", b"b", b"c"))

    def leaf(h):
        return hashlib.sha256(b"\x00" + bytes.fromhex(h)).digest()

    def node(left, right):
        return hashlib.sha256(b"\x01" + left + right).digest()

    assert merkle_root([a]) == leaf(a).hex()
    assert merkle_root([a, b]) == node(leaf(a), leaf(b)).hex()
    assert merkle_root([a, b, c]) == node(node(leaf(a), leaf(b)), leaf(c)).hex()
    assert merkle_root([b, a]) != merkle_root([a, b])


def test_the_assembled_event_body_equals_the_canonical_encoding_of_the_envelope():
    data, metadata = {"z": [1, 'é"q'], "a": None}, {"actor": "dealer\\1", "causation_id": "7"}
    stream, kind, at = 'round-"7"-é', "round.dealt\t", "2026-11-22T03:00:00.000001Z"
    assembled = body_from_parts(
        stream_json=canonical_text(stream),
        version=12,
        type_json=canonical_text(kind),
        schema_version=2,
        data_json=canonical_text(data),
        metadata_json=canonical_text(metadata),
        recorded_json=canonical_text(at),
    )
    envelope = event_body(
        stream_id=stream, version=12, type=kind, schema_version=2, data=data, metadata=metadata, recorded_at=at
    )
    assert assembled == canonical_json(envelope)


@settings(max_examples=300, deadline=None)
@given(moment=st.datetimes(timezones=st.timezones()))
def test_the_hashed_timestamp_is_utc_with_microseconds_and_z(moment):
    from datetime import UTC

    from ledger.services.events import timestamp

    assert timestamp(moment) == moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
