"""Platform tasks."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="casino.ping", ignore_result=False, acks_late=False)
def ping(nonce: str) -> str:
    """Echo the nonce back: the health check's round trip through a worker."""
    return nonce


@shared_task(name="casino.reality_check", ignore_result=True)
def reality_check() -> int:
    """Send due reality-check reminders (beat: every minute)."""
    from django.utils import timezone

    from casino.responsible_gaming import send_reality_checks

    return send_reality_checks(now=timezone.now())
