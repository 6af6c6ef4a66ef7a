"""A smoke slice of ``bench fanout`` (docs/benchmarks.md): the benchmark still runs
end to end against a real uvicorn on a scratch PostgreSQL database and Redis,
with its bare broadcast peer and its never-reading clients, prints every figure
of issue 39 as numbers, and the server closed every never-reading client within
the run. Tiny sizes: this checks that it runs, never how fast."""

from __future__ import annotations

import json
import math
from io import StringIO

import pytest
from django.core.management import call_command

KEYS = ("clients", "p99_ms", "bare_p99_ms", "fanout_p99_ratio", "slow_clients", "p99_ms_with_slow",
        "slow_p99_ratio", "slow_closed")  # fmt: skip


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_bench_fanout_prints_its_ratios_and_closes_every_never_reading_client() -> None:
    out = StringIO()
    options = ["clients=40", "changes=2", "slow_changes=3", "big_clients=0", "drain=2"]
    call_command("bench", "fanout", *[arg for option in options for arg in ("-o", option)], stdout=out)
    figures = json.loads(out.getvalue().strip().splitlines()[-1])
    for key in KEYS:
        assert isinstance(figures[key], int | float), (key, figures[key])
        assert math.isfinite(figures[key]), (key, figures[key])
    assert figures["clients"] == 40
    assert figures["slow_clients"] == 2  # 5 % of 40
    # Every never-reading client was closed by the server (4408, or aborted) within the run.
    assert figures["slow_closed"] == figures["slow_clients"], figures["slow_closed_how"]
    assert "clients_10k_p99_ms" in figures
    assert figures["clients_10k_p99_ms"] is None  # big_clients=0 skips the 10k run
