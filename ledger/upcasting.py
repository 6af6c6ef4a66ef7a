"""Schema evolution: the current schema version of each event type and the
upcasters that turn stored older versions into the current shape on read.

Stored events are never rewritten (the hash chain covers what was stored);
readers see the current shape. Register with ``@upcaster(type, from_version)``;
a function takes version N data and returns version N+1 data.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Data = Mapping[str, Any]
Upcaster = Callable[[Data], Data]

CURRENT_VERSIONS: dict[str, int] = {}
_UPCASTERS: dict[tuple[str, int], Upcaster] = {}


def register_event_type(event_type: str, current_version: int) -> None:
    """Declare an event type's current schema version (1 for a new type)."""
    CURRENT_VERSIONS[event_type] = current_version


def upcaster(event_type: str, from_version: int) -> Callable[[Upcaster], Upcaster]:
    def register(func: Upcaster) -> Upcaster:
        _UPCASTERS[(event_type, from_version)] = func
        return func

    return register


def current_version(event_type: str) -> int | None:
    return CURRENT_VERSIONS.get(event_type)


def upcast(event_type: str, schema_version: int, data: Data) -> tuple[int, Data]:
    """Bring ``data`` up to the type's current version; unknown types pass unchanged."""
    target = CURRENT_VERSIONS.get(event_type, schema_version)
    while schema_version < target:
        data = _UPCASTERS[(event_type, schema_version)](data)
        schema_version += 1
    return schema_version, data
