"""The REST pieces every game family's player API shares (interface layer):
the idempotency key header, parsing a JSON body and its fields with exact
error codes, query integers, rendering a service result, the play throttle,
and the OpenAPI schema's shared shapes (the error answers, a free-form object,
a deal's fairness answer). Every refusal is a
``DomainError`` rendered by ``casino.api.exception_handler``."""

from __future__ import annotations

from typing import Any

from django.urls import register_converter
from django.urls.converters import IntConverter
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.request import Request

from casino.api import ErrorBody as ErrorBody
from casino.api import ErrorDetail as ErrorDetail
from casino.api import errors as errors
from casino.api import request_user
from casino.errors import DomainError

IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key",
    str,
    OpenApiParameter.HEADER,
    required=True,
    description="Unique per command; a retry with the same key returns the first result, "
    "the same key with another body is refused (idempotency_key_reused).",
)
MAX_IDEMPOTENCY_KEY = 100


class MissingIdempotencyKey(DomainError, code="idempotency_key_required"):
    """Send an ``Idempotency-Key`` header (1 to 100 characters) with every bet and decision."""


class MalformedAmount(DomainError, code="invalid_amount"):
    """``amount`` must be a positive whole number of minor units."""


class MissingField(DomainError, code="invalid_field"):
    """A required field is missing or of the wrong type."""


def player_key(player_id: int, raw: object) -> str:
    """The stored idempotency key of one of ``player_id``'s commands: the
    client's key (a string of 1 to 100 characters, surrounding blanks ignored)
    namespaced by player, so one player's key never collides with another's.
    The REST ``Idempotency-Key`` header and a websocket command's ``id`` go
    through here, so the same key sent both ways is one command. Anything
    else (NUL included: no text column holds it): ``idempotency_key_required``."""
    key = raw.strip() if isinstance(raw, str) else ""
    if not key or len(key) > MAX_IDEMPOTENCY_KEY or "\x00" in key:
        raise MissingIdempotencyKey()
    return f"play:{player_id}:{key}"


def idempotency_key(request: Request) -> str:
    return player_key(request_user(request).pk, request.headers.get("Idempotency-Key", ""))


def body(request: Request) -> dict[str, Any]:
    data = request.data
    if not isinstance(data, dict):
        raise MissingField("The body must be a JSON object.")
    return data


def positive_int(value: Any) -> int:
    # bool is an int in Python; "10" and 10.0 are not amounts either.
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise MalformedAmount(amount=value if isinstance(value, int | str | float | None) else str(value))
    return value


def text_field(data: dict[str, Any], name: str) -> str:
    """A required non-empty string field. NUL is refused too: no text column
    (nor the ledger's canonical JSON) can hold it."""
    value = data.get(name)
    if not isinstance(value, str) or not value or "\x00" in value:
        raise MissingField(f"`{name}` is required (a string without NUL).", field=name)
    return value


def result_json(result: Any) -> Any:
    """Service results are dataclasses (their own ``as_json`` where they have
    one) or plain data; render either."""
    from dataclasses import asdict, is_dataclass

    as_json = getattr(result, "as_json", None)
    if as_json is not None:
        return as_json()
    if is_dataclass(result) and not isinstance(result, type):
        return asdict(result)
    return result


class InvalidQuery(DomainError, code="invalid_query"):
    """A query parameter is not a whole number in range."""


MAX_OFFSET = 10**6
"""The largest ``offset`` of any paged list: deeper pages are refused (``invalid_query``)."""


def query_int(request: Request, name: str, default: int, *, maximum: int) -> int:
    """A whole number query parameter from 0 to ``maximum`` (ASCII digits,
    an optional sign, at most 20 characters: ``int()`` is never asked to
    parse a huge text), else ``invalid_query``."""
    raw = request.query_params.get(name)
    if raw is None:
        return default
    text = raw.strip()
    try:
        if len(text) > 20 or not text.isascii():
            raise ValueError(text)
        value = int(text)
    except ValueError:
        raise InvalidQuery(parameter=name, maximum=maximum) from None
    if value < 0 or value > maximum:
        raise InvalidQuery(parameter=name, maximum=maximum)
    return value


def query_offset(request: Request) -> int:
    """The ``offset`` of a paged list: 0 to ``MAX_OFFSET``."""
    return query_int(request, "offset", 0, maximum=MAX_OFFSET)


MAX_DB_ID = 2**63 - 1


class DatabaseIdConverter(IntConverter):
    """``<id:name>`` in a route: a whole number the database's ``bigint`` can
    hold. A larger one matches no route, so the answer is the JSON 404
    (``casino.api.not_found``) rather than a query the database refuses."""

    def to_python(self, value: str) -> int:
        number = int(value)
        if number > MAX_DB_ID:
            raise ValueError(value)
        return number


register_converter(DatabaseIdConverter, "id")


class AnyObject(serializers.Serializer):
    """A JSON object whose fields this schema does not list."""


class DealtCardSchema(serializers.Serializer):
    position = serializers.IntegerField(min_value=0, max_value=51, help_text="Deck position, 0 = the top card.")
    card = serializers.CharField(help_text="Two-character code, e.g. As, Td, 2c.")
    to = serializers.CharField(
        help_text="Who got it: house shared, player:<id>, dealer, board; poker seat:<n>, burn, board."
    )
    slot = serializers.IntegerField(min_value=0, help_text="Its place in that hand, board or burn pile.")


class FairnessAnswer(serializers.Serializer):
    """A deal's fairness answer (docs/fairness.md): the commitment always; the
    salt, deck and deal order only once the round or hand has ended."""

    game_number = serializers.CharField()
    algorithm = serializers.ChoiceField(choices=["sha256"])
    commitment = serializers.CharField(help_text='SHA-256 hex of the UTF-8 text "<salt>:<deck>".')
    salt = serializers.CharField(required=False, help_text="64 lowercase hex digits (once ended).")
    deck = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="The 52 cards, top first (once ended)."
    )
    deal_order = DealtCardSchema(many=True, required=False, help_text="Each deck position dealt (once ended).")
