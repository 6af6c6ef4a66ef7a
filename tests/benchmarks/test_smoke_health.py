"""A smoke slice of ``bench health``: each health check's latency (database, the
Celery ping through a worker, the channel layer).

Without a worker the broker's ping cannot come back: every broker check then
counts as a failure after its ``timeout``, and the run still ends with its JSON.
With a worker (``celery_worker_process``) no check fails."""

from __future__ import annotations

import subprocess

import pytest

from tests.benchmarks.smoke import assert_numeric, run_bench

COMPONENTS = ("database", "broker", "channel_layer")


def _checked(figures: dict[str, object]) -> None:
    assert_numeric(figures, *[f"{name}_p50_ms" for name in COMPONENTS])


@pytest.mark.django_db(transaction=True)
def test_bench_health_without_a_worker_reports_every_ping_failed() -> None:
    figures = run_bench("health", repeat=2, timeout=0.5)
    _checked(figures)
    assert figures["broker_failures"] == 2
    assert figures["database_failures"] == 0
    assert figures["channel_layer_failures"] == 0


@pytest.mark.django_db(transaction=True)
def test_bench_health_with_a_worker_has_no_failure(celery_worker_process: subprocess.Popen[bytes]) -> None:
    figures = run_bench("health", repeat=2, timeout=5)
    _checked(figures)
    assert [figures[f"{name}_failures"] for name in COMPONENTS] == [0, 0, 0]
