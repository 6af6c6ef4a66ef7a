"""The cashier's read model written from events (``ledger.services.projectors``;
docs/events.md names the projector of each table).

``CashierTransactionProjector`` (``CashierTransaction``) consumes the streams
``cashier-{transaction id}``: ``cashier.requested`` creates the row, each later
``cashier.*`` event moves it to the event's state. ``casino.cashier`` appends
the event, then applies it with this projector in the same transaction (the
row it holds kept current); ``manage.py rebuild_projections`` replays them.

Every column is projected. ``created_at`` and ``updated_at`` are the
service's ``at`` (in the event's data since issue #24; an older event gives its
append time); ``hold_id`` is the transaction's id for a withdrawal (the
cashier opens the withdrawal's hold under that id); ``decided_by`` and
``reason`` are the actor and reason of the last decision (approved, rejected,
refund due, refunded). Idempotent by ``stream_version``.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from casino.models import CashierKind, CashierState, CashierTransaction
from ledger.services.events import RecordedEvent
from ledger.services.projectors import Projector

STREAM_PREFIX = "cashier-"
# The states whose event records a decision: its actor and reason stay on the row.
DECIDING_STATES = frozenset(
    {CashierState.APPROVED, CashierState.REJECTED, CashierState.REFUND_DUE, CashierState.REFUNDED}
)


def cashier_stream(transaction_id: uuid.UUID | str) -> str:
    return f"{STREAM_PREFIX}{transaction_id}"


def _moment(event: RecordedEvent) -> datetime:
    at = event.data.get("at")
    return datetime.fromisoformat(at) if at else event.recorded_at


class CashierTransactionProjector(Projector):
    """``CashierTransaction`` from the ``cashier.*`` events of its stream."""

    name = "cashier_transaction"
    model = CashierTransaction
    stream_prefixes = (STREAM_PREFIX,)
    event_types = frozenset(f"cashier.{state}" for state in CashierState.values)
    key = ("id",)
    columns = (
        "player_id", "kind", "amount", "currency", "state", "external_reference", "hold_id", "reason",
        "decided_by", "created_at", "updated_at", "stream_version",
    )  # fmt: skip

    def __init__(self, *, row: CashierTransaction | None = None) -> None:
        """``row``: the row the service holds (kept current; unsaved for a new request)."""
        self._rows: dict[str, CashierTransaction] = {str(row.id): row} if row is not None else {}

    def _row(self, transaction_id: str) -> CashierTransaction | None:
        if transaction_id not in self._rows:
            found = CashierTransaction.objects.filter(pk=transaction_id).first()
            if found is None:
                return None
            self._rows[transaction_id] = found
        return self._rows[transaction_id]

    def apply_many(self, events: Sequence[RecordedEvent]) -> None:
        for event in events:
            self.apply(event)

    def apply(self, event: RecordedEvent) -> None:
        data = event.data
        transaction_id = str(data["transaction_id"])
        row = self._row(transaction_id)
        exists = row is not None and not row._state.adding
        if row is not None and exists and event.version <= row.stream_version:
            return  # applied already
        at = _moment(event)
        if not exists:
            if data["state"] != CashierState.REQUESTED:
                raise ValueError(f"{event.stream_id}@{event.version}: {event.type} before the request")
            row = row or CashierTransaction(id=uuid.UUID(transaction_id))
            row.player_id = int(data["player_id"])
            row.kind, row.amount, row.currency = data["kind"], int(data["amount"]), data["currency"]
            row.external_reference = data["external_reference"]
            row.hold_id = row.id if row.kind == CashierKind.WITHDRAWAL else None
            row.created_at = at
            row.reason, row.decided_by = "", ""
            self._rows[transaction_id] = row
        assert row is not None
        row.state, row.updated_at, row.stream_version = data["state"], at, event.version
        if row.state in DECIDING_STATES:
            row.decided_by, row.reason = data["actor"], data["reason"]
        row.save(force_insert=not exists)


CASINO_PROJECTORS: tuple[type[Projector], ...] = (CashierTransactionProjector,)
