"""Event fields that stay secret while their game is in play, e.g. a round's
sealed deck (``games.fairness``). The games register them with their event
types; readers for staff that show raw event data (the ledger's event admin,
the rounds' admin timeline) show ``redacted(type, data)`` instead, where each
such field reads ``SEALED``. The event store itself keeps them unchanged (the
hash chain covers what was stored). Pure Python."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SEALED = "(sealed)"
CONFIDENTIAL_FIELDS: dict[str, frozenset[str]] = {}


def register_confidential(event_type: str, *field_names: str) -> None:
    """Declare fields of ``event_type`` that no staff reader displays."""
    CONFIDENTIAL_FIELDS[event_type] = CONFIDENTIAL_FIELDS.get(event_type, frozenset()) | frozenset(field_names)


def redacted(event_type: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` with the type's confidential fields (those present) replaced by ``SEALED``."""
    hidden = CONFIDENTIAL_FIELDS.get(event_type, frozenset())
    return {key: SEALED if key in hidden else value for key, value in data.items()}
