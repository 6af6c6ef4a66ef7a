"""The OpenAPI schema's view inspector: drf-spectacular's, plus the error
answers the shared API plumbing gives on any operation (interface layer).

A view documents its own refusals (``casino.api.errors``). Whatever it leaves
out, the plumbing around every view can still answer, so it is added here with
the error envelope (``ErrorBody``) and the codes it carries:

- 400 where there is a body or a parameter to get wrong (``invalid_json``,
  ``too_deep``, ``invalid_text``, ``invalid_request``, ``invalid_field``,
  ``invalid_query``);
- 401 and 403 where the view needs a logged-in caller (``not_authenticated``,
  ``authentication_failed``; ``permission_denied``: the caller's role may not,
  or a session request came without its CSRF token);
- 404 where the path names an object (``not_found``, and any unknown ``/api/``
  path: ``casino.api.not_found``);
- 415 where there is a body (``unsupported_media_type``);
- 429 where the view is throttled (``throttled``).

So the schema says every status an operation may answer, which the schema
fuzz (tests/platform/test_schema_fuzz.py) checks.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse
from rest_framework.permissions import AllowAny

from casino.api import ErrorBody

GENERIC_ERRORS = {
    400: "invalid_json (the body is not one JSON document, or a number is not finite), too_deep (nested "
    "deeper than the API reads), invalid_text (a string of a JSON body or a form field with a lone "
    "surrogate or NUL, or JSON bytes that are not UTF-8), invalid_request / invalid_field (a field is missing "
    "or of the wrong type), invalid_query (a query parameter is not a whole number in range), "
    "value_out_of_range (a number would overflow a 64-bit column)",
    401: "not_authenticated (no token or session), authentication_failed (an unknown token)",
    403: "permission_denied (the caller's role may not do this, or a session request without its CSRF token)",
    404: "not_found (no such object or path)",
    415: "unsupported_media_type (a body in a media type the operation does not read, or one that cannot be parsed)",
    429: "throttled (too many requests; retry after the Retry-After header's seconds)",
}


class CasinoAutoSchema(AutoSchema):
    def _get_response_bodies(self, direction: Any = "response") -> dict[str, Any]:
        responses: dict[str, Any] = super()._get_response_bodies(direction)
        for status in self._generic_error_statuses():
            if str(status) not in responses:
                answer = OpenApiResponse(ErrorBody, description=GENERIC_ERRORS[status])
                responses[str(status)] = self._get_response_for_code(answer, str(status), direction=direction)
        return dict(sorted(responses.items()))

    def _generic_error_statuses(self) -> list[int]:
        statuses = []
        has_body = self.method in ("POST", "PUT", "PATCH")
        if has_body or self._get_parameters():
            statuses.append(400)
        if not all(issubclass(permission, AllowAny) for permission in self._permission_classes()):
            statuses += [401, 403]
        if "{" in self.path:
            statuses.append(404)
        if has_body:
            statuses.append(415)
        if getattr(self.view, "throttle_classes", None):
            statuses.append(429)
        return statuses

    def _permission_classes(self) -> list[type]:
        return [type(permission) for permission in self.view.get_permissions()]
