"""A smoke slice of ``bench bets`` (docs/benchmarks.md): the benchmark still runs
end to end on a scratch PostgreSQL database through a real uvicorn server:
the websocket bets beside the bare websocket peer, REST bets beside the bare
DRF endpoint, each paced at half its peer's capacity; every figure the issue
names is printed with its peer's, and the closing ``verify_ledger`` finds
nothing. Tiny sizes: this checks that it runs, never how fast (speed is never
a test here)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

KEYS = (
    "ws_bets_per_s", "bare_ws_per_s", "ws_ratio", "rest_bets_per_s", "bare_per_s", "rest_ratio",
    "ws_paced_rate", "rest_paced_rate", "ws_paced_p99_ms", "bare_ws_paced_p99_ms", "ws_paced_p99_ratio",
    "rest_paced_p99_ms", "bare_rest_paced_p99_ms", "rest_paced_p99_ratio", "errors", "verify_ledger_problems",
)  # fmt: skip


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_bench_bets_prints_every_ratio_beside_its_peer_and_keeps_money_exact() -> None:
    out = StringIO()
    options = ["seconds=0.5", "slices=2", "clients=2", "ws_clients=2", "workers=1"]
    call_command("bench", "bets", *[arg for option in options for arg in ("-o", option)], stdout=out)
    figures = json.loads(out.getvalue().strip().splitlines()[-1])
    for key in KEYS:
        assert isinstance(figures.get(key), int | float), (key, figures)
        assert not isinstance(figures[key], bool), (key, figures)
    assert figures["verify_ledger_problems"] == 0
    assert figures["errors"] == 0
    for key in ("ws_bets_per_s", "bare_ws_per_s", "rest_bets_per_s", "bare_per_s"):
        assert figures[key] > 0, (key, figures)
