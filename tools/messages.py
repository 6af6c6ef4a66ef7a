"""``make messages``: the player-facing strings into each language's ``.po``, and every ``.po`` compiled.

Two catalogs (``CATALOGS``): ``casino/locale`` (the refusal messages of ``casino/i18n.py`` and
the settings' labels) and ``games/locale`` (the help pages' sentences, ``games/help/``). For
each, extracts every ``_()`` / ``gettext()`` / ``gettext_lazy()`` string of its sources, adds
the new ones to ``<locale>/<lang>/LC_MESSAGES/django.po`` with an empty ``msgstr``, drops the
ones no source has any more, and writes each ``.po``'s compiled ``.mo`` beside it
(docs/players.md, "Translations"; docs/help.md). Babel does it in pure Python: no GNU gettext needed. The output depends
only on the sources and the ``.po`` (sorted, no source locations, the header's dates kept),
so two runs, or two branches, write the same lines.

Run from the repository root: ``python tools/messages.py``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_file
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class MessageCatalog:
    """A ``locale`` directory and the sources whose strings it translates (globs under the root)."""

    locale: str
    sources: tuple[str, ...]


CATALOGS = (
    MessageCatalog("casino/locale", ("casino/i18n.py", "casino/models.py", "casino/players.py")),
    MessageCatalog("games/locale", ("games/help/**/*.py",)),
)
LANGUAGES = ("fr",)  # English is the source language
KEYWORDS: dict[str, Any] = {"_": None, "gettext": None, "gettext_lazy": None, "ngettext_lazy": (1, 2)}


def po_path(catalog: MessageCatalog, language: str) -> Path:
    return ROOT / catalog.locale / language / "LC_MESSAGES" / "django.po"


def source_files(catalog: MessageCatalog) -> list[Path]:
    return sorted({path for pattern in catalog.sources for path in ROOT.glob(pattern)})


def extracted(sources: MessageCatalog, *, like: Catalog) -> Catalog:
    """The sources' strings, as a template dated as ``like`` (so the header does not change)."""
    template = Catalog(charset="utf-8", creation_date=like.creation_date)
    for source in source_files(sources):
        for _line, message, _comments, context in extract_from_file("python", source, keywords=KEYWORDS):
            template.add(message, context=context)
    return template


def update(sources: MessageCatalog, language: str) -> tuple[int, int]:
    """Merge ``sources`` into ``language``'s ``.po`` and compile it; (translated, total) messages."""
    path = po_path(sources, language)
    if path.exists():
        with path.open("rb") as po:
            catalog = read_po(po, locale=language)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        catalog = Catalog(locale=language, charset="utf-8")
    revision = catalog.revision_date
    catalog.update(extracted(sources, like=catalog), no_fuzzy_matching=True)
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
    for sources in CATALOGS:
        for language in LANGUAGES:
            translated, total = update(sources, language)
            print(f"{po_path(sources, language).relative_to(ROOT)}: {translated} of {total} translated")
            if translated < total:
                print(f"  translate the empty msgstr in it, then run `make messages` again to compile ({language})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
