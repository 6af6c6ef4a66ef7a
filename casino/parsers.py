"""The REST API's JSON body parser: ``casino.json_input`` at the edge, so no body
reaches a view deeper than the API nests, with a lone surrogate or NUL in a
string, or with a number no float holds; each is refused with its own code
(``invalid_json``, ``too_deep``, ``invalid_text``: 400, the error envelope,
nothing changed)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from casino import json_input


class JSONBodyParser(JSONParser):
    """DRF's ``JSONParser`` with the edge checks of ``casino.json_input``."""

    def parse(
        self, stream: IO[bytes], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        try:
            return json_input.loads(stream.read(), max_depth=settings.CASINO_JSON_MAX_DEPTH)
        except json_input.InputRefused as refused:
            raise ParseError(detail=refused.message, code=refused.code) from None
