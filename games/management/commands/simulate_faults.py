"""``manage.py simulate_faults --seed N --steps K [--family house|poker|all]``:
the deterministic fault simulator (docs/simulation.md). Its last line is JSON;
a violation prints the seed, the step, the invariant and the minimised trace
(with the ``--only-steps`` line that replays it), and the command exits
non-zero. Runs in a scratch database (created and dropped) unless
``--in-place``; refuses production settings."""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DEFAULT_DB_ALIAS, connection, connections

from games.simulation.core import PLANTS, SimulationRefused, Simulator, assert_allowed
from games.simulation.families import FAMILIES


@contextmanager
def scratch() -> Iterator[None]:
    """A fresh, migrated database for the run (PostgreSQL: a database of its
    own; SQLite: a temporary file), dropped afterwards."""
    if connection.vendor == "postgresql":
        from ledger.benchmarks import scratch_database

        with scratch_database():
            yield
        return
    original = connection.settings_dict["NAME"]
    handle, path = tempfile.mkstemp(suffix=".sqlite3", prefix="simulate-faults-")
    os.close(handle)
    connections.close_all()
    connection.settings_dict["NAME"] = path
    try:
        call_command("migrate", database=DEFAULT_DB_ALIAS, verbosity=0)
        yield
    finally:
        connections.close_all()
        connection.settings_dict["NAME"] = original
        os.unlink(path)


def simulate(*, family: str = "all", in_place: bool = False, **options: Any) -> Any:
    """One run (``Simulator`` options), in a scratch database unless ``in_place``."""
    assert_allowed()
    if in_place:
        return Simulator(FAMILIES[family](), **options).run()
    with scratch():
        return Simulator(FAMILIES[family](), **options).run()


def _steps(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of step numbers: {text!r}") from None


class Command(BaseCommand):
    help = "Run the deterministic fault simulator; the last line is JSON; non-zero exit on a violation."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--seed", type=int, required=True)
        parser.add_argument("--steps", type=int, default=1000)
        parser.add_argument("--family", choices=sorted(FAMILIES), default="all")
        parser.add_argument("--fault-rate", type=float, default=0.08, help="share of steps with an injected fault")
        parser.add_argument("--full-every", type=int, default=50,
                            help="verify_ledger and the replay every N steps (1: after every step)")  # fmt: skip
        parser.add_argument("--namespace", default="S", help="prefix of the run's table codes and user names")
        parser.add_argument("--plant", choices=PLANTS, help="a deliberate bug, to see it caught")
        parser.add_argument("--plant-step", type=int, default=1)
        parser.add_argument("--only-steps", type=_steps, default=None,
                            help="run only these steps (comma-separated), e.g. a minimised trace's")  # fmt: skip
        parser.add_argument("--minimize-seconds", type=float, default=60.0,
                            help="on a violation, minimise the trace for up to this long (0: off; then the run "
                                 "is not sandboxed and a lost connection really closes it)")  # fmt: skip
        parser.add_argument("--in-place", action="store_true", help="run on the configured database (tests)")

    def handle(self, *args: Any, **options: Any) -> None:
        only = options["only_steps"]
        if only is not None and not all(1 <= step <= options["steps"] for step in only):
            raise CommandError(f"--only-steps must lie within 1..{options['steps']}")
        try:
            report = simulate(
                family=options["family"], in_place=options["in_place"], seed=options["seed"],
                steps=options["steps"], namespace=options["namespace"], fault_rate=options["fault_rate"],
                full_every=options["full_every"], plant=options["plant"], plant_step=options["plant_step"],
                only_steps=options["only_steps"], sandbox=options["minimize_seconds"] > 0,
                minimize_seconds=options["minimize_seconds"],
            )  # fmt: skip
        except SimulationRefused as exc:
            raise CommandError(str(exc)) from None
        for line in report.lines:
            self.stdout.write(line)
        self.stdout.write(report.json())
        if report.violations:
            raise SystemExit(1)
