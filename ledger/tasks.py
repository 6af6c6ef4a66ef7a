"""Ledger tasks: the periodic seal (Celery beat, ``CELERY_BEAT_SCHEDULE``)."""

from __future__ import annotations

from celery import shared_task

from ledger.services.seals import seal


@shared_task(name="ledger.seal")
def seal_ledger() -> int | None:
    """Seal the events committed since the last seal; the new seal's id or None.
    Idempotent: a second run seals only what is new. Fails (``EventNotAuthentic``,
    logged by the seal and by Celery) when it stopped before an event without a
    valid MAC."""
    record = seal()
    return record.id if record else None
