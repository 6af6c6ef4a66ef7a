"""What both table families of the simulator (``games.simulation.house``,
``.poker``) do alike: their clients' commands (run, sent again with the same
idempotency key, keyed per step), the dealer's tasks, the dealer run dry at the end of a drain, the
cheap check that no table is overdue and a violation's evidence."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, ClassVar

from django.conf import settings
from django.db import models

from games.simulation.core import SWEEP, Simulator, Task, sweep_outcome, task_label
from ledger.services import read_stream


@dataclass
class Command:
    """A client's command: who sends it, what the trace calls it, and its call."""

    who: str
    what: str
    body: Callable[[], Any]


class TableClients:
    """Mixed into a family (a dataclass that declares ``name``, ``tables``,
    ``last`` and ``keys``; ``KEY_PREFIX`` names its idempotency keys,
    ``ADVANCE`` its dealer's task)."""

    KEY_PREFIX: ClassVar[str]
    ADVANCE: ClassVar[str]
    name: str
    tables: list[int]
    last: Command | None
    keys: int

    def t(self, table_id: int) -> str:
        raise NotImplementedError

    def sweep(self, sim: Simulator) -> Mapping[str, int]:
        """The family's part of the beat's sweep (its counts)."""
        raise NotImplementedError

    def advance(self, sim: Simulator, table_id: int, seq: int) -> Any:
        """The family's ``ADVANCE`` task of a table (``None``: stale)."""
        raise NotImplementedError

    def task_label(self, task: Task) -> str:
        return task_label(task, self.t)

    def run_task(self, sim: Simulator, task: Task) -> Any:
        if task.name == SWEEP:
            return sweep_outcome(sim, self.sweep(sim), self.name)
        if task.name != self.ADVANCE:
            raise ValueError(f"unknown task {task.name}")
        table, seq = task.args
        return "moved" if self.advance(sim, table, seq) is not None else "stale"

    def key(self, sim: Simulator) -> str:
        self.keys += 1
        # The step's number in the key: a replayed subset of the steps never reuses another step's key.
        return f"{self.KEY_PREFIX}:{sim.namespace}:{sim.step}:{self.keys}"

    def run(self, sim: Simulator, command: Command) -> None:
        self.last = command
        sim.execute(command.who, command.what, command.body)

    def run_if_made(
        self, sim: Simulator, roll: float, below: float, make: Callable[[Simulator], Command | None]
    ) -> float | None:
        """With ``roll < below``: run the command ``make`` makes and return ``None``
        (or, if it makes none, go on with a roll drawn again above ``below``);
        otherwise go on with ``roll``."""
        if roll >= below:
            return roll
        command = make(sim)
        if command is None:
            return sim.rng.uniform(below, 1.0)
        self.run(sim, command)
        return None

    def repeat_last(self, sim: Simulator) -> None:
        """The last command again (a client retrying: same idempotency key); with
        none yet, time passes."""
        if self.last is not None:
            sim.execute(self.last.who, f"repeat {self.last.what}", self.last.body)
        else:
            sim.tick()

    def run_dealer_while(self, sim: Simulator, busy: Callable[[], list[str]]) -> list[str]:
        """The end of a drain: the dealer runs (ticks, beats, due tasks delivered
        with no fault) while ``busy()`` names something, for at most
        ``CASINO_DEALER_GONE_VOID_SECONDS`` and ten minutes of simulated time;
        what ``busy()`` names then."""
        limit = sim.now + timedelta(seconds=settings.CASINO_DEALER_GONE_VOID_SECONDS + 600)
        while busy() and sim.now < limit:
            sim.tick(1)
            sim.beat()
            due = sim.queue.due(sim.now)
            while due:
                sim.deliver(due, faults=False)
                due = sim.queue.due(sim.now)
        return busy()

    def overdue(
        self, sim: Simulator, cursor: Any, *, table: type[models.Model], current: str, paused: str
    ) -> list[tuple[str, str]]:
        """``bounded_end`` for each of the family's tables, not ``paused``, whose
        deadline is before ``sim.overdue_cutoff()`` (one plain query; ``current``:
        what the table plays, ``round`` or ``hand``, its ``current_<current>_id``)."""
        cutoff = sim.overdue_cutoff()  # None: no table can be overdue yet (and "deadline < NULL" matches none)
        ids = ", ".join(["%s"] * len(self.tables))
        cursor.execute(
            f"SELECT id, phase, current_{current}_id, deadline FROM {table._meta.db_table} "
            f"WHERE id IN ({ids}) AND deadline < %s AND phase <> %s ORDER BY id",
            [*self.tables, cutoff, paused],
        )
        return [
            ("bounded_end", f"table {self.t(table_id)} ({phase}, {current} {playing}) overdue since {deadline}")
            for table_id, phase, playing, deadline in cursor.fetchall()
        ]

    def current_events(self, *, table: type[models.Model], current: str, stream: Callable[[str], str]) -> list[str]:
        """A violation's evidence: the last events of the ``current`` round or hand
        (``stream`` names its stream) at every table of the family."""
        lines: list[str] = []
        for row in table._default_manager.filter(pk__in=self.tables).order_by("pk"):
            playing = getattr(row, f"current_{current}_id")
            if not playing:
                continue
            events = read_stream(stream_id=stream(playing))[-12:]
            lines.append(f"{current} {playing} at {self.t(row.pk)} (last {len(events)} events):")
            lines += [f"  v{e.version} {e.type} {dict(e.data)}"[:200] for e in events]
        return lines
