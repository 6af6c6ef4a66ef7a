"""The reports page's chart (issue 36): a bar pair for every day of the window
(days without play at zero), a negative hold below the zero line, labelled
axes with round ticks in the currency's units, a legend; one chart per currency."""

from __future__ import annotations

import re
from datetime import date

import pytest

from compliance.charts import charts, handle_hold_svg, nice_step

START = date(2026, 11, 20)
ROWS = [
    {"day": "2026-11-21", "currency": "EUR", "handle": 150_000, "hold": 30_000},
    {"day": "2026-11-23", "currency": "EUR", "handle": 20_000, "hold": -45_000},
    {"day": "2026-11-23", "currency": "USD", "handle": 999, "hold": 999},
]


def bars(svg: str) -> dict[str, tuple[float, float]]:
    """Each bar's title -> (top y, height)."""
    found = re.findall(r'<rect x="[^"]+" y="([^"]+)" width="[^"]+" height="([^"]+)" fill="[^"]+"><title>([^<]+)', svg)
    return {title: (float(y), float(height)) for y, height, title in found}


def zero_line(svg: str) -> float:
    [y] = [y1 for x1, x2, y1, y2 in re.findall(r'<line x1="(\d+)" x2="(\d+)" y1="([^"]+)" y2="([^"]+)" stroke="#333"/>',
                                                svg) if x1 != x2 and y1 == y2]  # fmt: skip
    return float(y)


def test_every_day_has_its_bars_and_a_loss_is_below_the_zero_line() -> None:
    svg = str(handle_hold_svg(ROWS, start=START, days=7, currency="EUR"))
    drawn = bars(svg)
    assert len(drawn) == 14  # 7 days, a handle and a hold bar each; the USD row is not on the EUR chart
    zero = zero_line(svg)
    assert drawn["2026-11-21 handle 1,500.00 EUR"][0] + drawn["2026-11-21 handle 1,500.00 EUR"][1] == pytest.approx(
        zero
    )
    top, height = drawn["2026-11-23 hold -450.00 EUR"]
    assert top == pytest.approx(zero)  # drawn downwards from the zero line
    assert height > 0
    # The hold bar's height is to scale: 450 below against 1,500 above.
    assert height / drawn["2026-11-21 handle 1,500.00 EUR"][1] == pytest.approx(450 / 1500, rel=0.02)
    for day in ("2026-11-20", "2026-11-22", "2026-11-24", "2026-11-25", "2026-11-26"):
        assert drawn[f"{day} handle 0.00 EUR"][1] == 0
        assert drawn[f"{day} hold 0.00 EUR"][1] == 0
    assert "#d1433f" in svg  # the loss in red


def test_axes_ticks_and_legend_are_labelled() -> None:
    svg = str(handle_hold_svg(ROWS, start=START, days=7, currency="EUR"))
    ticks = re.findall(r'<text x="\d+" y="[^"]+" text-anchor="end">([^<]+)</text>', svg)
    assert ticks[0] == "-500.00"
    assert ticks[-1] == "1,500.00"
    assert "0.00" in ticks
    for day in ("20 Nov", "23 Nov", "26 Nov"):
        assert f">{day}</text>" in svg
    for text in (
        "handle (stakes)",
        "hold (handle \u2212 payouts)",
        "negative hold",
        ">EUR</text>",
        ">day (UTC)</text>",
    ):
        assert text in svg


def test_one_chart_per_currency_and_an_empty_window_still_has_its_axes() -> None:
    both = str(charts(ROWS, start=START, days=7, default_currency="EUR"))
    assert both.count('class="handle-hold-chart"') == 2
    empty = str(charts([], start=START, days=30, default_currency="EUR"))
    assert empty.count('class="handle-hold-chart"') == 1
    assert len(bars(empty)) == 60
    assert all(height == 0 for _, height in bars(empty).values())
    assert ">1.00</text>" in empty  # a y axis all the same


@pytest.mark.parametrize(("span", "step"), [(0, 1), (100, 20), (1_500_000, 500_000), (195_000, 50_000), (7, 2)])
def test_ticks_are_round(span: int, step: int) -> None:
    assert nice_step(span) == step
