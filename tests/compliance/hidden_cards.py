"""Scanning what staff are shown for card codes (issue 33, "no card readable
before it is shown").

A card code is two characters ("Ah", "Td"): searched for bare, it would be
found in base64 ciphertext, in hashes' neighbours or in English ("As"). Every
surface that shows a card shows it as a JSON string (the admin's pretty JSON,
the timelines, game recall, the export files; HTML-escaped on the admin pages,
doubled quotes in CSV), or, in the shoe notation, as a quoted run of codes
separated by spaces ("Ah 4h"). So a card counts as shown when, once the HTML
entities are unescaped, it stands between quotes alone or in such a run: strict
(any card that any surface renders is found, tests/compliance checks that the
same scan finds the dealer's cards once the round is over) and sound (a quoted
string that is exactly a card code is a card)."""

from __future__ import annotations

import html
import io
import re
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from games.tables.dealkeys import deal_key
from games.tables.fairness import SEALED_FIELD, is_plain, open_committed_deck
from ledger.services import read_stream

RANKS = "23456789TJQKA"
SUITS = "shdc"
ALL_CARDS = frozenset(r + s for r in RANKS for s in SUITS)
_CODE = r"[2-9TJQKA][shdc]"
# A quoted card, or a quoted run of cards separated by single spaces.
_QUOTED_CARDS = re.compile(rf"""(?<=["'])({_CODE}(?: {_CODE})*)(?=["'])""")


def cards_in(text: str) -> set[str]:
    """The card codes ``text`` shows (see the module's docstring)."""
    found: set[str] = set()
    for run in _QUOTED_CARDS.findall(html.unescape(text)):
        found.update(run.split(" "))
    return found


def leaked(text: str, hidden: Iterable[str]) -> set[str]:
    """The cards of ``hidden`` that ``text`` shows."""
    return cards_in(text) & set(hidden)


def zip_texts(content: bytes) -> dict[str, str]:
    """Each file of a zip archive, as text."""
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        return {name: archive.read(name).decode() for name in archive.namelist()}


def dir_texts(directory: Path) -> dict[str, str]:
    return {path.name: path.read_text() for path in sorted(directory.iterdir())}


def opened_deck(*, stream_id: str, shuffled_type: str, deal_id: str) -> list[str]:
    """The deal's whole deck, top first, opened the way the dealer opens it: the
    shuffle event's sealed deck with the deal's key (a legacy ``plain`` deck needs none)."""
    shuffled: Any = next(e for e in read_stream(stream_id=stream_id) if e.type == shuffled_type)
    sealed = shuffled.data[SEALED_FIELD]
    key = None if is_plain(sealed) else deal_key(deal_id=deal_id)
    opened = open_committed_deck(commitment=shuffled.data["commitment"], sealed_deck=sealed, key=key, deal_id=deal_id)
    assert sorted(opened.deck) == sorted(ALL_CARDS)
    return list(opened.deck)
