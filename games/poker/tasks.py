"""Poker dealer tasks (thin: each calls ``games.poker.services``). Idempotent
like the house tables' ``games.advance``: the task carries the phase sequence
it expects and does nothing when the table has moved on."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from celery import shared_task
from celery.signals import worker_ready
from django.utils import timezone

from casino import log_context
from casino.errors import DomainError
from games.poker import services
from games.poker.tournament import services as tournament_services

log = logging.getLogger(__name__)


def _stepped(what: str, step: Callable[[], object | None]) -> bool:
    """Run a dealer's step: True when it did something, False when it had
    nothing to do (``None``) or was refused (logged as ``what: code (message)``)."""
    try:
        return step() is not None
    except DomainError as exc:
        log.info("%s: %s (%s)", what, exc.code, exc.message)
        return False


@shared_task(name="games.poker.advance", ignore_result=True)
def advance_poker_table_task(table_id: int, expected_seq: int) -> bool:
    """Advance poker table ``table_id`` from phase ``expected_seq``; False when it had moved on."""
    log_context.bind(table=table_id)
    return _stepped(
        f"poker advance: table {table_id}",
        lambda: services.advance_table(table_id=table_id, expected_seq=expected_seq, now=timezone.now()),
    )


@shared_task(name="games.poker.sweep", ignore_result=True, acks_late=False)
def sweep_poker_tables() -> dict[str, int]:
    """Beat backstop: overdue tables advanced, expired seats freed, ready idle tables started."""
    return services.sweep(now=timezone.now())


@worker_ready.connect
def _sweep_on_worker_start(sender: Any = None, **kwargs: Any) -> None:
    """A starting dealer worker picks up every poker table at once (``make run``)."""
    sweep_poker_tables.delay()


@shared_task(name="games.poker.tournament_advance", ignore_result=True)
def advance_tournament_task(tournament_id: int) -> bool:
    """The tournament's step (busts, balancing, hand-for-hand, the finish); False when it is not running."""
    return _stepped(
        f"tournament advance: {tournament_id}",
        lambda: tournament_services.advance_tournament(tournament_id=tournament_id, now=timezone.now()),
    )


@shared_task(name="games.poker.tournament_sweep", ignore_result=True, acks_late=False)
def sweep_tournaments_task() -> dict[str, int]:
    """Beat backstop: scheduled starts, and steps for running tournaments with a table waiting or a level due."""
    return tournament_services.sweep_tournaments(now=timezone.now())


@shared_task(name="games.poker.demo_bots", ignore_result=True, acks_late=False)
def demo_bots_task() -> dict[str, int]:
    """The make run demo: bots register into the demo Sit & Go and act at their turns."""
    from games.poker.demo_bots import demo_bots_tick

    return demo_bots_tick(now=timezone.now())
