"""The simulator's family-agnostic parts: the clock, the task queue, the fault
injector, the trace, the run loop and its report (docs/simulation.md).

Everything random a step does comes from its own generators, derived from
``(seed, step)`` (``Simulator.begin_step``): the schedule's choices from
``random.Random(f"{seed}:{step}")`` and the decks from a ``SeededRandomSource``
of ``f"{seed}:{step}:deck"``. A run is reproducible from its seed and step
count, and removing steps leaves the other steps' draws as they were: the
minimiser (``Simulator.minimise``, delta debugging) replays subsets of the
steps (``only_steps``) to find a short trace that still shows a violation.

``sandbox``: the whole run is one transaction, rolled back at the end (every
service transaction is a savepoint in it; the enqueues a commit would send are
sent when the step's savepoint is released). The database is then as before the
run, so the minimiser's replays start from the same clean state.
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import json
import logging
import random
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from django.conf import settings
from django.db import DatabaseError, OperationalError, connection, transaction

from casino.errors import DomainError
from games.cards.shuffle import SeededRandomSource
from games.tables import pacing

#: The simulated clock starts in the past: presence (``games.tables.presence.absent``)
#: reads no later than the wall clock, so the simulated time must stay behind it.
START = datetime(2020, 1, 1, 12, 0, tzinfo=UTC)
SWEEP = "sweep"


class SimulationRefused(RuntimeError):
    """The simulator does not run with production settings."""


def task_label(task: Task, table_name: Callable[[int], str]) -> str:
    """A dealer task as the trace shows it: ``sweep`` or ``advance <table> seq <n>``."""
    if task.name == SWEEP:
        return "sweep"
    table, seq = task.args
    return f"advance {table_name(table)} seq {seq}"


def sweep_outcome(sim: Simulator, done: Mapping[str, int], family: str) -> str:
    """The sweep's counts for the trace; a table step that failed with no fault
    injected is a violation (the sweep logs and swallows it)."""
    if done["failed"] and not sim.injector.fired:
        sim.violate("unexpected_exception", f"the {family} sweep failed at {done['failed']} table(s)")
    return ",".join(f"{k}={v}" for k, v in done.items() if v) or "nothing"


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
#: Where a settlement batch is interrupted (``ledger.services.batch``'s inner writes, in
#: their order: the events, the balances, the new holds, the legs): after the 1st-3rd of them.
BATCH_POINTS = (
    ("ledger.services.batch", "_insert_events"),
    ("ledger.services.batch", "apply_deltas"),
    ("ledger.services.batch", "_insert_holds"),
    ("ledger.services.batch", "_insert_legs"),
    ("ledger.services.small", "_insert_legs"),  # a poker step's batch of a handful of rows
)


class FaultInjector:
    """Wraps write functions (``(module, attribute)``) for the run: once armed
    with a kind and a count ``n``, the ``n``-th wrapped call of the step
    completes its writes and then fails: an exception, or the database
    connection closed under the transaction (a lost connection)."""

    def __init__(self, points: list[tuple[str, str]], *, sandboxed: bool = False) -> None:
        self.points = list(dict.fromkeys(list(points) + list(BATCH_POINTS)))
        #: In a sandboxed run the connection must stay open (closing it would lose
        #: the run's transaction): a lost connection is a ``DatabaseError`` raised
        #: after the writes instead, and the step's savepoint rolls them back.
        self.sandboxed = sandboxed
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
        batch = module_name in ("ledger.services.batch", "ledger.services.small")

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            result = real(*args, **kwargs)
            if self.kind is not None and (batch == (self.kind == INTERRUPTED_BATCH)):
                self.left -= 1
                if self.left == 0:
                    kind, self.kind, self.fired = self.kind, None, True
                    if kind == LOST_CONNECTION:
                        if self.sandboxed:
                            raise OperationalError("simulated lost_connection")
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
    """A game family the simulator drives (``games.simulation.poker``, ``.house``, ``.families``)."""

    name: str
    write_points: list[tuple[str, str]]
    #: The kind of ledger account ``--plant corrupt_balance`` moves.
    plant_account_kind: str

    def fresh(self) -> Family: ...
    def forget(self) -> None: ...
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
    #: The minimised steps (``Simulator.minimise``): ``None`` when not minimised.
    minimal_steps: list[int] | None = None
    minimal_trace: list[str] = field(default_factory=list)

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


@dataclass
class Prepared:
    """The simulator's side of the state right after a setup (``Simulator.prepare``)."""

    family: Family
    tasks: list[Task]
    order: int
    trace: list[str]


#: Plants (``--plant``): a deliberate bug, to see the checks catch it.
PLANTS = ("corrupt_balance", "release_hold")


class Simulator:
    """One run: ``Simulator(family, seed=..., steps=...).run()``.

    ``fault_rate``: the share of steps that get a fault injected; ``full_every``:
    the full checks (``verify_ledger``: hash chains, seals, projections against
    their rebuild; the streams' replay) every so many steps, and always at the end
    (the cheap ones run after every step); ``plant``: a deliberate bug (``PLANTS``)
    after step ``plant_step``, to see the checks catch it. ``only_steps``: run
    only these steps (each draws what it would have drawn in the whole run);
    ``sandbox``: run in one transaction rolled back at the end (module doc);
    ``minimize_seconds``: on a violation in a sandboxed run, minimise the steps
    for up to that long (0: not at all)."""

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
        only_steps: list[int] | None = None,
        sandbox: bool = False,
        minimize_seconds: float = 0.0,
        prepared: Prepared | None = None,
    ) -> None:
        self.family = family
        self.seed, self.steps = seed, steps
        self.namespace = namespace
        self.now = START
        self.queue = SimQueue(lambda: self.now)
        self.sandbox = sandbox
        self.injector = FaultInjector(family.write_points, sandboxed=sandbox)
        self.fault_rate, self.full_every, self.sweep_every = fault_rate, full_every, sweep_every
        self.plant, self.plant_step, self.trace_lines = plant, plant_step, trace_lines
        if plant is not None and plant not in PLANTS:
            raise ValueError(f"unknown plant {plant!r}")
        self.only_steps = sorted(set(only_steps)) if only_steps is not None else None
        if self.only_steps and not 1 <= self.only_steps[0] <= self.only_steps[-1] <= steps:
            raise ValueError(f"only_steps must lie within 1..{steps}")
        self.minimize_seconds = minimize_seconds
        self.prepared = prepared
        self.next_sweep = START
        self.dealer_back = START  # the end of the last outage
        self.begin_step(0)
        self.trace: list[str] = []
        self.executed: list[int] = []
        self.evidence: list[str] = []
        self.minimise_stats = (0, 0.0)  # replays, seconds
        self.report = Report(seed, steps, family.name)

    def begin_step(self, step: int) -> None:
        """Step ``step``'s own generators, derived from the seed and the step number
        only (string seeds are hashed with SHA-512: the same in every process)."""
        self.step = step
        self.rng = random.Random(f"{self.seed}:{step}")
        self.deck_rng = SeededRandomSource(f"{self.seed}:{step}:deck")

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
            result = self._body(body)
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
        finally:
            if self.sandbox:
                self.send_enqueues()
        return "ok" if result is None or result is True else str(result) if isinstance(result, str | int) else "ok"

    def _body(self, body: Callable[[], Any]) -> Any:
        if not self.sandbox:
            return body()
        # A savepoint of its own: whatever the body raises, its writes roll back
        # and the run's transaction stays usable (as a failed transaction would be
        # gone outside the sandbox).
        with transaction.atomic():
            return body()

    def send_enqueues(self) -> None:
        """Sandboxed: what the step's commits would have enqueued (their
        ``on_commit`` callbacks; those of rolled-back savepoints are gone already)."""
        pending, connection.run_on_commit = connection.run_on_commit, []
        for entry in pending:  # (savepoint ids, callback, robust)
            entry[1]()

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

    def overdue_cutoff(self) -> datetime | None:
        """A table (not paused) whose deadline is before this is overdue beyond the
        bound: ``CASINO_DEALER_GONE_VOID_SECONDS`` and 12 sweeps, counted from its
        deadline or from the end of the last outage, whichever is later (``None``:
        the dealer came back too recently for any table to be)."""
        cutoff = self.now - timedelta(seconds=settings.CASINO_DEALER_GONE_VOID_SECONDS + 12 * self.sweep_every)
        return cutoff if self.dealer_back < cutoff else None

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
        """The deliberate bug. ``corrupt_balance``: one account of the family's
        ``plant_account_kind`` (the first) moved by SQL, no transfer;
        ``release_hold``: the first pending hold marked voided by SQL, its money
        left in escrow (a hold resolved outside the round)."""
        with connection.cursor() as cursor:
            if self.plant == "release_hold":
                cursor.execute(
                    "UPDATE ledger_hold SET status = 'voided', posted_amount = 0 WHERE id = "
                    "(SELECT id FROM ledger_hold WHERE status = 'pending' ORDER BY opened_event_id LIMIT 1)"
                )
                what = "the first pending hold voided by SQL"
            else:
                cursor.execute(
                    "UPDATE ledger_account SET balance = balance + 1 WHERE id = "
                    "(SELECT MIN(id) FROM ledger_account WHERE kind = %s)",
                    [self.family.plant_account_kind],
                )
                what = f"a {self.family.plant_account_kind} account's balance +1 by SQL"
            changed = cursor.rowcount
        self.note("planted", self.plant or "", what if changed else "nothing to plant it on")

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
        elif self.rng.random() < 0.04:
            self.outage()
        else:
            self.tick()

    def outage(self) -> None:
        """No worker and no beat for longer than ``CASINO_DEALER_GONE_VOID_SECONDS``
        (a fault): the clock jumps; the rounds and hands overdue by then are the
        sweep's to void (dealer gone) when it runs again."""
        seconds = settings.CASINO_DEALER_GONE_VOID_SECONDS + 30
        self.report.faults_injected += 1
        self.tick(seconds)
        self.dealer_back = self.now
        self.note("queue", "outage", f"no worker, no beat for {seconds:g}s")

    def run(self) -> Report:
        assert_allowed()
        started = time.perf_counter()
        # The sweep logs every table step that failed, the dealer every round it voids: the
        # simulator counts and traces them itself (``Family.run_task``).
        quiet = [logging.getLogger(name) for name in ("games.tables.pacing", "games.house.services.dealer")]
        levels = [logger.level for logger in quiet]
        for logger in quiet:
            logger.setLevel(logging.CRITICAL)
        try:
            if self.sandbox:
                with transaction.atomic():
                    self._run(started)
                    transaction.set_rollback(True)
            else:
                self._run(started)
        finally:
            for logger, level in zip(quiet, levels, strict=True):
                logger.setLevel(level)
        if self.report.violations and self.sandbox and self.minimize_seconds > 0:
            self.minimise(self.report.violations[0])
        if self.report.violations:
            self.report.lines = self.violation_report()
        return self.report

    def _run(self, started: float) -> None:
        with pacing.redirect_scheduling(self.queue.sink), self.injector.installed(self.family.replacements(self)):
            self.set_up()
            steps = self.only_steps if self.only_steps is not None else range(1, self.steps + 1)
            last = steps[-1] if steps else 0
            for step in steps:
                self.begin_step(step)
                self.executed.append(step)
                self.one_step()
                if self.plant and self.step == self.plant_step:
                    self.plant_bug()
                # A subset's last step checks everything: a violation only the full checks
                # see stays visible when the step that would have run them is left out.
                full = self.full_every > 0 and (
                    step % self.full_every == 0 or (self.only_steps is not None and step == last)
                )
                self.check(full=full)
                if self.report.violations:
                    break
            loop_seconds = time.perf_counter() - started
            if not self.report.violations:
                self.begin_step(self.steps + 1)  # the drain
                self.family.drain(self)
                self.check(full=True)
            counts = self.family.counts()
            evidence = self.family.evidence(self, self.report.violations[0]) if self.report.violations else []
        self.evidence = evidence
        self.report.rounds = counts.get("rounds", 0)
        self.report.hands = counts.get("hands", 0)
        self.report.trace_digest = hashlib.sha256("\n".join(self.trace).encode()).hexdigest()[:16]
        self.report.elapsed_s = round(time.perf_counter() - started, 3)
        done = len(self.executed)
        self.report.steps_per_s = round(done / loop_seconds, 1) if loop_seconds else 0.0

    def set_up(self) -> None:
        """The family's setup (step 0), or, with ``prepared``, the state right after
        it (the database is there already: the minimiser's savepoint)."""
        if self.prepared is None:
            self.family.setup(self)
            if self.sandbox:
                self.send_enqueues()
            return
        self.family.forget()  # the in-process caches may hold states of a rolled-back replay
        self.queue.tasks, self.queue.order = copy.deepcopy(self.prepared.tasks), self.prepared.order
        self.trace = list(self.prepared.trace)

    # --- minimising the trace ---------------------------------------------------------------------

    def prepare(self) -> Prepared:
        """Set up once (sandboxed, in the caller's transaction) for the replays."""
        base = Simulator(self.family.fresh(), seed=self.seed, steps=self.steps, namespace=self.namespace,
                         sandbox=True)  # fmt: skip
        with pacing.redirect_scheduling(base.queue.sink), base.injector.installed(base.family.replacements(base)):
            base.set_up()
        return Prepared(base.family, base.queue.tasks, base.queue.order, base.trace)

    def replay(self, steps: list[int], prepared: Prepared | None = None) -> Simulator:
        """A sandboxed run of only ``steps``, with this run's seed and options
        (``prepared``: from the state right after the setup, see ``prepare``)."""
        family = copy.deepcopy(prepared.family) if prepared is not None else self.family.fresh()
        sim = Simulator(
            family, seed=self.seed, steps=self.steps, namespace=self.namespace,
            fault_rate=self.fault_rate, full_every=self.full_every, sweep_every=self.sweep_every,
            plant=self.plant, plant_step=self.plant_step, only_steps=steps, sandbox=True, prepared=prepared,
        )  # fmt: skip
        sim.run()
        return sim

    def minimise(self, violation: Violation) -> None:
        """Delta debugging (Zeller's ddmin) of the steps up to the violating one:
        remove chunks of steps, replay the rest from a clean state (sandboxed), and
        keep a candidate that still violates ``violation.invariant``; stops after
        ``minimize_seconds`` with the shortest found so far. Sets
        ``report.minimal_steps`` and ``report.minimal_trace``."""
        with transaction.atomic():  # the replays start from the setup's savepoint; all rolled back
            self._minimise(violation, self.prepare())
            transaction.set_rollback(True)

    def _minimise(self, violation: Violation, prepared: Prepared) -> None:
        deadline = time.monotonic() + self.minimize_seconds
        best: list[int] = [s for s in self.executed if s <= violation.step]
        best_trace: list[str] = []
        tried: dict[tuple[int, ...], bool] = {}

        def fails(candidate: list[int]) -> bool:
            nonlocal best_trace
            key = tuple(candidate)
            if key not in tried:
                if time.monotonic() > deadline:
                    return False
                sim = self.replay(candidate, prepared)
                tried[key] = any(v.invariant == violation.invariant for v in sim.report.violations)
                if tried[key] and len(candidate) < len(best):
                    best_trace = sim.trace
            return tried[key]

        n = 2
        while len(best) >= 2 and time.monotonic() < deadline:
            size = -(-len(best) // n)
            chunks = [best[i : i + size] for i in range(0, len(best), size)]
            for chunk in chunks:
                if fails(chunk):
                    best, n = chunk, 2
                    break
            else:
                for chunk in chunks:
                    rest = [s for s in best if s not in chunk]
                    if fails(rest):
                        best, n = rest, max(n - 1, 2)
                        break
                else:
                    if n >= len(best):
                        break
                    n = min(len(best), 2 * n)
        if not best_trace:  # nothing removed: the whole run up to the violation
            best_trace = list(self.trace)
        self.report.minimal_steps = best
        self.report.minimal_trace = best_trace
        self.minimise_stats = (len(tried), round(time.monotonic() - deadline + self.minimize_seconds, 1))

    def reproduce_command(self, steps: list[int] | None = None) -> str:
        planted = f" --plant {self.plant} --plant-step {self.plant_step}" if self.plant else ""
        only = f" --only-steps {','.join(map(str, steps))}" if steps is not None else ""
        return (
            f"manage.py simulate_faults --family {self.family.name} --seed {self.seed} --steps {self.steps}"
            f" --fault-rate {self.fault_rate} --full-every {self.full_every}{planted}{only}"
        )

    def violation_report(self) -> list[str]:
        first = self.report.violations[0]
        lines = [
            f"VIOLATION seed={self.seed} step={first.step} invariant={first.invariant}",
            *[f"  {v.invariant}: {v.message}" for v in self.report.violations[:10]],
        ]
        minimal = self.report.minimal_steps
        if minimal is not None:
            lines += [
                f"minimised trace ({len(minimal)} of the {len([s for s in self.executed if s <= first.step])} steps "
                f"up to step {first.step}; ddmin: {self.minimise_stats[0]} replays in {self.minimise_stats[1]} s, "
                "the same invariant still violated):",
                *[f"  {line}" for line in self.report.minimal_trace],
                f"replay: {self.reproduce_command(minimal)}",
            ]
        else:
            lines += [
                f"event trace (the last {self.trace_lines} simulator steps; not minimised):",
                *[f"  {line}" for line in self.trace[-self.trace_lines :]],
            ]
        lines += self.evidence
        lines.append(f"reproduce: {self.reproduce_command(self.only_steps)}")
        return lines
