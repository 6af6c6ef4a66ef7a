"""Platform benchmarks."""

from __future__ import annotations

import statistics
import time
from typing import Any

from casino.bench import BenchResult, Writer, benchmark
from casino.health import check_broker, check_channel_layer, check_database


@benchmark("health")
def bench_health(*, out: Writer, repeat: int = 20, **options: Any) -> BenchResult:
    """Latency of each health check: database SELECT 1, the Celery ping round
    trip through a running worker, and a channel-layer send/receive."""
    checks = {
        "database": lambda: check_database(),
        "broker": lambda: check_broker(timeout=5),
        "channel_layer": lambda: check_channel_layer(timeout=5),
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
