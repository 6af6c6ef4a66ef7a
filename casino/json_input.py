"""JSON from outside, parsed once at the edge and refused with a specific code
(issue 35: no input answers 500). Pure Python: the REST parser
(``casino.api.JSONBodyParser``) and the websocket frame decoder
(``games.tables.realtime.JSONFrames``) both call ``loads``.

A document is refused when:

- it is not one JSON text, or it holds ``NaN``/``Infinity`` or a number no
  float can hold (``1e999``), or an integer of more digits than Python reads
  (``invalid_json``);
- it nests arrays and objects deeper than ``max_depth`` (``too_deep``): the
  standard library's parser raises ``RecursionError`` near a thousand levels,
  and everything downstream (canonical hashing, serializers, the renderer that
  echoes a value back) recurses too;
- a string in it (a key or a value) holds a lone surrogate (``"\\udc80"``, which
  no UTF-8 encoder takes, so rendering the error that echoes it failed) or a NUL
  (which PostgreSQL text refuses) (``invalid_text``); bytes that are not UTF-8
  are ``invalid_text`` too.
"""

from __future__ import annotations

import json
import math
from typing import Any, ClassVar

#: The nesting depth the API accepts: its deepest documented body nests three levels.
DEFAULT_MAX_DEPTH = 32


class InputRefused(ValueError):
    """The input is refused; ``code`` names why (a stable error code)."""

    code: ClassVar[str] = "invalid_json"
    message: ClassVar[str] = "The body is not one JSON document."

    def __init__(self, detail: str = "") -> None:
        super().__init__(detail or self.message)
        self.detail = detail


class InvalidJSON(InputRefused):
    code = "invalid_json"
    message = "The body is not one JSON document (numbers must be finite)."


class TooDeep(InputRefused):
    code = "too_deep"
    message = "The JSON nests arrays and objects too deep."


class InvalidText(InputRefused):
    code = "invalid_text"
    message = "A string holds a character that is not text (a lone surrogate or NUL), or the bytes are not UTF-8."


def _refuse_constant(name: str) -> Any:
    raise InvalidJSON(f"{name} is not a JSON number")


def loads(data: str | bytes, *, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """The JSON value ``data`` holds, checked as the module docstring says;
    raises an ``InputRefused`` subclass (never ``RecursionError``)."""
    if isinstance(data, bytes | bytearray):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidText("the bytes are not UTF-8") from None
    try:
        value = json.loads(data, parse_constant=_refuse_constant)
    except RecursionError:
        raise TooDeep() from None
    except InputRefused:
        raise
    except ValueError as exc:  # JSONDecodeError, and the integer digit limit
        raise InvalidJSON(str(exc)) from None
    check(value, max_depth=max_depth)
    return value


def check(value: Any, *, max_depth: int = DEFAULT_MAX_DEPTH) -> None:
    """Refuse a parsed value deeper than ``max_depth``, with a non-finite number or
    with a string that is not text. Iterative, so any depth is measured safely."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            _check_text(item)
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise InvalidJSON("a number beyond what a float holds")
        elif isinstance(item, dict | list):
            if depth > max_depth:
                raise TooDeep(f"more than {max_depth} levels")
            if isinstance(item, dict):
                for key, member in item.items():
                    _check_text(key)
                    stack.append((member, depth + 1))
            else:
                stack.extend((member, depth + 1) for member in item)


def is_text(text: str) -> bool:
    """Whether ``text`` is text the API takes (no lone surrogate, no NUL)."""
    try:
        _check_text(text)
    except InvalidText:
        return False
    return True


def _check_text(text: str) -> None:
    if "\x00" in text:
        raise InvalidText("a string holds NUL")
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidText("a string holds a lone surrogate") from None
