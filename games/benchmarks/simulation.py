"""``manage.py bench simulate_faults``: the fault simulator's throughput on
PostgreSQL (issue #24 part 2: the target is 1,000 steps/s or more).

One run per family (``house``, ``poker``, ``all``) of ``manage.py
simulate_faults`` in one scratch database: ``steps`` steps of seed ``seed``,
with the faults and the checks of a normal run (the cheap invariants after
every step, ``verify_ledger`` and the streams' replay every ``full_every``
steps), sandboxed as the command runs by default (one transaction, rolled back
at the end, so the next family starts from the same empty database). Printed
per family: ``steps_per_s`` (the steps' loop, checks included; the setup and
the final drain not), ``rounds_per_s`` (house rounds opened per second of the
loop) and ``hands_per_s`` (poker hands dealt per second of the loop).
"""

from __future__ import annotations

from typing import Any

from django.db import connection

from casino.bench import BenchResult, Writer, benchmark

FAMILIES = ("house", "poker", "all")


@benchmark("simulate_faults")
def bench_simulate_faults(
    *, out: Writer, seed: int = 1, steps: int = 2000, full_every: int = 50, **options: Any
) -> BenchResult:
    """The fault simulator's steps/s, rounds/s and hands/s per family on PostgreSQL (target: 1,000 steps/s)."""
    if connection.vendor != "postgresql":
        raise RuntimeError("bench simulate_faults needs PostgreSQL (set DATABASE_URL)")
    from games.management.commands.simulate_faults import scratch
    from games.simulation.core import Simulator
    from games.simulation.families import FAMILIES as KINDS

    figures: dict[str, Any] = {"seed": seed, "steps": steps, "full_every": full_every, "target_steps_per_s": 1000}
    rows: list[list[Any]] = []
    with scratch():
        for family in FAMILIES:
            sim = Simulator(KINDS[family](), seed=seed, steps=steps, full_every=full_every, sandbox=True)
            report = sim.run()
            loop_seconds = steps / report.steps_per_s if report.steps_per_s else 0.0
            per_s = {
                "steps_per_s": report.steps_per_s,
                "rounds_per_s": round(report.rounds / loop_seconds, 2) if loop_seconds else None,
                "hands_per_s": round(report.hands / loop_seconds, 2) if loop_seconds else None,
            }
            counts = {"rounds": report.rounds, "hands": report.hands, "faults_injected": report.faults_injected,
                      "violations": len(report.violations)}  # fmt: skip
            figures[family] = per_s | counts
            rows.append([family, *per_s.values(), *counts.values()])
            out.write(f"{family}: {report.json()}\n")
    header = ["family", "steps/s", "rounds/s", "hands/s", "rounds", "hands", "faults", "violations"]
    return BenchResult("Fault simulator per family (PostgreSQL)", header, rows, figures)
