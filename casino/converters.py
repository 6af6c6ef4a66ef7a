"""Route converters shared by the apps' URLs.

``<text:name>``: a path segment as Django's ``<str:name>`` takes it, except one
holding NUL, which no text column holds (the lookup by it was a 500: issue 35).
Such a path matches no route, so the answer is the JSON 404 (``casino.api.not_found``),
as for a table id past ``bigint`` (``games.tables.api.DatabaseIdConverter``)."""

from __future__ import annotations

from django.urls import register_converter
from django.urls.converters import StringConverter


class TextConverter(StringConverter):
    regex = "[^/\x00]+"


register_converter(TextConverter, "text")
