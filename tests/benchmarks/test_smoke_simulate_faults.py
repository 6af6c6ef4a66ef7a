"""A smoke slice of ``bench simulate_faults``: each family of the fault simulator
(house, poker, all) for a few steps in a scratch database, with its faults and its
checks (the invariants after every step; ``verify_ledger`` and the streams' replay
every ``full_every`` steps and at the end): no violation in any family."""

from __future__ import annotations

import pytest

from tests.benchmarks.smoke import assert_numeric, run_bench


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_bench_simulate_faults_runs_every_family_without_violations() -> None:
    figures = run_bench("simulate_faults", steps=80, full_every=40)
    for family in ("house", "poker", "all"):
        assert_numeric(figures[family], "steps_per_s")
        assert figures[family]["violations"] == 0, family
    assert figures["house"]["rounds"] > 0  # the house family played rounds ...
    assert figures["poker"]["hands"] > 0  # ... and the poker family dealt hands
