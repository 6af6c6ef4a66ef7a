"""A smoke slice of ``bench audit_export``: settled bets exported (JSONL, signed
manifest) and verified offline by ``tools/verify_export`` (the benchmark stops if
the export does not verify); the ledger the bets leave is clean."""

from __future__ import annotations

import pytest

from ledger.services.seals import seal_key
from ledger.services.verify import verify_ledger
from tests.benchmarks.smoke import assert_numeric, run_bench


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_bench_audit_export_exports_and_verifies() -> None:
    figures = run_bench("audit_export", bets=20)
    assert figures["events"] >= 40  # two events per settled bet, at least
    assert_numeric(figures, "export_events_per_s", "verify_events_per_s")
    assert verify_ledger(key=seal_key()) == []
