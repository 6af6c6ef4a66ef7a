"""The benchmark registry behind ``manage.py bench NAME`` and ``make bench``.

A benchmark is a function registered with ``@benchmark("name")`` in a module
listed in ``BENCHMARK_MODULES``. It takes keyword options, prints whatever
progress it likes to ``out``, and returns a ``BenchResult``: the command prints
its rows as a table and, as the very last line, its ``figures`` as one JSON
object. Benchmarks measure a peer side by side in the same run; they are never
timed tests.
"""

from __future__ import annotations

import importlib
import platform
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

BENCHMARK_MODULES = [
    "casino.benchmarks",
    "ledger.benchmarks",
    "games.benchmarks.evaluator",
    "games.benchmarks.poker",
    "games.benchmarks.commands_poker",
    "games.benchmarks.live",
    "games.benchmarks.commands",
    "games.benchmarks.fanout",
    "games.benchmarks.rounds",
    "games.benchmarks.tournament",
    "games.benchmarks.simulation",
    "compliance.benchmarks",
]


@dataclass
class BenchResult:
    title: str
    columns: list[str]
    rows: list[list[Any]]
    figures: dict[str, Any]
    notes: list[str] = field(default_factory=list)


class Writer(Protocol):
    """Anything with ``write(str)``: a stream or Django's OutputWrapper."""

    def write(self, text: str) -> Any: ...


BenchFunction = Callable[..., BenchResult]
_REGISTRY: dict[str, BenchFunction] = {}


def benchmark(name: str) -> Callable[[BenchFunction], BenchFunction]:
    def register(func: BenchFunction) -> BenchFunction:
        _REGISTRY[name] = func
        return func

    return register


def registry() -> dict[str, BenchFunction]:
    for module in BENCHMARK_MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:  # a real import error inside the module
                raise
    return dict(sorted(_REGISTRY.items()))


def machine() -> dict[str, Any]:
    import os

    return {"python": platform.python_version(), "cpus": os.cpu_count(), "machine": platform.machine()}


def render_table(result: BenchResult, out: Writer) -> None:
    cells = [result.columns] + [[_fmt(value) for value in row] for row in result.rows]
    widths = [max(len(str(row[i])) for row in cells) for i in range(len(result.columns))]
    out.write(f"{result.title}\n")
    for index, row in enumerate(cells):
        out.write("  ".join(str(value).rjust(width) for value, width in zip(row, widths, strict=True)) + "\n")
        if index == 0:
            out.write("  ".join("-" * width for width in widths) + "\n")
    for note in result.notes:
        out.write(f"note: {note}\n")


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 100 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)
