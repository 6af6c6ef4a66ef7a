"""Dealer tasks (thin: each calls ``games.house.services.dealer``). Every task is idempotent:
``games.advance`` carries the phase sequence it expects and does nothing when the
table has moved on, so a duplicate or redelivered task (acks late) is harmless."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from celery.signals import worker_init, worker_ready

from games.house.models import HouseTable
from games.house.services import dealer


@shared_task(name="games.advance", ignore_result=True)
def advance_table_task(table_id: int, expected_seq: int) -> bool:
    """Advance ``table_id`` from phase ``expected_seq``; False when it had moved on
    (or the table no longer exists: nothing to deal)."""
    try:
        return dealer.advance(table_id=table_id, expected_seq=expected_seq) is not None
    except HouseTable.DoesNotExist:
        return False


@shared_task(name="games.sweep", ignore_result=True, acks_late=False)
def sweep_tables() -> dict[str, int]:
    """Beat backstop: overdue tables advanced, dealer-gone rounds voided, idle open tables started."""
    return dealer.sweep()


@shared_task(name="games.start_open_tables", ignore_result=True)
def start_open_tables_task() -> int:
    return dealer.start_open_tables()


@worker_init.connect
def _build_evaluator_tables(sender: Any = None, **kwargs: Any) -> None:
    """Before the pool forks: the hand evaluator's tables are built once and
    shared by every child, not rebuilt at each child's first showdown."""
    from games.cards.evaluator import warm_up

    warm_up()


@worker_ready.connect
def _deal_on_worker_start(sender: Any = None, **kwargs: Any) -> None:
    """A starting dealer worker deals at every open table without a round (``make run``)."""
    start_open_tables_task.delay()


# The poker tables' dealer tasks register with the same worker.
