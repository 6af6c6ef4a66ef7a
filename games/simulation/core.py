"""The simulator's family-agnostic parts: the clock, the task queue, the fault
injector, the trace, the run loop and its report (docs/simulation.md).

Everything random comes from one ``random.Random(seed)`` (and the decks from a
``SeededRandomSource`` of the same seed), in the order the steps ask for it, so
a run is reproducible from its seed and step count.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import random
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from django.conf import settings
from django.db import DatabaseError, connection

from casino.errors import DomainError
from games import pacing
from games.cards.shuffle import SeededRandomSource

#: The simulated clock starts in the past: presence (``games.presence.absent``)
#: reads no later than the wall clock, so the simulated time must stay behind it.
START = datetime(2020, 1, 1, 12, 0, tzinfo=UTC)
SWEEP = "sweep"


class SimulationRefused(RuntimeError):
    """The simulator does not run with production settings."""


def assert_allowed() -> None:
    """Refuse production settings (``CASINO_PRODUCTION``) and a build that did
    not allow the simulator (``CASINO_ALLOW_SIMULATOR``)."""
    if settings.PRODUCTION or not getattr(settings, "CASINO_ALLOW_SIMULATOR", False):
        raise SimulationRefused(
            "simulate_faults is a development tool: it refuses CASINO_PRODUCTION and needs CASINO_ALLOW_SIMULATOR"
        )


class SimulatedFault(Exception):
    """An exception injected in the middle of a step, after some of its writes."""


@dataclass(order=True)
class Task:
    eta: datetime
    order: int
    name: str = field(compare=False)
    args: tuple[int, ...] = field(compare=False, default=())


class SimQueue:
    """The simulated task queue: ``pacing.redirect_scheduling`` sends it every
    enqueue (on commit); the run loop picks which due task runs, and may drop,
    delay or redeliver it."""

    def __init__(self, clock: Callable[[], datetime]) -> None:
        self.tasks: list[Task] = []
        self.clock = clock
        self.order = 0

    def push(self, name: str, args: tuple[int, ...], eta: datetime | None) -> None:
        self.order += 1
        self.tasks.append(Task(eta or self.clock(), self.order, name, args))

    def sink(self, task: str, args: tuple[int, int], eta: datetime | None) -> None:
        self.push(task, tuple(args), eta)

    def due(self, now: datetime) -> list[Task]:
        return sorted(t for t in self.tasks if t.eta <= now)

    def take(self, task: Task) -> None:
        self.tasks.remove(task)

    def pending(self, name: str) -> bool:
        return any(t.name == name for t in self.tasks)


#: Fault kinds injected in a step (the queue's own: drop, delay, redelivery).
EXCEPTION, LOST_CONNECTION, INTERRUPTED_BATCH = "exception", "lost_connection", "interrupted_batch"
#: Where a settlement batch is interrupted (``ledger.services.batch``'s inner writes).
BATCH_POINTS = (("ledger.services.batch", "_insert_events"), ("ledger.services.batch", "_insert_legs"))


class FaultInjector:
    """Wraps write functions (``(module, attribute)``) for the run: once armed
    with a kind and a count ``n``, the ``n``-th wrapped call of the step
    completes its writes and then fails: an exception, or the database
    connection closed under the transaction (a lost connection)."""

    def __init__(self, points: list[tuple[str, str]]) -> None:
        self.points = list(points) + list(BATCH_POINTS)
        self.kind: str | None = None
        self.left = 0
        self.fired = False
        self._saved: list[tuple[Any, str, Any]] = []

    @contextmanager
    def installed(self, replacements: dict[tuple[str, str], Any] | None = None) -> Iterator[None]:
        for module_name, name in self.points:
            module = importlib.import_module(module_name)
            real = getattr(module, name)
            self._saved.append((module, name, real))
            setattr(module, name, self._wrap(module_name, real))
        for (module_name, name), value in (replacements or {}).items():
            module = importlib.import_module(module_name)
            self._saved.append((module, name, getattr(module, name)))
            setattr(module, name, value)
        try:
            yield
        finally:
            for module, name, real in reversed(self._saved):
                setattr(module, name, real)
            self._saved.clear()

    def _wrap(self, module_name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        batch = module_name == "ledger.services.batch"

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            result = real(*args, **kwargs)
            if self.kind is not None and (batch == (self.kind == INTERRUPTED_BATCH)):
                self.left -= 1
                if self.left == 0:
                    kind, self.kind, self.fired = self.kind, None, True
                    if kind == LOST_CONNECTION:
                        connection.close()  # under the open transaction: it is rolled back
                    raise SimulatedFault(f"simulated {kind}")
            return result

        return wrapper

    def arm(self, kind: str, after: int) -> None:
        self.kind, self.left, self.fired = kind, after, False

    def disarm(self) -> bool:
        """Whether the armed fault fired (and the injector is quiet again)."""
        fired, self.kind, self.fired = self.fired, None, False
        return fired


@dataclass
class Violation:
    step: int
    invariant: str
    message: str


class Family(Protocol):
    """A game family the simulator drives (``games.simulation.poker``)."""

    name: str
    write_points: list[tuple[str, str]]

    def replacements(self, sim: Simulator) -> dict[tuple[str, str], Any]: ...
    def setup(self, sim: Simulator) -> None: ...
    def client_step(self, sim: Simulator) -> None: ...
    def operator_step(self, sim: Simulator) -> None: ...
    def run_task(self, sim: Simulator, task: Task) -> Any: ...
    def task_label(self, task: Task) -> str: ...
    def on_tick(self, sim: Simulator) -> None: ...
    def drain(self, sim: Simulator) -> None: ...
    def fingerprint(self) -> tuple[Any, ...]: ...
    def check(self, sim: Simulator, *, full: bool) -> list[tuple[str, str]]: ...
    def counts(self) -> dict[str, int]: ...
    def evidence(self, sim: Simulator, violation: Violation) -> list[str]: ...


@dataclass
class Report:
    seed: int
    steps: int
    family: str
    rounds: int = 0
    hands: int = 0
    faults_injected: int = 0
    violations: list[Violation] = field(default_factory=list)
    trace_digest: str = ""
    elapsed_s: float = 0.0
    steps_per_s: float = 0.0
    lines: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """The last line's JSON: everything but ``elapsed_s`` and ``steps_per_s``
        is the same for the same seed and steps."""
        return {
            "seed": self.seed, "steps": self.steps, "family": self.family, "rounds": self.rounds,
            "hands": self.hands, "faults_injected": self.faults_injected, "violations": len(self.violations),
            "invariants_violated": sorted({v.invariant for v in self.violations}),
            "trace_digest": self.trace_digest, "elapsed_s": self.elapsed_s, "steps_per_s": self.steps_per_s,
        }  # fmt: skip

    def json(self) -> str:
        return json.dumps(self.summary(), sort_keys=False)


TIMINGS = ("elapsed_s", "steps_per_s")


class Simulator:
    """One run: ``Simulator(family, seed=..., steps=...).run()``.

    ``fault_rate``: the share of steps that get a fault injected; ``full_every``:
    the full checks (``verify_ledger``: hash chains, seals, projections against
    their rebuild; the hands' replay) every so many steps, and always at the end
    (the cheap ones run after every step); ``plant``: a deliberate bug
    (``"corrupt_balance"``) at step ``plant_step``, to see the checks catch it."""

    def __init__(
        self,
        family: Family,
        *,
        seed: int,
        steps: int,
        namespace: str = "S",
        fault_rate: float = 0.08,
        full_every: int = 50,
        sweep_every: float = 5.0,
        plant: str | None = None,
        plant_step: int = 0,
        trace_lines: int = 40,
    ) -> None:
        self.family = family
        self.seed, self.steps = seed, steps
        self.namespace = namespace
        self.rng = random.Random(seed)
        self.deck_rng = SeededRandomSource(seed)
        self.now = START
        self.queue = SimQueue(lambda: self.now)
        self.injector = FaultInjector(family.write_points)
        self.fault_rate, self.full_every, self.sweep_every = fault_rate, full_every, sweep_every
        self.plant, self.plant_step, self.trace_lines = plant, plant_step, trace_lines
        self.next_sweep = START
        self.step = 0
        self.trace: list[str] = []
        self.report = Report(seed, steps, family.name)

    # --- the trace ------------------------------------------------------------------------------

    def note(self, who: str, what: str, outcome: str) -> None:
        seconds = (self.now - START).total_seconds()
        self.trace.append(f"#{self.step} t+{seconds:g}s {who}: {what} -> {outcome}")

    # --- running one action ---------------------------------------------------------------------

    def execute(self, who: str, what: str, body: Callable[[], Any]) -> str:
        """Run one step's ``body`` (one service call: one transaction), maybe with
        a fault: the failed attempt must leave nothing behind, and the step is
        retried (as a worker or a client would) and must then succeed or be refused
        as it would have been."""
        kind = None
        if self.rng.random() < self.fault_rate:
            kind = self.rng.choice((EXCEPTION, LOST_CONNECTION, INTERRUPTED_BATCH))
        if kind is None:
            outcome = self._call(body)
            self.note(who, what, outcome)
            return outcome
        before = self.fingerprint()
        self.injector.arm(kind, self.rng.randint(1, 3))
        try:
            outcome = self._call(body, faulty=True)
        finally:
            fired = self.injector.disarm()
        if not fired:  # fewer writes than the fault waited for
            self.note(who, what, outcome)
            return outcome
        self.report.faults_injected += 1
        if outcome != "faulted":  # the step caught it itself (the sweep: that table's step rolled back)
            self.note(who, what, f"{outcome} ({kind} absorbed)")
            return outcome
        after = self.fingerprint()
        if after != before:
            self.violate("atomic_step", f"{who}: {what}: a failed attempt ({kind}) left writes: {before} -> {after}")
        self.note(who, what, f"{kind}, retried")
        outcome = self._call(body)
        self.note(who, what, outcome)
        return outcome

    def _call(self, body: Callable[[], Any], *, faulty: bool = False) -> str:
        try:
            result = body()
        except DomainError as exc:
            return f"refused {exc.code}"
        except (SimulatedFault, DatabaseError) as exc:
            if faulty and self.injector.fired:
                return "faulted"
            self.violate("unexpected_exception", "".join(traceback.format_exception(exc)).strip())
            return f"error {type(exc).__name__}"
        except Exception as exc:  # a bug in the services: report it
            self.violate("unexpected_exception", "".join(traceback.format_exception(exc)).strip())
            return f"error {type(exc).__name__}"
        return "ok" if result is None or result is True else str(result) if isinstance(result, str | int) else "ok"

    # --- the queue ------------------------------------------------------------------------------

    def beat(self) -> None:
        """The beat schedules the sweeper every ``sweep_every`` seconds (one at a time)."""
        if self.now >= self.next_sweep:
            if not self.queue.pending(SWEEP):
                self.queue.push(SWEEP, (), self.next_sweep)
            while self.next_sweep <= self.now:
                self.next_sweep += timedelta(seconds=self.sweep_every)

    def deliver(self, due: list[Task], *, faults: bool = True) -> None:
        """Run one due task, chosen by the seed (reordering), or lose, delay or redeliver it."""
        task = self.rng.choice(due) if faults else due[0]
        self.queue.take(task)
        label = self.family.task_label(task)
        roll = self.rng.random() if faults else 1.0
        if roll < 0.04:
            self.report.faults_injected += 1
            self.note("queue", label, "dropped")
            return
        if roll < 0.08:
            self.report.faults_injected += 1
            delay = self.rng.choice((1, 2, 5, 15))
            self.queue.push(task.name, task.args, self.now + timedelta(seconds=delay))
            self.note("queue", label, f"delayed {delay}s")
            return
        if faults:
            self.execute("worker", label, lambda: self.family.run_task(self, task))
        else:
            self.note("worker", label, self._call(lambda: self.family.run_task(self, task)))
        if roll < 0.13:  # the worker died after the commit, before the ack: delivered again
            self.report.faults_injected += 1
            self.queue.push(task.name, task.args, self.now + timedelta(seconds=self.rng.choice((0, 1, 3))))
            self.note("queue", label, "redelivered (worker died before ack)")

    def tick(self, seconds: float | None = None) -> None:
        seconds = seconds if seconds is not None else self.rng.choice((0.5, 1, 2, 3, 5, 8, 13, 30))
        self.now += timedelta(seconds=seconds)
        self.family.on_tick(self)

    # --- checks -----------------------------------------------------------------------------------

    def violate(self, invariant: str, message: str) -> None:
        self.report.violations.append(Violation(self.step, invariant, message))

    def fingerprint(self) -> tuple[Any, ...]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT COUNT(*), COALESCE(MAX(id), 0) FROM ledger_event")
            events = tuple(cursor.fetchone())
            cursor.execute("SELECT COUNT(*), COALESCE(SUM(balance * id), 0) FROM ledger_account")
            accounts = tuple(cursor.fetchone())
        return (events, accounts, self.family.fingerprint())

    def check(self, *, full: bool) -> None:
        from games.simulation import invariants

        for invariant, message in invariants.ledger_checks(full=full) + self.family.check(self, full=full):
            self.violate(invariant, message)

    def plant_bug(self) -> None:
        """The deliberate bug: one poker seat account's balance moved by SQL, no transfer."""
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE ledger_account SET balance = balance + 1 WHERE id = "
                "(SELECT MIN(id) FROM ledger_account WHERE kind = 'poker_seat')"
            )
        self.note("planted", self.plant or "", "a seat account's balance +1 by SQL")

    # --- the run ----------------------------------------------------------------------------------

    def one_step(self) -> None:
        self.beat()
        due = self.queue.due(self.now)
        roll = self.rng.random()
        if due and roll < 0.4:
            self.deliver(due)
        elif roll < 0.85:
            self.family.client_step(self)
        elif roll < 0.89:
            self.family.operator_step(self)
        else:
            self.tick()

    def run(self) -> Report:
        assert_allowed()
        started = time.perf_counter()
        # The sweep logs every table step that failed; the simulator counts them itself (``Family.run_task``).
        quiet = logging.getLogger("games.pacing")
        level, quiet.level = quiet.level, logging.CRITICAL
        try:
            self._run(started)
        finally:
            quiet.setLevel(level)
        return self.report

    def _run(self, started: float) -> None:
        with pacing.redirect_scheduling(self.queue.sink), self.injector.installed(self.family.replacements(self)):
            self.family.setup(self)
            for step in range(1, self.steps + 1):
                self.step = step
                self.one_step()
                if self.plant and self.step == self.plant_step:
                    self.plant_bug()
                self.check(full=self.full_every > 0 and self.step % self.full_every == 0)
                if self.report.violations:
                    break
            loop_seconds = time.perf_counter() - started
            if not self.report.violations:
                self.step = self.steps + 1  # the drain
                self.family.drain(self)
                self.check(full=True)
        counts = self.family.counts()
        self.report.rounds = counts.get("rounds", 0)
        self.report.hands = counts.get("hands", 0)
        self.report.trace_digest = hashlib.sha256("\n".join(self.trace).encode()).hexdigest()[:16]
        self.report.elapsed_s = round(time.perf_counter() - started, 3)
        self.report.steps_per_s = round(min(self.step, self.steps) / loop_seconds, 1) if loop_seconds else 0.0
        if self.report.violations:
            self.report.lines = self.violation_report()

    def violation_report(self) -> list[str]:
        first = self.report.violations[0]
        lines = [
            f"VIOLATION seed={self.seed} step={first.step} invariant={first.invariant}",
            *[f"  {v.invariant}: {v.message}" for v in self.report.violations[:10]],
            f"event trace (the last {self.trace_lines} simulator steps; not minimised):",
            *[f"  {line}" for line in self.trace[-self.trace_lines :]],
        ]
        lines += self.family.evidence(self, first)
        planted = f" --plant {self.plant} --plant-step {self.plant_step}" if self.plant else ""
        lines.append(
            f"reproduce: manage.py simulate_faults --family {self.family.name} --seed {self.seed} --steps {self.steps}"
            f" --fault-rate {self.fault_rate} --full-every {self.full_every}{planted}"
        )
        return lines
