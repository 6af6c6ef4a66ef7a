"""A smoke slice of ``bench evaluator``: the hand evaluator's batch, scalar and
agreement checks side by side with phevaluator, on a tiny slice of the hands.

``full_enumeration=0`` ranks only the peer's slice (the 462 hands whose lowest card
is card 40) instead of all C(52,7); the UTH simulation is skipped. The figures are
meaningless at this size; the checks are not: the same ranks as phevaluator on the
same hands, and no disagreement on random hands."""

from __future__ import annotations

from tests.benchmarks.smoke import assert_numeric, run_bench


def test_bench_evaluator_agrees_with_phevaluator_on_a_tiny_slice() -> None:
    figures = run_bench(
        "evaluator", full_enumeration=0, slice_from=40, scalar_hands=2000, treys_hands=200,
        agreement_hands=20_000, simulate_rounds=0,
    )  # fmt: skip
    assert_numeric(figures, "batch_ratio", "batch_all7_seconds", "peer_all7_seconds")
    assert figures["batch_hands_measured"] == figures["peer_hands_measured"] == 462  # C(11, 6): cards 41..51
    assert figures["batch_all7_scaled"] is True
    assert figures["all7_category_table_matches"] is None  # checked on all hands only
    assert figures["peer_same_hands_histogram_matches"] is True
    assert figures["agreement_hands"] == 20_000
    assert figures["agreement_disagreements"] == 0
    assert figures["simulate_uth_10m_seconds"] is None
