"""Cards drawn as cards on the admin's pages (the rounds' and the poker hands'
pages): rank and suit symbol, hearts and diamonds red, clubs and spades black;
a face-down card (``None``) as a card back. Their look: the template
``admin/casino/cards_style.html``, included by the pages that draw cards."""

from __future__ import annotations

import re
from collections.abc import Sequence

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

SUITS = {"h": ("\u2665", "red"), "d": ("\u2666", "red"), "c": ("\u2663", "black"), "s": ("\u2660", "black")}
_CARD = re.compile(r"[2-9TJQKA][hdcs]")


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
