"""Shared API plumbing: the error envelope and content negotiation of every DRF view."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import User
from django.db import DatabaseError, DataError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.utils import translation
from django.views.defaults import page_not_found
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers, status
from rest_framework.exceptions import NotAuthenticated
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from casino.errors import DomainError
from casino.i18n import localized_message, profile_language


class ErrorDetail(serializers.Serializer):
    code = serializers.CharField(help_text="Stable machine-readable code, e.g. betting_closed.")
    message = serializers.CharField()
    details = serializers.DictField(required=False, help_text="Facts about the refusal (e.g. the limit).")


class ErrorBody(serializers.Serializer):
    error = ErrorDetail()


def errors(**codes: str) -> dict[int, OpenApiResponse]:
    """Error responses by status, e.g. ``errors(r409="betting_closed, ...")``: each
    documented with the codes it may carry. 401 is added."""
    documented = {int(status.removeprefix("r")): text for status, text in codes.items()}
    documented.setdefault(401, "not_authenticated (no token or session), authentication_failed (an unknown token)")
    return {status: OpenApiResponse(ErrorBody, description=text) for status, text in sorted(documented.items())}


class ValueOutOfRange(DomainError, code="value_out_of_range", http_status=400):
    """A number in the request overflowed a database column (e.g. an amount whose
    movement would take a balance past 64 bits): nothing was written."""


def _out_of_range(exc: DataError) -> bool:
    """PostgreSQL's numeric_value_out_of_range (SQLSTATE 22003); the request's
    transaction is rolled back by the atomic block it escaped from."""
    return getattr(exc.__cause__, "sqlstate", None) == "22003"


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Render domain errors and DRF errors in one shape:
    ``{"error": {"code": str, "message": str, "details": ...}}``."""
    # Imported here: ``rest_framework.views`` resolves the content negotiation
    # class of this module when it is imported, so importing it at the top
    # would make ``casino.api`` unimportable before DRF's views (the websocket
    # routes import it first).
    from rest_framework.views import exception_handler as drf_exception_handler

    if isinstance(exc, DataError) and _out_of_range(exc):
        exc = ValueOutOfRange("A number in the request is beyond what can be stored (64-bit).")
    language = _answer_language(context.get("request"))
    if isinstance(exc, DomainError):
        refusal = exc.as_dict()
        refusal["message"] = localized_message(exc.code, exc.message, language)
        return Response({"error": refusal}, status=exc.http_status)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    code = getattr(exc, "default_code", "error")
    detail = response.data
    if isinstance(detail, dict) and set(detail) == {"detail"}:
        message = str(detail["detail"])
        code = getattr(detail["detail"], "code", code)
        body: dict[str, Any] = {"code": code, "message": localized_message(code, message, language)}
    else:
        if response.status_code == status.HTTP_400_BAD_REQUEST:
            code = "invalid_request"
        message = localized_message(code, "The request is invalid.", language)
        body = {"code": code, "message": message, "details": detail}
    response.data = {"error": body}
    return response


def _answer_language(request: Request | None) -> str | None:
    """The language of a refusal's message (``casino.i18n``): an authenticated
    player's profile language, else the one ``Accept-Language`` activated."""
    user = getattr(request, "_user", None)  # set by DRF's authentication, if it ran
    if user is None or not user.is_authenticated:
        return translation.get_language()
    try:
        return profile_language(int(user.pk)) or translation.get_language()
    except DatabaseError:  # a refusal is answered even if the database is not
        return translation.get_language()


def request_user(request: Request) -> User:
    """The authenticated user of a request (views with ``IsAuthenticated`` only)."""
    user = request.user
    if not isinstance(user, User) or not user.is_authenticated:
        raise NotAuthenticated()
    return user


class JSONFirstNegotiation(DefaultContentNegotiation):
    """DRF's content negotiation, answered at once for what player clients
    send (no ``Accept``, ``*/*`` or ``application/json``; no format suffix or
    ``?format=``) when the view's first renderer is JSON: the same renderer
    and media type DRF picks, without parsing the header on every chip.
    Anything else (a browser's ``text/html``, an unacceptable type's ``406``)
    is negotiated by DRF itself."""

    _JSON = "application/json"

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderers = list(renderers)
        accept = request.META.get("HTTP_ACCEPT", "*/*").strip()
        if (
            format_suffix is None
            and renderers
            and renderers[0].media_type == self._JSON
            and accept in ("*/*", self._JSON)
            and self.settings.URL_FORMAT_OVERRIDE not in request.query_params
        ):
            return renderers[0], self._JSON
        return super().select_renderer(request, renderers, format_suffix)


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """Django's 404 handler (``handler404``): under ``/api/`` the error envelope
    in JSON (``not_found``), e.g. a path whose id is not a whole number; elsewhere
    Django's own page."""
    if request.path.startswith("/api/"):
        message = localized_message("not_found", "No such API path or object.")
        body = {"error": {"code": "not_found", "message": message}}
        return JsonResponse(body, status=status.HTTP_404_NOT_FOUND)
    return page_not_found(request, exception or Http404())
