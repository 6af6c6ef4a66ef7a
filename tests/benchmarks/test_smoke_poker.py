"""A smoke slice of ``bench poker``: our hold'em engine beside pokerkit on the
scripted hand. The benchmark first plays 20 decks through both and stops if their
final stacks differ (the chips each engine pays out); then a tiny timed round."""

from __future__ import annotations

from tests.benchmarks.smoke import assert_numeric, run_bench


def test_bench_poker_runs_beside_pokerkit() -> None:
    figures = run_bench("poker", hands=20, pokerkit_hands=2, rounds=1)
    assert_numeric(figures, "ratio", "median_ratio", "wall_ratio", "engine_hands_per_s", "pokerkit_hands_per_s")
