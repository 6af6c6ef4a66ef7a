"""A smoke slice of ``bench rg_wager_check``: ``assert_may_wager`` timed for its
three cases (no settings row, session limits, a daily loss limit over settled
bets), on the test database; the bets it places leave the ledger clean."""

from __future__ import annotations

import pytest

from ledger.services.seals import seal_key
from ledger.services.verify import verify_ledger
from tests.benchmarks.smoke import assert_numeric, run_bench


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_bench_rg_wager_check_times_each_case() -> None:
    figures = run_bench("rg_wager_check", repeat=20, bets=5)
    assert_numeric(figures, "no_row_p50_us", "session_limits_p50_us", "loss_limit_5_bets_p50_us")
    assert verify_ledger(key=seal_key()) == []
