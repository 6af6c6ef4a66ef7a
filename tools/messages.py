"""``make messages``: the player-facing strings into each language's ``.po``, and every ``.po`` compiled.

Extracts every ``_()`` / ``gettext_lazy()`` string of ``SOURCES`` (the player catalog of
``casino/i18n.py`` and the settings' labels), adds the new ones to
``casino/locale/<lang>/LC_MESSAGES/django.po`` with an empty ``msgstr``, drops the ones no
source has any more, and writes each ``.po``'s compiled ``.mo`` beside it (docs/players.md,
"Translations"). Babel does it in pure Python: no GNU gettext needed. The output depends
only on the sources and the ``.po`` (sorted, no source locations, the header's dates kept),
so two runs, or two branches, write the same lines.

Run from the repository root: ``python tools/messages.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_file
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("casino/i18n.py", "casino/models.py", "casino/players.py")
LOCALE_DIR = ROOT / "casino" / "locale"
LANGUAGES = ("fr",)  # English is the source language
KEYWORDS: dict[str, Any] = {"_": None, "gettext_lazy": None, "ngettext_lazy": (1, 2)}


def po_path(language: str) -> Path:
    return LOCALE_DIR / language / "LC_MESSAGES" / "django.po"


def extracted(*, like: Catalog) -> Catalog:
    """The sources' strings, as a template dated as ``like`` (so the header does not change)."""
    template = Catalog(charset="utf-8", creation_date=like.creation_date)
    for source in SOURCES:
        for _line, message, _comments, context in extract_from_file("python", ROOT / source, keywords=KEYWORDS):
            template.add(message, context=context)
    return template


def update(language: str) -> tuple[int, int]:
    """Merge the sources into ``language``'s ``.po`` and compile it; (translated, total) messages."""
    path = po_path(language)
    if path.exists():
        with path.open("rb") as po:
            catalog = read_po(po, locale=language)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        catalog = Catalog(locale=language, charset="utf-8")
    revision = catalog.revision_date
    catalog.update(extracted(like=catalog), no_fuzzy_matching=True)
    catalog.revision_date = revision
    catalog.obsolete.clear()
    with path.open("wb") as po:
        write_po(po, catalog, width=120, no_location=True, sort_output=True, ignore_obsolete=True)
    with path.with_suffix(".mo").open("wb") as mo:
        write_mo(mo, catalog)  # fuzzy translations are left out: the English is used
    messages = [message for message in catalog if message.id]
    return sum(1 for m in messages if translated(m.string) and not m.fuzzy), len(messages)


def translated(string: str | tuple[str, ...] | list[str] | None) -> bool:
    """Every form of a message translated (a plural message has one per plural form)."""
    return all(string) if isinstance(string, tuple | list) else bool(string)


def main() -> int:
    for language in LANGUAGES:
        translated, total = update(language)
        print(f"{po_path(language).relative_to(ROOT)}: {translated} of {total} translated")
        if translated < total:
            print(f"  translate the empty msgstr in it, then run `make messages` again to compile ({language})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
