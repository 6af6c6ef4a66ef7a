"""The help pages' language: which one a request gets, and the page translated into it.

``?lang=`` names it (``en`` or ``fr``; anything else is refused with
``unsupported_language``); without it the request's active language decides
(``django.utils.translation.get_language()``: what ``Accept-Language`` or the
player's profile chose once the locale middleware runs), falling back to English.
``render`` turns a page built by ``games.help.content`` into plain JSON in that
language: every ``Msg`` through gettext (``games/locale/<lang>/LC_MESSAGES/django.po``).
"""

from __future__ import annotations

from typing import Any

from django.utils import translation
from django.utils.formats import number_format
from django.utils.translation import gettext

from casino.errors import DomainError
from games.help.content.text import Msg, Percent

#: The languages a help page is written in (RULES.md, "Languages"), the default first.
LANGUAGES: tuple[str, ...] = ("en", "fr")


class UnsupportedLanguage(DomainError, code="unsupported_language", http_status=400):
    """The help pages are in English (``en``) and French (``fr``) only."""


def help_language(requested: str | None) -> str:
    """``requested`` (``?lang=``) if it is a help language, else ``UnsupportedLanguage``;
    ``None``: the active language's base (``fr-ca`` -> ``fr``) if it is one, else English."""
    if requested is not None:
        if requested not in LANGUAGES:
            raise UnsupportedLanguage(language=requested, supported=list(LANGUAGES))
        return requested
    active = (translation.get_language() or LANGUAGES[0]).split("-")[0].lower()
    return active if active in LANGUAGES else LANGUAGES[0]


def render(page: Any, language: str) -> Any:
    """``page`` with every ``Msg`` translated into ``language`` and filled in."""
    with translation.override(language):
        return _render(page)


def _render(node: Any) -> Any:
    if isinstance(node, Msg):
        text = gettext(node.msgid)
        return text % {name: _param(value) for name, value in node.params.items()} if node.params else text
    if isinstance(node, dict):
        return {key: _render(value) for key, value in node.items()}
    if isinstance(node, list | tuple):
        return [_render(item) for item in node]
    if isinstance(node, Percent):
        return _param(node)
    return node


def _param(value: Any) -> Any:
    if isinstance(value, Percent):
        number = number_format(round(float(value.value) * 100, value.places), decimal_pos=value.places)
        return gettext("%(number)s%%") % {"number": number}
    if isinstance(value, list | tuple):
        return ", ".join(str(_render(item)) for item in value)
    return _render(value)
