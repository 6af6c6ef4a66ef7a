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

    def __init_subclass__(cls, *, code: str | None = None, http_status: int | None = None, **kwargs: Any) -> None:
        """Declare a refusal in its class line: ``class Gone(DomainError, code="gone", http_status=410)``.
        Unset, both are inherited."""
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.code = code
        if http_status is not None:
            cls.http_status = http_status

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


class NotFound(DomainError, code="not_found", http_status=404):
    """The named object does not exist."""


class Conflict(DomainError, code="conflict", http_status=409):
    """The command conflicts with the current state."""


class Forbidden(DomainError, code="forbidden", http_status=403):
    """The actor may not do this."""


MAX_REASON = 500


class ReasonRequired(DomainError, code="reason_required"):
    """A pause or void needs a ``reason`` (1 to 500 characters): players are told it and it is recorded."""


def required_reason(value: object) -> str:
    """An operator's reason, stripped: text of 1 to ``MAX_REASON`` characters, else ``reason_required``."""
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_REASON:
        raise ReasonRequired(field="reason")
    return value.strip()
