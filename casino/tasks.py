"""Platform tasks."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="casino.ping", ignore_result=False, acks_late=False)
def ping(nonce: str) -> str:
    """Echo the nonce back: the health check's round trip through a worker."""
    return nonce
