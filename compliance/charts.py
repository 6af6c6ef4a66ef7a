"""Server-rendered SVG bar chart (no JavaScript, no CDN): handle and hold per day."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

WIDTH, HEIGHT, PAD = 720, 240, 30


def handle_hold_svg(rows: Sequence[dict[str, Any]]) -> SafeString:
    """Two bars per day (handle grey, hold green; a negative hold red below the axis)."""
    if not rows:
        return format_html("<p>{}</p>", "No Activity")
    top = max(max(r["handle"], abs(r["hold"])) for r in rows) or 1
    slot = (WIDTH - 2 * PAD) / len(rows)
    bar = max(1.0, slot / 2 - 2)
    axis: float = HEIGHT - PAD
    scale = (HEIGHT - 2 * PAD) / top / 2 if any(r["hold"] < 0 for r in rows) else (HEIGHT - 2 * PAD) / top
    if any(r["hold"] < 0 for r in rows):
        axis = PAD + (HEIGHT - 2 * PAD) / 2
    shapes = []
    for i, r in enumerate(rows):
        x = PAD + i * slot
        h = r["handle"] * scale
        shapes.append(
            (f"{x:.1f}", f"{axis - h:.1f}", f"{bar:.1f}", f"{h:.1f}", "#999", f"{r['day']} handle {r['handle']}")
        )
        hold = r["hold"] * scale
        y = axis - hold if hold >= 0 else axis
        color = "#2a7" if hold >= 0 else "#c33"
        shapes.append((f"{x + bar + 1:.1f}", f"{y:.1f}", f"{bar:.1f}", f"{abs(hold):.1f}", color,
                       f"{r['day']} hold {r['hold']} ({r['hold_pct']}%)"))  # fmt: skip
    body = format_html_join("", '<rect x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}</title></rect>', shapes)
    labels = format_html_join(
        "",
        '<text x="{}" y="{}" font-size="9">{}</text>',
        ((f"{PAD + i * slot:.1f}", HEIGHT - 8, r["day"][5:]) for i, r in enumerate(rows)),
    )
    return format_html(
        '<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" role="img" '
        'aria-label="handle and hold per day">{}<line x1="{}" x2="{}" y1="{}" y2="{}" stroke="#333"/>{}</svg>',
        WIDTH, HEIGHT, body, PAD, WIDTH - PAD, f"{axis:.1f}", f"{axis:.1f}", labels,
    )  # fmt: skip
