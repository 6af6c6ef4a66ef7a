"""A smoke slice of ``bench rounds``: one shared-hand UTH round of 10 players through
the services (bets, decisions, deal, showdown) in a scratch database, then the
benchmark's own ``verify_ledger`` (it stops on a problem)."""

from __future__ import annotations

import pytest

from tests.benchmarks.smoke import assert_numeric, run_bench


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_bench_rounds_settles_a_tiny_round_clean() -> None:
    figures = run_bench("rounds", players=10)
    assert figures["players"] == 10
    assert_numeric(
        figures, "bets_per_second", "decisions_per_second", "close_and_deal_seconds", "showdown_settle_seconds"
    )
    assert figures["verify_ledger_problems"] == 0
