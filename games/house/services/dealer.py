"""The dealer loop: pacing each open table's phases (application layer glue).

How a table moves (docs/live.md):

- The round services (``games.house.services``) record every phase with an absolute
  deadline and a phase sequence number, and return a ``TableTick``.
- ``schedule_tick`` enqueues ``games.advance`` for that deadline
  (``apply_async(eta=deadline)``) carrying the phase sequence it expects, and
  only when the transaction that recorded the phase commits
  (``transaction.on_commit``): a rolled-back phase never schedules anything.
- ``advance`` asks the services to move the table on from exactly that
  sequence; a stale or duplicated task finds the sequence moved and does
  nothing (``advance_table`` returns ``None``), so redelivery is harmless.
- ``sweep`` (Celery beat, every second or two) is the backstop when a task is
  lost with its worker: a table overdue by more than
  ``CASINO_SWEEP_GRACE_SECONDS`` is advanced; one overdue by more than
  ``CASINO_DEALER_GONE_VOID_SECONDS`` (nobody dealt it for that long: no worker,
  no beat) is voided with every wager returned and the reason recorded, then a
  fresh round starts; an open table without a round gets one.
- Early advance: when a player's decision completes the decision window
  (``make_decision`` reports that everyone has decided), the API calls
  ``advance_now`` instead of waiting for the deadline.
- Rounds repeat while the table is open: the services open the next round
  after the pause between rounds (a closed table stops at ``idle``).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from casino import log_context
from casino.audit import operator_actor, record_operator_action
from casino.errors import DomainError
from games.house import services
from games.house.models import HouseTable
from games.house.services.rounds import TableTick
from games.house.services.tables import close_table, open_table
from games.tables import pacing

log = logging.getLogger(__name__)

DEALER_ACTOR = "dealer"
SWEEPER_ACTOR = "dealer:sweeper"
# Phases in which nobody deals: the table waits for an operator or for nothing.
WAITING_PHASES = frozenset({"paused", "idle", ""})
IDLE_PHASES = frozenset({"idle", ""})
BETWEEN_ROUNDS = "between"


def schedule_tick(tick: TableTick | None) -> None:
    """Enqueue ``games.advance`` for ``tick``'s deadline, carrying its phase
    sequence, once the current transaction commits (``games.tables.pacing``)."""
    if tick is None:
        return
    pacing.schedule_advance(
        task=pacing.HOUSE_ADVANCE, table_id=tick.table_id, expected_seq=tick.phase_seq, deadline=tick.deadline
    )


def start(*, table_id: int, now: datetime | None = None) -> Any:
    """Open a round at an open table (no-op result if one runs) and schedule it."""
    with transaction.atomic():
        tick = services.start_table(table_id=table_id, now=now or timezone.now())
        schedule_tick(tick)
    return tick


def advance(*, table_id: int, expected_seq: int, now: datetime | None = None) -> Any:
    """Move the table on from phase ``expected_seq``; ``None`` when it had already moved."""
    log_context.bind(table=table_id)
    with transaction.atomic():
        tick = services.advance_table(table_id=table_id, expected_seq=expected_seq, now=now or timezone.now())
        schedule_tick(tick)
    if tick is not None:
        log_context.bind(game_number=tick.game_number)  # the task's own line (Celery's "succeeded") names the round
    return tick


def advance_now(*, table_id: int, expected_seq: int) -> None:
    """Early advance (everyone has decided): enqueue the advance for now, on commit."""
    pacing.advance_now(task=pacing.HOUSE_ADVANCE, table_id=table_id, expected_seq=expected_seq)


def void_gone_round(*, table: HouseTable, now: datetime) -> None:
    """Void the table's round because its dealer has been gone too long; the next
    round follows after the pause between rounds."""
    overdue = (now - table.deadline).total_seconds() if table.deadline else 0.0
    reason = (
        f"dealer_gone: the round's dealer stopped for {overdue:.0f} s "
        f"(limit {settings.CASINO_DEALER_GONE_VOID_SECONDS:.0f} s); every wager is returned"
    )
    with transaction.atomic():
        tick = services.void_round(table_id=table.pk, actor=SWEEPER_ACTOR, reason=reason, now=now, automatic=True)
        schedule_tick(tick)
    log.warning("table %s: round voided: %s", table.code, reason)


def sweep(*, now: datetime | None = None) -> dict[str, int]:
    """The beat backstop (see module doc). Returns counts of what it did."""
    now = now or timezone.now()
    grace = timedelta(seconds=settings.CASINO_SWEEP_GRACE_SECONDS)
    gone = timedelta(seconds=settings.CASINO_DEALER_GONE_VOID_SECONDS)

    def step(table: HouseTable, done: dict[str, int]) -> None:
        with log_context.scope(table=table.pk):  # each table's lines name it, and only its lines
            table_step(table, done)

    def table_step(table: HouseTable, done: dict[str, int]) -> None:
        if table.phase in IDLE_PHASES:
            if table.is_open:
                start(table_id=table.pk, now=now)
                done["started"] += 1
            return
        if table.deadline is None or table.deadline >= now - grace:
            return
        if table.deadline < now - gone and table.phase != BETWEEN_ROUNDS:
            void_gone_round(table=table, now=now)
            done["voided"] += 1
        elif advance(table_id=table.pk, expected_seq=table.phase_seq, now=now) is not None:
            done["advanced"] += 1

    # Closed tables are swept too: a round in progress finishes, then the table idles.
    tables = HouseTable.objects.exclude(phase="paused").order_by("pk")
    return pacing.sweep(family="house", tables=tables, step=step, counts=("advanced", "voided", "started"))


def start_open_tables(*, now: datetime | None = None) -> int:
    """Deal at every open table that has no running round (``serve`` and worker start)."""
    started = 0
    idle = HouseTable.objects.filter(is_open=True, phase__in=IDLE_PHASES)
    for table_id in idle.values_list("pk", flat=True):
        try:
            start(table_id=table_id, now=now)
            started += 1
        except DomainError as exc:
            log.info("start_open_tables: table %s: %s", table_id, exc.code)
    return started


# --- operator: malfunction handling (RULES.md, "Malfunction voids all pays and play") -------


def operator_round_control(
    *, table_id: int, operator: Any, action: str, reason: str = "", round_id: str | None = None,
    now: datetime | None = None,
) -> Any:  # fmt: skip
    """An operator pauses, resumes or voids the table's round (``action``), and the
    ``operator.action`` (``round.<action>``, the operator's identity, the reason)
    is recorded in the same transaction. Pause: players see ``house_round.paused``
    with the reason and no deadline runs. Resume: the time it had left, its
    deadline scheduled. Void: every wager returned, nothing paid, the next round
    scheduled. ``round_id``: refuse (``round_not_current``) unless that round is
    still the table's. Used by the admin site and the operator REST API alike."""
    actor, now = operator_actor(operator), now or timezone.now()
    with transaction.atomic():
        table = HouseTable.objects.filter(pk=table_id).values_list("code", "current_round_id").first()
        code, current = table if table is not None else ("", "")
        current = current or ""
        if round_id is not None and current != round_id:
            raise DomainError("this round is no longer the table's current round", code="round_not_current")
        if action == "pause":
            tick = services.pause_round(table_id=table_id, actor=actor, reason=reason, now=now)
        elif action == "resume":
            tick = services.resume_round(table_id=table_id, actor=actor, now=now)
        elif action == "void":
            tick = services.void_round(table_id=table_id, actor=actor, reason=reason, now=now)
        else:
            raise ValueError(f"unknown round control {action!r}")
        if action != "pause":
            schedule_tick(tick)
        record_operator_action(
            operator=operator, action=f"round.{action}", target=f"round:{current}", reason=reason,
            details={"table": code, "round_id": current}, metadata={"table_id": table_id},
        )  # fmt: skip
    return tick


# --- operator: open and close a table (docs/compliance.md, "Tables") ----------------------------


def operator_open(*, table_id: int, operator: Any, now: datetime | None = None) -> Any:
    """Open the table and deal its first round now (``table.open`` event); the dealer
    loop then repeats rounds while it stays open."""
    with transaction.atomic():
        tick = open_table(table_id=table_id, operator=operator, now=now or timezone.now())
        schedule_tick(tick)
    return tick


def operator_close(*, table_id: int, operator: Any, now: datetime | None = None) -> Any:
    """Close the table (``table.close`` event): the round in progress finishes on its
    schedule; after it the table goes idle and no new round opens."""
    with transaction.atomic():
        return close_table(table_id=table_id, operator=operator, now=now or timezone.now())
