"""A smoke slice of ``bench ledger`` (docs/benchmarks.md): the benchmark still runs
end to end on a scratch PostgreSQL database, with money legs and event MACs, and
its closing ``verify_ledger`` finds nothing. Tiny sizes: this checks that it
runs, never how fast (speed is never a test here)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_bench_ledger_runs_clean_on_a_scratch_database() -> None:
    out = StringIO()
    options = ["writers=1", "seconds=0.3", "rounds=1", "players=20", "replay_events=300"]
    call_command("bench", "ledger", *[arg for option in options for arg in ("-o", option)], stdout=out)
    figures = json.loads(out.getvalue().strip().splitlines()[-1])
    assert figures["settle_rows"] > 0
    assert figures["single_commits_per_s"] > 0
    assert {"single_ratio", "settle_ratio", "replay_ratio", "replay_growth"} <= figures.keys()
    for ratio in (
        "single_ratio",
        "settle_ratio",
        "replay_ratio",
        "replay_growth",
    ):  # verify_ledger found nothing, or it raised
        assert isinstance(figures[ratio], int | float), ratio
    # Replay growth: 300 events against 30, both replayed and timed (never judged here).
    assert (figures["replay_events"], figures["replay_events_small"]) == (300, 30)
    assert isinstance(figures["replay_seconds_small"], int | float)
