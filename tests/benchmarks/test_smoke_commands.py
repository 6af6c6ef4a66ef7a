"""A smoke slice of ``bench commands`` (docs/benchmarks.md): the benchmark runs
end to end on a scratch PostgreSQL database at a tiny size, prints its figures
as JSON on its last line (every ratio with the two figures it divides) and its
closing ``verify_ledger`` finds nothing. It checks that it runs, never how fast."""

from __future__ import annotations

import json
import math
from io import StringIO

import pytest
from django.core.management import call_command

RATIOS = {
    "chip_ratio": ("chip_floor_ms", "chip_ms"),
    "decision_ratio": ("decision_floor_ms", "decision_ms"),
    "bet_size_ratio": ("bet_crowd_p50_ms", "bet_alone_p50_ms"),
}
POKER = {"poker_action_ratio": ("poker_action_floor_ms", "poker_action_ms")}


def _run(*options: str) -> dict[str, object]:
    out = StringIO()
    call_command("bench", "commands", *[arg for option in options for arg in ("-o", option)], stdout=out)
    figures = json.loads(out.getvalue().strip().splitlines()[-1])
    assert isinstance(figures, dict)
    return figures


def _check(figures: dict[str, object], ratios: dict[str, tuple[str, str]]) -> None:
    for ratio, (numerator, denominator) in ratios.items():
        values = [figures[ratio], figures[numerator], figures[denominator]]
        assert all(isinstance(v, int | float) and math.isfinite(v) and v > 0 for v in values), (ratio, values)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_bench_commands_prints_every_ratio_and_leaves_a_clean_ledger() -> None:
    figures = _run("chips=12", "decisions=6", "rounds=2", "crowd=12", "crowd_chips=6", "poker_actions=6")
    _check(figures, RATIOS | POKER)
    assert figures["verify_ledger_problems"] == 0
    assert figures["poker_verify_ledger_problems"] == 0
    assert (figures["chips"], figures["decisions"], figures["crowd"]) == (12, 6, 12)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_poker_actions_zero_skips_the_poker_action() -> None:
    figures = _run("chips=2", "decisions=1", "rounds=1", "crowd=2", "crowd_chips=2", "poker_actions=0")
    _check(figures, RATIOS)
    assert not any(key.startswith("poker_action") for key in figures)
    assert figures["verify_ledger_problems"] == 0
