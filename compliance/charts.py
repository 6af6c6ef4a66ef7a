"""Server-rendered SVG bar chart (no JavaScript, no CDN): handle and hold per day.

One chart per currency (amounts of two currencies are never drawn on one axis):
a pair of bars for every day of the window, days without play included (drawn
as zero), a y axis with its ticks in the currency's major units, an x axis with
the days, and a legend. A negative hold (the house paid out more than it took)
is a red bar below the zero line.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import date, timedelta
from typing import Any

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from ledger.currencies import display_money

WIDTH, HEIGHT = 760, 300
LEFT, RIGHT, TOP, BOTTOM = 92, 16, 40, 46  # the plot's margins: y labels, legend, x labels
HANDLE, HOLD, LOSS = "#7a8ba6", "#2a9d5c", "#d1433f"
#: The y axis of a window without play: 0 to 1.00 (minor units of a 2-decimal currency).
EMPTY_SPAN = 100
#: At most this many day labels on the x axis (every day keeps its tick).
MAX_DAY_LABELS = 16


def nice_step(span: int, ticks: int = 5) -> int:
    """A round tick step (1, 2 or 5 times a power of ten, in minor units) giving
    about ``ticks`` intervals over ``span``."""
    raw = max(span, ticks) / ticks
    power = 10 ** math.floor(math.log10(raw))
    return int(next(m * power for m in (1, 2, 5, 10) if m * power >= raw))


def amount_label(amount: int, currency: str) -> str:
    """An axis label: the amount as ``display_money`` shows it, without the code (the axis names it)."""
    return display_money(amount, currency).removesuffix(f" {currency}")


def handle_hold_svg(rows: Sequence[dict[str, Any]], *, start: date, days: int, currency: str) -> SafeString:
    """The chart of ``house_days`` rows of ``currency`` over ``days`` days from
    ``start`` (rows of other currencies are left out)."""
    by_day = {row["day"]: row for row in rows if row["currency"] == currency}
    window = [start + timedelta(days=n) for n in range(days)]
    series = [(day, int(by_day.get(day.isoformat(), {}).get("handle", 0)),
               int(by_day.get(day.isoformat(), {}).get("hold", 0))) for day in window]  # fmt: skip
    highest = max([0, *(max(handle, hold) for _, handle, hold in series)])
    lowest = min([0, *(hold for _, _, hold in series)])
    if highest == lowest == 0:
        highest = EMPTY_SPAN
    step = nice_step(highest - lowest)
    top = step * max(1, math.ceil(highest / step))
    bottom = step * math.floor(lowest / step)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def y(amount: int) -> float:
        return TOP + plot_h * (top - amount) / (top - bottom)

    zero = y(0)
    slot = plot_w / days
    bar = max(1.0, min(18.0, slot * 0.36))
    grid, labels, bars, days_axis = [], [], [], []
    for tick in range(bottom, top + 1, step):
        grid.append((LEFT, WIDTH - RIGHT, f"{y(tick):.1f}", f"{y(tick):.1f}", "#ddd" if tick else "#333"))
        labels.append((LEFT - 6, f"{y(tick) + 4:.1f}", amount_label(tick, currency)))
    every = math.ceil(days / MAX_DAY_LABELS)
    for n, (day, handle, hold) in enumerate(series):
        middle = LEFT + slot * (n + 0.5)
        bars.append((f"{middle - bar - 1:.1f}", f"{min(y(handle), zero):.1f}", f"{bar:.1f}",
                     f"{abs(zero - y(handle)):.1f}", HANDLE,
                     f"{day.isoformat()} handle {display_money(handle, currency)}"))  # fmt: skip
        bars.append((f"{middle + 1:.1f}", f"{min(y(hold), zero):.1f}", f"{bar:.1f}", f"{abs(zero - y(hold)):.1f}",
                     HOLD if hold >= 0 else LOSS,
                     f"{day.isoformat()} hold {display_money(hold, currency)}"))  # fmt: skip
        label = day.strftime("%d %b") if n % every == 0 else ""
        x = f"{middle:.1f}"
        days_axis.append((x, f"{HEIGHT - BOTTOM:.1f}", x, f"{HEIGHT - BOTTOM + 4:.1f}", x,
                          f"{HEIGHT - BOTTOM + 16:.1f}", label))  # fmt: skip
    legend = format_html_join(
        "",
        '<rect x="{}" y="12" width="12" height="12" fill="{}"/><text x="{}" y="22">{}</text>',
        [(LEFT + x, color, LEFT + x + 16, text) for x, color, text in (
            (0, HANDLE, "handle (stakes)"), (130, HOLD, "hold (handle \u2212 payouts)"),
            (330, LOSS, "negative hold (the house paid out more)"))],
    )  # fmt: skip
    return format_html(
        '<svg xmlns="http://www.w3.org/2000/svg" class="handle-hold-chart" width="{w}" height="{h}" '
        'viewBox="0 0 {w} {h}" role="img" aria-label="Handle and hold per day, {cur}" '
        'font-family="sans-serif" font-size="11" fill="#333">'
        "{legend}{grid}{labels}{bars}{days}"
        '<line x1="{left}" x2="{left}" y1="{top}" y2="{bottom}" stroke="#333"/>'
        '<text x="14" y="{middle}" text-anchor="middle" transform="rotate(-90 14 {middle})">{cur}</text>'
        '<text x="{center}" y="{h_minus}" text-anchor="middle">day (UTC)</text></svg>',
        w=WIDTH, h=HEIGHT, cur=currency, legend=legend,
        grid=format_html_join("", '<line x1="{}" x2="{}" y1="{}" y2="{}" stroke="{}"/>', grid),
        labels=format_html_join("", '<text x="{}" y="{}" text-anchor="end">{}</text>', labels),
        bars=format_html_join(
            "", '<rect x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}</title></rect>', bars
        ),
        days=format_html_join(
            "", '<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#333"/><text x="{}" y="{}" '
            'text-anchor="middle">{}</text>', days_axis,
        ),
        left=LEFT, top=TOP, bottom=HEIGHT - BOTTOM, middle=TOP + plot_h / 2, center=LEFT + plot_w / 2,
        h_minus=HEIGHT - 6,
    )  # fmt: skip


def charts(rows: Sequence[dict[str, Any]], *, start: date, days: int, default_currency: str) -> SafeString:
    """One chart per currency with play in the window (the default currency's,
    all zero, when there was none)."""
    currencies = sorted({row["currency"] for row in rows}) or [default_currency]
    return format_html_join(
        "", "{}", ((handle_hold_svg(rows, start=start, days=days, currency=c),) for c in currencies)
    )
