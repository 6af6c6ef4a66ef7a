"""The bench smoke slice opens a scratch database per benchmark: in this process
they are copies of one migrated template (``ledger.benchmarks.REUSE_TEMPLATE_ENV``),
not a migration each."""

from __future__ import annotations

import pytest

from ledger.benchmarks import REUSE_TEMPLATE_ENV


@pytest.fixture(autouse=True)
def _scratch_databases_from_a_template(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REUSE_TEMPLATE_ENV, "1")
