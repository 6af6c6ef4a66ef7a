"""What staff readers may show of stored events (docs/compliance.md, "What
staff see of a round in play").

Two layers, both registered by the games (the ledger imports no game):

- Confidential fields and sealed values: fields a game registers with
  ``register_confidential`` (a deal's ``sealed_deck``) and every value with the
  shape of a sealed value (``register_sealed_shape``: ciphertext under a deal or
  player key, wherever it sits in the data) read ``SEALED`` in every staff
  reader, in play or not: ``redacted(type, data)``.
- A deal in play: a game registers, per stream prefix, a reader factory
  (``register_staff_view``) that, for one stream, gives what a spectator at the
  table sees of each of its events while the round or hand is in play (the
  game's own presenters, the same code that renders the table to players), and
  the stored event once it is over. ``staff_reader(stream_id)`` returns it; each
  staff surface (the ledger's event admin, the rounds' admin timeline, the poker
  hand pages, game recall) reads events through it.

The event store keeps the events unchanged (the hash chain covers what was
stored): this is about display only. Pure Python.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

SEALED = "(sealed)"
# A field (or a whole event) the table has not been shown yet: the event is stored, staff see it once the deal ends.
NOT_SHOWN = "(not shown to the table yet)"
CONFIDENTIAL_FIELDS: dict[str, frozenset[str]] = {}

# Predicates recognising a sealed value (e.g. ``games.cards.vault.is_sealed``).
_SEALED_SHAPES: list[Callable[[Any], bool]] = []

# ``(event type, stored data) -> data staff may see now`` (``None``: the event is not shown to the table).
EventView = Callable[[str, Mapping[str, Any]], Mapping[str, Any] | None]
# Stream prefix -> factory of the stream's view (called once per stream read).
_STAFF_VIEWS: list[tuple[str, Callable[[str], EventView]]] = []


def register_confidential(event_type: str, *field_names: str) -> None:
    """Declare fields of ``event_type`` that no staff reader displays."""
    CONFIDENTIAL_FIELDS[event_type] = CONFIDENTIAL_FIELDS.get(event_type, frozenset()) | frozenset(field_names)


def register_sealed_shape(predicate: Callable[[Any], bool]) -> None:
    """Declare what a sealed value looks like: every such value reads ``SEALED`` in staff readers."""
    if predicate not in _SEALED_SHAPES:
        _SEALED_SHAPES.append(predicate)


def register_staff_view(stream_prefix: str, factory: Callable[[str], EventView]) -> None:
    """Declare how staff see the events of streams starting with ``stream_prefix``:
    ``factory(stream_id)`` reads whatever it needs once (is the deal over?) and
    returns the view of each event of that stream. The longest matching prefix wins."""
    _STAFF_VIEWS[:] = [(p, f) for p, f in _STAFF_VIEWS if p != stream_prefix]
    _STAFF_VIEWS.append((stream_prefix, factory))
    _STAFF_VIEWS.sort(key=lambda item: -len(item[0]))


def _is_sealed(value: Any) -> bool:
    return any(shape(value) for shape in _SEALED_SHAPES)


def _mask_sealed(value: Any) -> Any:
    if _is_sealed(value):
        return SEALED
    if isinstance(value, Mapping):
        return {key: _mask_sealed(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_mask_sealed(item) for item in value]
    return value


def redacted(event_type: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` with the type's confidential fields (those present) and every
    sealed value, at any depth, replaced by ``SEALED``."""
    hidden = CONFIDENTIAL_FIELDS.get(event_type, frozenset())
    return {key: SEALED if key in hidden else _mask_sealed(value) for key, value in data.items()}


def _as_stored(event_type: str, data: Mapping[str, Any]) -> Mapping[str, Any]:
    return data


def staff_reader(stream_id: str) -> Callable[[str, Mapping[str, Any]], dict[str, Any] | str]:
    """The reader staff see a stream's events through: ``reader(type, data)`` is the
    event's data as the table saw it while the deal is in play (fields the
    table was not shown read ``NOT_SHOWN``; an event not shown at all is the
    string ``NOT_SHOWN``), the stored data once it is over; in both, confidential
    fields and sealed values read ``SEALED``. Streams no game registered: as stored."""
    factory = next((f for prefix, f in _STAFF_VIEWS if stream_id.startswith(prefix)), None)
    view = factory(stream_id) if factory is not None else _as_stored

    def read(event_type: str, data: Mapping[str, Any]) -> dict[str, Any] | str:
        shown = view(event_type, data)
        if shown is None:
            return NOT_SHOWN
        if shown is not data:
            # Fields the table view leaves out are named, not silently dropped.
            shown = {**{key: NOT_SHOWN for key in data if key not in shown}, **shown}
        return redacted(event_type, shown)

    return read


def staff_data(*, stream_id: str, event_type: str, data: Mapping[str, Any]) -> dict[str, Any] | str:
    """One event as staff may see it now (``staff_reader`` for a single event)."""
    return staff_reader(stream_id)(event_type, data)
