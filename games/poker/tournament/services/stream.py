"""The tournament's stream (``poker-tournament-{id}``) as play writes it
(docs/poker.md, "Tournaments: play"): a ``Batch`` gathers events and the
ledger legs they cause, in one unit (the tournament chip unit
``ledger.currencies.CHIPS``, or the tournament's currency);
``commit_batch`` appends and settles it all or nothing, then applies the
events with the projectors.

Contract: called inside the caller's transaction (``settle_batch`` opens no
savepoint of its own) with the tournament row locked (``lock_tournament``),
which serialises the stream's versions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection

from games.poker import event_types as et
from games.poker.models import PokerSeat
from games.poker.projectors import project_tournament
from games.poker.tournament.models import Tournament, TournamentEntry
from ledger.services import EventRef, NewEvent, StreamAppend, TransferSpec, settle_batch
from ledger.services.events import stream_head
from ledger.services.projectors import events_of


@dataclass
class Batch:
    """Tournament events and the ledger legs they cause, in one unit (chips or one currency)."""

    unit: str
    events: list[NewEvent] = field(default_factory=list)
    legs: list[tuple[int, int, int, str, int]] = field(default_factory=list)  # debit, credit, amount, kind, event

    def event(self, event_type: str, data: dict[str, Any]) -> int:
        self.events.append(NewEvent(event_type, data))
        return len(self.events) - 1

    def leg(self, debit: int, credit: int, amount: int, kind: str, event: int) -> None:
        if amount > 0:
            self.legs.append((debit, credit, amount, kind, event))


def commit_batch(
    tournament: Tournament,
    batch: Batch,
    *,
    key: str | None = None,
    actor: str,
    now: datetime,
    entries: Iterable[TournamentEntry] = (),
    seats: Iterable[PokerSeat] = (),
) -> None:
    """Append the batch's events to ``poker-tournament-{id}`` and make its transfers,
    all or nothing, then apply the events with the projectors (the tournament,
    its entries and seats: ``tournament``, ``entries`` and ``seats`` are the rows
    held, kept current, which the projectors do not read again); the batch is
    empty again. ``key``: the idempotency key (default: the stream's version).
    Call with the tournament row locked (that serialises the stream)."""
    if not batch.events:
        return
    stream = et.tournament_stream(tournament.pk)
    with connection.cursor() as cursor:
        version, head = stream_head(cursor, stream)
    metadata = {"actor": actor}
    settle_batch(
        idempotency_key=key or f"poker:tournament:{tournament.pk}:at:{version}",
        currency=batch.unit,
        appends=[StreamAppend(stream, version, batch.events, metadata, head_hash=head if version else None)],
        transfers=[
            TransferSpec(debit, credit, amount, EventRef(stream, version + 1 + index), kind)
            for debit, credit, amount, kind, index in batch.legs
        ],
    )
    recorded = events_of(stream_id=stream, first_version=version + 1, events=batch.events, metadata=metadata, at=now)
    batch.events, batch.legs = [], []
    project_tournament(recorded, tournament=tournament, entries=entries, seats=seats)
