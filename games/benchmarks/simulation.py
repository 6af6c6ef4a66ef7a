"""``manage.py bench simulate_faults``: the fault simulator's throughput on
PostgreSQL (issue #24 part 2: the target is 1,000 steps/s or more).

One run of ``manage.py simulate_faults`` (the poker family) in a scratch
database: ``steps`` steps of seed ``seed``, with the faults and the checks of
a normal run (the cheap invariants after every step, ``verify_ledger`` and the
replay every ``full_every`` steps). Printed: ``steps_per_s`` (the steps' loop,
checks included; the setup and the final drain not) and ``rounds_per_s``
(the poker hands dealt per second of the loop).
"""

from __future__ import annotations

from typing import Any

from django.db import connection

from casino.bench import BenchResult, Writer, benchmark


@benchmark("simulate_faults")
def bench_simulate_faults(
    *, out: Writer, seed: int = 1, steps: int = 2000, full_every: int = 50, **options: Any
) -> BenchResult:
    """The fault simulator's steps/s and hands/s on PostgreSQL (target: 1,000 steps/s)."""
    if connection.vendor != "postgresql":
        raise RuntimeError("bench simulate_faults needs PostgreSQL (set DATABASE_URL)")
    from games.management.commands.simulate_faults import simulate

    report = simulate(seed=seed, steps=steps, full_every=full_every)
    loop_seconds = steps / report.steps_per_s if report.steps_per_s else 0.0
    figures = {
        "seed": seed,
        "steps": steps,
        "full_every": full_every,
        "steps_per_s": report.steps_per_s,
        "rounds_per_s": round(report.hands / loop_seconds, 1) if loop_seconds else None,
        "hands": report.hands,
        "faults_injected": report.faults_injected,
        "violations": len(report.violations),
        "target_steps_per_s": 1000,
    }
    rows = [[name, value] for name, value in figures.items()]
    return BenchResult("Fault simulator (poker family, PostgreSQL)", ["figure", "value"], rows, figures)
