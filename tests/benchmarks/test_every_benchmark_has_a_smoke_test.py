"""Every benchmark of ``manage.py bench list`` (``casino.bench.registry()``) has its
smoke test, ``tests/benchmarks/test_smoke_<name>.py``, which runs it by name; and
every such file names a registered benchmark (issue 39, part 3: a benchmark that
breaks does not go unnoticed)."""

from __future__ import annotations

from pathlib import Path

from casino.bench import registry

HERE = Path(__file__).resolve().parent


def test_every_benchmark_has_a_smoke_test() -> None:
    names = registry()
    missing = [f"test_smoke_{name}.py" for name in names if not (HERE / f"test_smoke_{name}.py").exists()]
    assert missing == [], f"benchmarks without a smoke test in tests/benchmarks/: {missing}"
    silent = [name for name in names if f'"{name}"' not in (HERE / f"test_smoke_{name}.py").read_text()]
    assert silent == [], f"smoke tests that never name their benchmark: {silent}"


def test_every_smoke_test_names_a_registered_benchmark() -> None:
    names = registry()
    orphans = [path.name for path in HERE.glob("test_smoke_*.py") if path.stem.removeprefix("test_smoke_") not in names]
    assert orphans == []
