"""Event MACs (docs/ledger.md, "Event MACs"): each event carries
HMAC-SHA256 of its chain hash under ``CASINO_EVENT_MAC_KEY``, a key the
database never holds. A database insider can write a correctly chained event
but not its MAC, so ``verify_ledger`` names it and the seal refuses to sign it.

Events below the ``mac`` integrity epoch (``ledger_integrity_epoch``) predate
MACs and carry none; with no epoch row at all every event must carry one."""

from __future__ import annotations

import functools
import hmac
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.signals import setting_changed

from ledger.canonical import event_mac

MAC_FEATURE = "mac"


@functools.cache
def event_mac_key() -> bytes:
    """The key new events' MACs are made with (``CASINO_EVENT_MAC_KEY``)."""
    key = settings.CASINO_EVENT_MAC_KEY
    if not key:
        raise RuntimeError("CASINO_EVENT_MAC_KEY is not set")
    return key.encode()


@functools.cache
def verification_keys() -> tuple[bytes, ...]:
    """Every key an event's MAC may be under: the current key, then the retired
    ones (``CASINO_EVENT_MAC_RETIRED_KEYS``) that signed older events."""
    retired = tuple(key.encode() for key in settings.CASINO_EVENT_MAC_RETIRED_KEYS)
    return (event_mac_key(), *(key for key in retired if key != event_mac_key()))


def _forget_keys(*, setting: str, **kwargs: Any) -> None:
    if setting.startswith("CASINO_EVENT_MAC_"):
        event_mac_key.cache_clear()
        verification_keys.cache_clear()


setting_changed.connect(_forget_keys)


def mac_is_valid(keys: Sequence[bytes], event_hash: str, mac: str | None) -> bool:
    """Whether ``mac`` is the MAC of ``event_hash`` under one of ``keys``."""
    if not mac:
        return False
    try:
        return any(hmac.compare_digest(event_mac(key, event_hash), mac) for key in keys)
    except ValueError:  # a hash that is not hex
        return False


def integrity_epochs(cursor: Any) -> dict[str, int]:
    """feature -> first event id under it (the smallest bound of its rows:
    ``ledger.models.IntegrityEpoch``)."""
    cursor.execute("SELECT feature, MIN(first_event_id) FROM ledger_integrity_epoch GROUP BY feature ORDER BY 1")
    return {str(feature): int(first) for feature, first in cursor.fetchall()}


def mac_epoch(epochs: dict[str, int]) -> int:
    """The first event id that must carry a MAC: with no ``mac`` row, every event (1)."""
    return epochs.get(MAC_FEATURE, 1)


def describe(position: int, stream_id: str, version: int, type_: str) -> str:
    """An event named for a problem: position, stream, version and type."""
    return f"event {position} ({stream_id}@{version} {type_})"
