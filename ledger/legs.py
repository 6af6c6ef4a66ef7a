"""Money legs in event data (pure Python, no Django).

Every money movement is written into the data of the event that causes it,
under the reserved top-level key ``"legs"``, so the event's hash (and the
seals over it) cover the money: ``verify_ledger`` then holds every transfer
and hold row to a leg, and every balance and statement line to the legs
(``ledger.services.verify_legs``; docs/ledger.md, "Money legs in the events").

A leg is a compact JSON array; its first element says which shape:

- ``[kind, debit, credit, amount, currency]``: a transfer of ``amount`` from
  account ``debit`` to account ``credit`` (``kind`` is the transfer's kind:
  ``deposit``, ``payout``, ``rake``, ``buy_in`` ...; never ``hold``, ``post``,
  ``release`` or ``void``);
- ``["hold", source, escrow, amount, currency, hold_id, destination]``: a hold
  opened: ``amount`` moves ``source`` -> ``escrow`` (a ``hold`` transfer) and
  waits there, bound for ``destination``;
- ``["post", hold_id, amount]``: the hold posted: ``amount`` moves escrow ->
  destination (a ``post`` transfer) and the rest, if any, escrow -> source
  (``release``);
- ``["void", hold_id]``: the hold voided: all of it escrow -> source (``void``).

A resolution names only the hold and the amount: its accounts and the held
amount are those of the hold's opening leg, itself in a hashed event, so they
are fixed as firmly as if they were repeated (and the bulk path need not read
the holds before it hashes the events).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

LEGS_KEY = "legs"
HOLD_KINDS = frozenset({"hold", "post", "release", "void"})


class ReservedKey(ValueError):
    """The caller's event data already has a ``legs`` key."""


class BadLeg(ValueError):
    """A leg that is not one of the shapes above."""


def transfer_leg(kind: str, debit: int, credit: int, amount: int, currency: str) -> list[Any]:
    return [kind, debit, credit, amount, currency]


def hold_open_leg(source: int, escrow: int, destination: int, amount: int, currency: str, hold_id: str) -> list[Any]:
    return ["hold", source, escrow, amount, currency, hold_id, destination]


def hold_post_leg(hold_id: str, amount: int) -> list[Any]:
    return ["post", hold_id, amount]


def hold_void_leg(hold_id: str) -> list[Any]:
    return ["void", hold_id]


def resolution_leg(hold_id: str, post_amount: int) -> list[Any]:
    """``post`` for a positive amount, ``void`` for 0."""
    return hold_post_leg(hold_id, post_amount) if post_amount else hold_void_leg(hold_id)


def with_legs(data: Mapping[str, Any], legs: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """``data`` with ``legs`` added under the reserved key (``ReservedKey`` if
    the caller's data has it already)."""
    if LEGS_KEY in data:
        raise ReservedKey(f"event data may not carry the reserved key {LEGS_KEY!r}")
    return {**data, LEGS_KEY: [list(leg) for leg in legs]}


def without_legs(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """``data`` as its writer gave it (for presenters that forward event data)."""
    if LEGS_KEY not in data:
        return data
    return {key: value for key, value in data.items() if key != LEGS_KEY}


def split_data(data: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``data``'s keys sorting before and after ``"legs"`` (canonical JSON sorts
    keys by code point), so the two halves can be encoded once and the legs
    spliced between them (``splice``). ``ReservedKey`` if ``data`` has legs."""
    if LEGS_KEY in data:
        raise ReservedKey(f"event data may not carry the reserved key {LEGS_KEY!r}")
    before = {k: v for k, v in data.items() if k < LEGS_KEY}
    after = {k: v for k, v in data.items() if not k < LEGS_KEY}
    return before, after


def splice(before_json: str, after_json: str, legs_json: str) -> str:
    """The canonical JSON of ``{**before, "legs": …, **after}`` from the halves'
    canonical JSON (``split_data``) and the legs' canonical JSON (a list).
    ``settle_batch`` writes each leg's text directly."""
    head = before_json[:-1] + ("," if before_json != "{}" else "")
    tail = ("," + after_json[1:]) if after_json != "{}" else "}"
    return f'{head}"{LEGS_KEY}":{legs_json}{tail}'


class Opening(NamedTuple):
    source: int
    escrow: int
    destination: int
    amount: int
    currency: str


class Row(NamedTuple):
    """A transfer row as the legs say it must be (hold id as canonical text or None)."""

    kind: str
    debit: int
    credit: int
    amount: int
    currency: str
    hold_id: str | None


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadLeg(f"{value!r} is not an integer")
    return value


def _str(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise BadLeg(f"{value!r} is not a string")
    return value


class Parsed(NamedTuple):
    """One event's legs, read: plain transfers, hold openings and resolutions."""

    transfers: list[Row]
    openings: list[tuple[str, Opening]]
    resolutions: list[tuple[str, int | None]]  # (hold id, posted amount; None: void)


def parse_legs(legs: Any, canonical_hold: Any = str) -> Parsed:
    """Read an event's ``legs`` value; ``BadLeg`` if any is malformed.
    ``canonical_hold``: hold id text -> canonical text (e.g. through ``UUID``)."""
    if not isinstance(legs, list):
        raise BadLeg("legs is not a list")
    parsed = Parsed([], [], [])
    for leg in legs:
        if not isinstance(leg, list) or not leg:
            raise BadLeg(f"leg {leg!r} is not a non-empty list")
        kind = leg[0]
        try:
            if kind == "hold" and len(leg) == 7:
                _, source, escrow, amount, currency, hold, destination = leg
                hold_id = canonical_hold(_str(hold))
                opening = Opening(_int(source), _int(escrow), _int(destination), _int(amount), _str(currency))
                parsed.openings.append((hold_id, opening))
                parsed.transfers.append(Row("hold", opening.source, opening.escrow, opening.amount,
                                            opening.currency, hold_id))  # fmt: skip
            elif kind == "post" and len(leg) == 3:
                parsed.resolutions.append((canonical_hold(_str(leg[1])), _int(leg[2])))
            elif kind == "void" and len(leg) == 2:
                parsed.resolutions.append((canonical_hold(_str(leg[1])), None))
            elif isinstance(kind, str) and kind not in HOLD_KINDS and len(leg) == 5:
                _, debit, credit, amount, currency = leg
                parsed.transfers.append(Row(kind, _int(debit), _int(credit), _int(amount), _str(currency), None))
            else:
                raise BadLeg(f"leg {leg!r} has no known shape")
        except (ValueError, TypeError) as exc:
            raise BadLeg(f"leg {leg!r}: {exc}") from exc
    return parsed


def resolution_rows(hold_id: str, opening: Opening, posted: int | None) -> list[Row]:
    """The transfer rows of a hold's resolution (``posted`` None: voided)."""
    if posted is None:
        return [Row("void", opening.escrow, opening.source, opening.amount, opening.currency, hold_id)]
    rows = [Row("post", opening.escrow, opening.destination, posted, opening.currency, hold_id)]
    if opening.amount - posted > 0:
        rows.append(Row("release", opening.escrow, opening.source, opening.amount - posted, opening.currency, hold_id))
    return rows
