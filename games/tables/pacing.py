"""The one table clock, used by both game families (application layer).

A table of either family (house-banked ``HouseTable``, poker ``PokerTable``)
moves the same way (docs/live.md, "Dealer loop"; docs/poker.md, "Pacing"):

- every step is one transaction that locks the table row first
  (``lock_table``), so two dealer tasks or a dealer task and a player never
  interleave at one table;
- a step that sets a deadline bumps the table's phase sequence and enqueues
  the family's advance task for that deadline, carrying the sequence it
  expects, once the transaction commits (``schedule_advance``): a rolled-back
  step schedules nothing, and a stale or redelivered task finds the sequence
  moved and does nothing;
- the beat sweeper is the backstop for a lost task (``sweep``): it visits every
  table, each in isolation, and counts what it did;
- every round or hand gets a game number (``game_number``) unique across both
  families.

The families' own steps (what advancing a table means) stay in their wings;
this module knows only the clock.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

from django.db import models, transaction

from casino import metrics
from casino.errors import DomainError

log = logging.getLogger(__name__)

TableT = TypeVar("TableT", bound=models.Model)

# The families' advance tasks ("module:attribute"), imported when enqueued:
# the task modules import the services that call this module.
HOUSE_ADVANCE = "games.house.tasks:advance_table_task"
POKER_ADVANCE = "games.poker.tasks:advance_poker_table_task"
TOURNAMENT_ADVANCE = "games.poker.tasks:advance_tournament_task"


# --- game numbers ---------------------------------------------------------------------------------


#: The models whose rows carry a game number, and the field that holds it: each family registers
#: its rounds or hands at start-up (``games.apps``), so this shared clock imports no family.
_NUMBERED: list[tuple[type[models.Model], str]] = []


def register_game_numbers(model: type[models.Model], field: str) -> None:
    """Game numbers are unique across ``model``'s ``field`` too (idempotent)."""
    if (model, field) not in _NUMBERED:
        _NUMBERED.append((model, field))


def _taken(number: str) -> bool:
    """Whether a registered round or hand (a house round, a poker hand) already has this game number."""
    if not _NUMBERED:
        raise RuntimeError("no game-numbered model is registered (games.apps registers them at start-up)")
    return any(model._default_manager.filter(**{field: number}).exists() for model, field in _NUMBERED)


def game_number(*, table_code: str, now: datetime) -> str:
    """The game number of a round or hand a table starts at ``now``:
    ``CODE-YYYYMMDD-HHMMSS`` (GMT), then ``-2``, ``-3``... while that number is
    taken by a house round or a poker hand (RULES.md: unique across the
    installation; a house table and a poker table may share a code).

    Call while holding the table's row lock, in the transaction that records
    the round or hand: that serialises the table's own starts."""
    base = f"{table_code}-{now.astimezone(UTC):%Y%m%d-%H%M%S}"
    number, n = base, 1
    while _taken(number):
        n += 1
        number = f"{base}-{n}"
    return number


# --- the table row lock ---------------------------------------------------------------------------


def lock_table(model: type[TableT], table_id: int, *, missing: Callable[[], Exception] | None = None) -> TableT:
    """The table row, locked (``SELECT ... FOR UPDATE``) until the current
    transaction ends. Call inside ``transaction.atomic()``; lock the table
    before any other row of it (rounds, hands, seats) so every step takes the
    locks in one order. A table that does not exist (or an id that is not
    one) raises ``missing()`` when given, else ``model.DoesNotExist``."""
    try:
        return model._default_manager.select_for_update().get(pk=table_id)
    except (model.DoesNotExist, ValueError, TypeError):  # type: ignore[attr-defined]
        if missing is None:
            raise
        raise missing() from None


# --- tick scheduling ------------------------------------------------------------------------------


class AdvanceTask(Protocol):
    """A family's Celery task advancing one table from an expected phase sequence."""

    def apply_async(self, args: tuple[int, ...], eta: datetime | None = ...) -> Any: ...


def _task(path: str) -> AdvanceTask:
    module, _, name = path.partition(":")
    task: AdvanceTask = getattr(importlib.import_module(module), name)
    return task


def schedule_advance(*, task: str, table_id: int, expected_seq: int, deadline: datetime | None) -> None:
    """Enqueue ``task`` (``HOUSE_ADVANCE`` or ``POKER_ADVANCE``) with
    ``(table_id, expected_seq)`` for ``deadline`` once the current transaction
    commits (at once outside one; nothing if it rolls back). Nothing when
    ``deadline`` is ``None`` (the table waits: idle, paused).

    ``expected_seq`` is the phase sequence the step just recorded: the task
    does nothing if the table has moved on by the time it runs."""
    if deadline is None or scheduling_suppressed():
        return
    sink = _SINK.get()
    if sink is not None:
        transaction.on_commit(lambda: sink(task, (table_id, expected_seq), deadline))
        return

    def enqueue() -> None:
        _task(task).apply_async(args=(table_id, expected_seq), eta=deadline)

    transaction.on_commit(enqueue)


def phase_ended(*, family: str, phase: str, deadline: datetime | None, now: datetime) -> None:
    """The dealer is ending ``phase`` because its ``deadline`` passed (``now``):
    its lag (``casino_dealer_phase_lag_seconds``) is recorded once the step's
    transaction commits (a rolled-back step ended nothing)."""
    transaction.on_commit(lambda: metrics.phase_ended(family=family, phase=phase, deadline=deadline, now=now))


def advance_now(*, task: str, table_id: int, expected_seq: int) -> None:
    """Early advance (the step need not wait for its deadline, e.g. everyone has
    decided): enqueue ``task`` for now, once the current transaction commits."""
    if scheduling_suppressed():
        return
    sink = _SINK.get()
    if sink is not None:
        transaction.on_commit(lambda: sink(task, (table_id, expected_seq), None))
    else:
        transaction.on_commit(lambda: _task(task).apply_async(args=(table_id, expected_seq)))


def enqueue_on_commit(*, task: str, args: tuple[int, ...], eta: datetime | None = None) -> None:
    """Enqueue ``task`` (``"module:attribute"``, e.g. ``TOURNAMENT_ADVANCE``) with
    ``args`` once the current transaction commits, for ``eta`` (at once when
    ``None``); nothing if the transaction rolls back or, when it commits, inside
    ``suppress_scheduling``."""

    def enqueue() -> None:
        if scheduling_suppressed():
            return
        if eta is None:
            _task(task).apply_async(args=args)
        else:
            _task(task).apply_async(args=args, eta=eta)

    transaction.on_commit(enqueue)


_SUPPRESSED: contextvars.ContextVar[bool] = contextvars.ContextVar("pacing_suppressed", default=False)


def scheduling_suppressed() -> bool:
    """True inside ``suppress_scheduling``: nothing is enqueued."""
    return _SUPPRESSED.get()


@contextlib.contextmanager
def suppress_scheduling() -> Iterator[None]:
    """A deterministic driver (benchmarks, simulators) runs the dealer's steps
    itself, on its own clock: inside this block no step is enqueued to Celery."""
    token = _SUPPRESSED.set(True)
    try:
        yield
    finally:
        _SUPPRESSED.reset(token)


#: Where ``redirect_scheduling`` sends the enqueues: ``sink(task, (table_id, expected_seq), eta)``.
TaskSink = Callable[[str, tuple[int, int], datetime | None], None]
_SINK: contextvars.ContextVar[TaskSink | None] = contextvars.ContextVar("pacing_sink", default=None)


@contextlib.contextmanager
def redirect_scheduling(sink: TaskSink) -> Iterator[None]:
    """A simulator (``games.simulation``) that runs the tasks' bodies itself, in
    an order of its choosing: inside this block every enqueue goes to ``sink``
    instead of Celery, still only once the step's transaction commits (eta
    ``None``: at once)."""
    token = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(token)


# --- the sweep skeleton ---------------------------------------------------------------------------


def sweep(
    *,
    family: str,
    tables: Iterable[TableT],
    step: Callable[[TableT, dict[str, int]], None],
    counts: Sequence[str],
) -> dict[str, int]:
    """The beat backstop's loop: ``step(table, done)`` for every table of
    ``tables`` in order; ``step`` runs its own transactions and adds what it did
    to ``done`` (keys ``counts``). Returns ``done`` with ``failed`` added.

    One table never keeps the sweep from the others: a refused step
    (``DomainError``, e.g. an operator paused the table meanwhile) is logged and
    is not a failure; any other exception (a bug, a lost database connection)
    is logged and counted as ``failed``. Either way that table's step rolled
    back and the next sweep tries it again."""
    done = dict.fromkeys(counts, 0) | {"failed": 0}
    for table in tables:
        code = getattr(table, "code", table.pk)
        try:
            step(table, done)
        except DomainError as exc:
            log.info("%s sweep: table %s: %s (%s)", family, code, exc.code, exc.message)
        except Exception:
            log.exception("%s sweep: table %s failed", family, code)
            done["failed"] += 1
    return done
