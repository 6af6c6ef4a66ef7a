"""Translatable text as data (pure).

A ``Msg`` is an English msgid with ``%(name)s`` placeholders and its parameters,
written ``_("...", name=value)``: ``_`` is one of the names ``makemessages``
(xgettext) extracts, so every msgid lands in ``games/locale/<lang>/LC_MESSAGES/django.po``;
here ``_`` only records the msgid, it translates nothing;
``games.help.i18n`` translates them in the request's language. Parameters may be
plain values, ``Percent`` (a return figure, formatted per language) or ``Msg``
(translated first: a hand or wager name inside a sentence).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any


@dataclass(frozen=True)
class Percent:
    """A return figure: ``value`` as a share (0.9782...), shown as a percentage with ``places`` decimals."""

    value: Fraction
    places: int = 2


@dataclass(frozen=True)
class Msg:
    """A translatable sentence: ``msgid`` (English) and its named parameters."""

    msgid: str
    params: dict[str, Any] = field(default_factory=dict)


def _(message: str, /, **params: Any) -> Msg:
    """``Msg(message, params)``: call it with a string literal so the extractor finds the msgid."""
    return Msg(message, params)


def msgids(node: Any) -> set[str]:
    """Every msgid in a page (nested dicts, lists and ``Msg`` parameters): what must be translated."""
    found: set[str] = set()
    if isinstance(node, Msg):
        found.add(node.msgid)
        for value in node.params.values():
            found |= msgids(value)
    elif isinstance(node, dict):
        for value in node.values():
            found |= msgids(value)
    elif isinstance(node, list | tuple):
        for item in node:
            found |= msgids(item)
    return found
