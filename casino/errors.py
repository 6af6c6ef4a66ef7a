"""Errors with a stable code, shared by every layer.

Pure Python (no Django import) so the domain layer may raise them. The API
layer renders any ``DomainError`` as ``{"error": {"code", "message", ...}}``
with its ``http_status``; management commands print the code and exit non-zero.
"""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    """A refused command. ``code`` is stable and documented; nothing changed."""

    code: str = "domain_error"
    http_status: int = 400

    def __init__(self, message: str = "", *, code: str | None = None, **details: Any) -> None:
        super().__init__(message or self.__class__.__doc__ or self.code)
        if code is not None:
            self.code = code
        self.message = message or (self.__class__.__doc__ or self.code).strip()
        self.details = details

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            body["details"] = self.details
        return body


class NotFound(DomainError):
    """The named object does not exist."""

    code = "not_found"
    http_status = 404


class Conflict(DomainError):
    """The command conflicts with the current state."""

    code = "conflict"
    http_status = 409


class Forbidden(DomainError):
    """The actor may not do this."""

    code = "forbidden"
    http_status = 403
