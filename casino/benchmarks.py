"""Platform benchmarks."""

from __future__ import annotations

import statistics
import time
from typing import Any

from casino.bench import BenchResult, Writer, benchmark
from casino.health import check_broker, check_channel_layer, check_database


@benchmark("health")
def bench_health(*, out: Writer, repeat: int = 20, timeout: float = 5, **options: Any) -> BenchResult:
    """Latency of each health check: database SELECT 1, the Celery ping round
    trip through a running worker, and a channel-layer send/receive.

    Each check waits at most ``timeout`` seconds (default 5); one that fails
    (no worker answering the ping, say) counts in ``<component>_failures``
    and its time is a sample like any other, so a run never hangs."""
    checks = {
        "database": lambda: check_database(),
        "broker": lambda: check_broker(timeout=timeout),
        "channel_layer": lambda: check_channel_layer(timeout=timeout),
    }
    rows: list[list[Any]] = []
    figures: dict[str, Any] = {}
    for name, check in checks.items():
        samples: list[float] = []
        failures = 0
        for _ in range(repeat):
            started = time.perf_counter()
            ok = check().ok
            samples.append((time.perf_counter() - started) * 1000)
            failures += 0 if ok else 1
        p50 = statistics.median(samples)
        worst = max(samples)
        rows.append([name, repeat, failures, p50, worst])
        figures[f"{name}_p50_ms"] = round(p50, 2)
        figures[f"{name}_failures"] = failures
    return BenchResult(
        "Health check latency (ms)", ["component", "runs", "failures", "p50_ms", "max_ms"], rows, figures
    )
