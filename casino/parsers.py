"""The REST API's body parsers: ``casino.json_input`` at the edge, so no body
reaches a view deeper than the API nests, with a lone surrogate or NUL in a
string, or with a number no float holds; each is refused with its own code
(``invalid_json``, ``too_deep``, ``invalid_text``: 400, the error envelope,
nothing changed).

Form bodies (``application/x-www-form-urlencoded``, ``multipart/form-data``)
stay accepted (the OpenAPI document lists them for every body, DRF's test
client and browsable API send them) and get the same text check: a key or
value with NUL or a lone surrogate is ``invalid_text``. A form cannot nest and
its numbers are text the serializers parse (``1e400``, ``NaN``, 5,000 digits:
the field's own validation error). Bytes that are not UTF-8 are decoded as
Django decodes every form (each bad byte read as U+FFFD), not refused."""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, TYPE_CHECKING, Any

from django.conf import settings
from django.http import QueryDict
from rest_framework.exceptions import ParseError
from rest_framework.parsers import DataAndFiles, FormParser, JSONParser, MultiPartParser

from casino import json_input

if TYPE_CHECKING:
    from django.http.request import _ImmutableQueryDict  # the stubs' name for a parsed form
    from django.utils.datastructures import MultiValueDict


class JSONBodyParser(JSONParser):
    """DRF's ``JSONParser`` with the edge checks of ``casino.json_input``."""

    def parse(
        self, stream: IO[bytes], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        try:
            return json_input.loads(stream.read(), max_depth=settings.CASINO_JSON_MAX_DEPTH)
        except json_input.InputRefused as refused:
            raise ParseError(detail=refused.message, code=refused.code) from None


def check_form(data: QueryDict) -> None:
    """Refuse a form whose keys or values are not text (``invalid_text``)."""
    for key, values in data.lists():
        for text in (key, *values):
            if not json_input.is_text(text):
                raise ParseError(detail=json_input.InvalidText.message, code=json_input.InvalidText.code)


class CheckedFormParser(FormParser):
    """DRF's ``FormParser`` with the text check of ``check_form``."""

    def parse(
        self, stream: IO[bytes], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> _ImmutableQueryDict:
        data = super().parse(stream, media_type, parser_context)
        check_form(data)
        return data


class CheckedMultiPartParser(MultiPartParser):
    """DRF's ``MultiPartParser`` with the text check of ``check_form`` (on the
    fields, and on the names of files: the API takes none)."""

    def parse(
        self, stream: IO[bytes], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> DataAndFiles[_ImmutableQueryDict, MultiValueDict[Any, Any]]:
        parsed = super().parse(stream, media_type, parser_context)
        check_form(parsed.data)
        for name in parsed.files:
            if not json_input.is_text(name):
                raise ParseError(detail=json_input.InvalidText.message, code=json_input.InvalidText.code)
        return parsed
