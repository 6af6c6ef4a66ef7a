"""The hand-made input shapes of issue 35 ("no input answers 500"), shared by the
schemathesis fuzz (``tests/platform/test_schema_fuzz.py``) and the websocket fuzz
(``tests/platform/test_ws_fuzz.py``), and the Hypothesis strategies that put them
into generated messages: deep nesting, lone surrogates, NUL, numbers no float
holds or a bigint column cannot take, ``-0`` and the ``NaN``/``Infinity`` literals.

``RAW_JSON`` holds each shape as the JSON text of one value (they cannot all be
Python values: ``json.dumps`` recurses, and ``1e400`` is ``inf``), with the code
the edge (``casino.json_input``) refuses a document holding it with, or ``None``
when the edge takes it and the field behind it decides (a 400 of its own, or
accepted: ``-0`` is 0). ``splice`` writes a generated JSON value with one shape in
place of one of its members.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

DEEP = "[" * 1_200 + "]" * 1_200  # past the standard library's recursion limit
DEEP_OBJECTS = '{"a":' * 1_100 + "1" + "}" * 1_100
JUST_TOO_DEEP = '{"a":' * 33 + "1" + "}" * 33  # one level past CASINO_JSON_MAX_DEPTH (32)

RAW_JSON: list[tuple[str, str | None]] = [
    (DEEP, "too_deep"),
    (DEEP_OBJECTS, "too_deep"),
    (JUST_TOO_DEEP, "too_deep"),
    ('"\\udc80"', "invalid_text"),
    ('"a\\ud800b"', "invalid_text"),
    ('{"\\udfff": 1}', "invalid_text"),
    ('"x\\u0000"', "invalid_text"),
    ('{"\\u0000": 1}', "invalid_text"),
    ("1e400", "invalid_json"),
    ("-1e400", "invalid_json"),
    ("9" * 5_000, "invalid_json"),  # more digits than Python reads
    ("NaN", "invalid_json"),
    ("Infinity", "invalid_json"),
    ("-Infinity", "invalid_json"),
    ("1" + "0" * 400, None),  # 10**400: Python reads it; no field takes it
    (str(2**63), None),  # one past bigint
    (str(-(2**63) - 1), None),
    ("-0", None),
    ("-0.0", None),
    ("1e-400", None),  # underflows to 0.0
    ("1.5", None),
]

# As the text of a form field, a query parameter or a path segment (no lone
# surrogate: no client encodes one into a URL or a form).
TEXT: list[str] = ["\x00", "a\x00b", "1e400", "1" + "0" * 400, "9" * 5_000, "-0", "NaN", "Infinity", str(2**63)]

_SPOT = "\x01shape\x01"  # a string no generated value holds; replaced by the shape's text


def splice(value: Any, key: str | int | None, raw: str) -> bytes:
    """``value`` as JSON with the member ``key`` (of an object or array) replaced
    by the JSON text ``raw``; the whole document is ``raw`` when ``key`` is
    ``None`` or ``value`` cannot be written as JSON."""
    if key is not None:
        if isinstance(value, dict):
            value = {**value, key: _SPOT}
        elif isinstance(value, list) and isinstance(key, int) and key < len(value):
            value = [*value[:key], _SPOT, *value[key + 1 :]]
        try:
            text = json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            return raw.encode()
        if json.dumps(_SPOT) in text:
            return text.replace(json.dumps(_SPOT), raw, 1).encode()
    return raw.encode()


def raw_json_shape() -> st.SearchStrategy[tuple[str, str | None]]:
    return st.sampled_from(RAW_JSON)


def members(value: Any) -> st.SearchStrategy[str | int | None]:
    """Where a shape goes in ``value``: one of its members, or the whole document."""
    if isinstance(value, dict) and value:
        return st.sampled_from([None, *sorted(value, key=str)])
    if isinstance(value, list) and value:
        return st.sampled_from([None, *range(len(value))])
    return st.just(None)


def text_shape() -> st.SearchStrategy[str]:
    return st.sampled_from(TEXT)
