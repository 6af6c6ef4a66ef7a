"""What the bench smoke tests share: run ``manage.py bench NAME`` at a tiny size and
read the JSON object on its last line (casino/bench.py); check figures are numbers.

The smoke slice checks that every benchmark still runs end to end and that its own
checks pass; it never judges a speed (no test here asserts a figure's size)."""

from __future__ import annotations

import json
import math
from io import StringIO
from typing import Any

from django.core.management import call_command


def run_bench(name: str, **options: int | float | str) -> dict[str, Any]:
    """``call_command("bench", name, "-o", "key=value", ...)``; the figures of its last line."""
    out = StringIO()
    call_command(
        "bench", name, *[arg for key, value in options.items() for arg in ("-o", f"{key}={value}")], stdout=out
    )
    figures = json.loads(out.getvalue().strip().splitlines()[-1])
    assert isinstance(figures, dict)
    return figures


def assert_numeric(figures: dict[str, Any], *keys: str) -> None:
    """Each key is present and a finite number (not a bool, not None)."""
    missing = [key for key in keys if key not in figures]
    assert not missing, f"figures lack {missing}: {sorted(figures)}"
    for key in keys:
        value = figures[key]
        assert not isinstance(value, bool), f"{key} = {value!r}"
        assert isinstance(value, int | float), f"{key} = {value!r}"
        assert math.isfinite(value), f"{key} = {value!r}"
