"""Helpers of the admin pages that tell a round or a hand (the rounds' and the
poker hands' pages): cards drawn as cards (rank and suit symbol, hearts and
diamonds red, clubs and spades black; a face-down card, ``None``, as a card
back; their look: the template ``admin/casino/cards_style.html``), an event's
time as people read it, and an event's data as shown behind its toggle."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

SUITS = {"h": ("\u2665", "red"), "d": ("\u2666", "red"), "c": ("\u2663", "black"), "s": ("\u2660", "black")}
_CARD = re.compile(r"[2-9TJQKA][hdcs]")
RAW_LIMIT = 20_000  # characters of an event's data shown behind its toggle


def card_html(code: str | None) -> SafeString:
    """One card drawn as a card: rank and suit symbol (hearts and diamonds red,
    clubs and spades black); ``None`` (a face-down card) as a card back. The
    card's code is in ``data-card`` (quoted), so scans for card codes find every
    card drawn; anything that is not a card code is shown as escaped text."""
    if code is None:
        return mark_safe('<span class="card back" title="face down"></span>')  # a constant
    if not isinstance(code, str) or not _CARD.fullmatch(code):
        return format_html('<span class="card unknown">{}</span>', str(code))
    symbol, colour = SUITS[code[1]]
    rank = "10" if code[0] == "T" else code[0]
    return format_html('<span class="card {}" data-card="{}">{}{}</span>', colour, code, rank, symbol)


def cards_html(codes: Sequence[str | None]) -> SafeString:
    return format_html('<span class="cards">{}</span>', format_html_join("", "{}", ((card_html(c),) for c in codes)))


def clock(moment: Any) -> str:
    """``2026-11-22T13:45:16+00:00`` -> ``13:45:16`` (the events record UTC); anything else as it is."""
    text = str(moment or "")
    return text[11:19] if len(text) >= 19 and text[10] == "T" else text


def raw_json(data: Mapping[str, Any] | str) -> str:
    """An event's data (as staff may see it) for its toggle: indented JSON, cut at ``RAW_LIMIT`` characters."""
    text = json.dumps(data, sort_keys=True, indent=1, default=str)
    return text if len(text) <= RAW_LIMIT else text[:RAW_LIMIT] + " …"
