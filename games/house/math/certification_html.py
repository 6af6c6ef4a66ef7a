"""The certification pack as one self-contained HTML page (pure: a string from the report mapping).

Inline CSS and inline SVG charts only: no script, no stylesheet link, no image
file, no web address, so the page reads the same offline and archived. Charts:
the RTP of every pay table (linear axis, it does not start at 0: said on the
chart) and, per table, the hit frequency of each pay line (log axis, since lines
range from about 1 in a million to most hands). Every figure a chart shows is
also in the tables next to it, and in ``report.json``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:70rem;
color:#1a1a1a;line-height:1.45;padding:0 1rem}
h1{font-size:1.7rem}h2{border-bottom:2px solid #334;padding-bottom:.2rem;margin-top:2.5rem}
h3{margin-top:1.8rem}h4{margin:1.2rem 0 .4rem}
table{border-collapse:collapse;margin:.5rem 0 1rem;font-size:.9rem}
th,td{border:1px solid #bbb;padding:.2rem .5rem;text-align:left;vertical-align:top}
th{background:#eef}td.n{text-align:right;font-variant-numeric:tabular-nums}
.note{background:#fff8e0;border-left:4px solid #e0a800;padding:.5rem .8rem}
.ok{color:#176b2c;font-weight:bold}.bad{color:#a00;font-weight:bold}
code{background:#f3f3f3;padding:0 .2rem}figure{margin:.5rem 0 1.5rem}
figcaption{font-size:.85rem;color:#444}svg text{font-family:inherit}
nav ul{columns:2}
"""


def _pct(value: float, digits: int = 4) -> str:
    return f"{value * 100:.{digits}f} %"


def _num(value: float, digits: int = 6) -> str:
    return f"{value:.{digits}g}" if value and abs(value) < 1e-3 else f"{value:.{digits}f}"


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]], numeric: Sequence[int] = ()) -> str:
    head = "".join(f"<th>{escape(str(h))}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="n">{escape(str(cell))}</td>' if i in numeric else f"<td>{escape(str(cell))}</td>"
            for i, cell in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


# --- charts -------------------------------------------------------------------------------------

LABEL_WIDTH = 260
BAR_AREA = 420
ROW = 18


def bar_chart(title: str, items: Sequence[tuple[str, float]], low: float, high: float, caption: str) -> str:
    """Horizontal bars on a linear axis from ``low`` to ``high`` (values as percentages)."""
    height = 30 + ROW * len(items) + 30
    width = LABEL_WIDTH + BAR_AREA + 90
    parts = [
        f'<svg role="img" aria-label="{escape(title)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">'
    ]
    steps = max(1, min(10, round((high - low) * 10)))  # a gridline every 10 % when the range allows
    for k in range(steps + 1):
        value = low + (high - low) * k / steps
        x = LABEL_WIDTH + BAR_AREA * k / steps
        parts.append(f'<line x1="{x:.1f}" y1="20" x2="{x:.1f}" y2="{height - 25}" stroke="#ddd"/>')
        parts.append(
            f'<text x="{x:.1f}" y="{height - 10}" font-size="11" text-anchor="middle">{value * 100:.0f} %</text>'
        )
    for i, (label, value) in enumerate(items):
        y = 25 + ROW * i
        length = max(0.0, min(1.0, (value - low) / (high - low))) * BAR_AREA
        parts.append(
            f'<text x="{LABEL_WIDTH - 6}" y="{y + 12}" font-size="11" text-anchor="end">{escape(label)}</text>'
        )
        parts.append(f'<rect x="{LABEL_WIDTH}" y="{y + 2}" width="{length:.1f}" height="{ROW - 5}" fill="#3a6ea5"/>')
        parts.append(f'<text x="{LABEL_WIDTH + length + 4:.1f}" y="{y + 12}" font-size="11">{_pct(value, 2)}</text>')
    parts.append("</svg>")
    return f"<figure>{''.join(parts)}<figcaption>{escape(caption)}</figcaption></figure>"


def log_bar_chart(title: str, items: Sequence[tuple[str, float, bool]], caption: str) -> str:
    """Horizontal bars of probabilities on a log axis (1e-7 .. 1); paying lines dark, losing light."""
    decades = 7
    height = 30 + ROW * len(items) + 30
    width = LABEL_WIDTH + BAR_AREA + 90
    parts = [
        f'<svg role="img" aria-label="{escape(title)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">'
    ]
    for k in range(decades + 1):
        x = LABEL_WIDTH + BAR_AREA * k / decades
        parts.append(f'<line x1="{x:.1f}" y1="20" x2="{x:.1f}" y2="{height - 25}" stroke="#ddd"/>')
        parts.append(
            f'<text x="{x:.1f}" y="{height - 10}" font-size="11" text-anchor="middle">1e-{decades - k}</text>'
            if k < decades
            else f'<text x="{x:.1f}" y="{height - 10}" font-size="11" text-anchor="middle">1</text>'
        )
    for i, (label, p, pays) in enumerate(items):
        y = 25 + ROW * i
        position = (math.log10(p) + decades) / decades if p > 0 else 0.0
        length = max(0.0, min(1.0, position)) * BAR_AREA
        colour = "#2e7d4f" if pays else "#b9c4b9"
        parts.append(
            f'<text x="{LABEL_WIDTH - 6}" y="{y + 12}" font-size="11" text-anchor="end">{escape(label)}</text>'
        )
        parts.append(f'<rect x="{LABEL_WIDTH}" y="{y + 2}" width="{length:.1f}" height="{ROW - 5}" fill="{colour}"/>')
        parts.append(f'<text x="{LABEL_WIDTH + length + 4:.1f}" y="{y + 12}" font-size="11">{p:.3g}</text>')
    parts.append("</svg>")
    return f"<figure>{''.join(parts)}<figcaption>{escape(caption)}</figcaption></figure>"


# --- sections -----------------------------------------------------------------------------------


def _rtp_items(report: Mapping[str, Any]) -> list[tuple[str, float]]:
    items: list[tuple[str, float]] = []
    for g in report["games"]:
        main = g["main"]
        if main.get("supplied"):
            for result in main["results"]:
                tables = ", ".join(f"{w} {n}" for w, n in result["pay_tables"].items()) or "main"
                items.append((f"{g['game']} main ({tables}), per ante", result["rtp_per_ante"]["value"]))
                items.append((f"{g['game']} main ({tables}), per total", result["rtp_per_total"]["value"]))
        for bet in g["side_bets"]:
            items.append((bet["paytable"], bet["rtp"]))
    return items


def _summary(report: Mapping[str, Any]) -> str:
    items = _rtp_items(report)
    low = math.floor(min(v for _, v in items) * 10) / 10 if items else 0.0
    high = max(1.0, math.ceil(max(v for _, v in items) * 20) / 20) if items else 1.0
    rows = []
    for g in report["games"]:
        main = "supplied" if g["main"].get("supplied") else "NOT SUPPLIED"
        rows.append([g["title"], g["game"], g["rules_version"], main, len(g["side_bets"])])
    return (
        '<section id="summary"><h2>Summary</h2>'
        + _table(["game", "code", "rules version", "main-game results", "side-bet / bonus tables"], rows, [4])
        + bar_chart(
            "RTP per pay table",
            items,
            low,
            high,
            f"Return to player of every pay table (axis from {low * 100:.0f} % to {high * 100:.0f} %, not from 0). "
            "Side bets: exact, by enumeration; STAX: fixed pays only; Bonus Spin: with the example wheel. "
            "Main games: only when supplied.",
        )
        + "</section>"
    )


def _versions(report: Mapping[str, Any]) -> str:
    v = report["versions"]
    rules = _table(["game", "rules version"], [[g, ver] for g, ver in v["rules"].items()])
    tables = _table(
        ["pay table", "title", "version", "SHA-256 of its canonical JSON"],
        [[t["name"], t["title"], t["version"], t["sha256"]] for t in v["pay_tables"]],
    )
    return (
        '<section id="versions"><h2>Versions of the rules and pay tables</h2>'
        f"<p>Pay tables version <code>{escape(v['pay_tables_version'])}</code>; code version "
        f"<code>{escape(report.get('code_version') or 'not recorded')}</code>.</p>"
        f"{rules}{tables}<p>{escape(v['note'])}</p></section>"
    )


def _rng(report: Mapping[str, Any]) -> str:
    rows = [[key.replace("_", " "), text] for key, text in report["rng"].items()]
    return '<section id="rng"><h2>The random number generator</h2>' + _table(["", "description"], rows) + "</section>"


def _shuffle(report: Mapping[str, Any]) -> str:
    s = report["shuffle"]
    r = s["result"]
    p = s["parameters"]
    verdict = '<span class="ok">passes</span>' if s["passes"] else '<span class="bad">FAILS</span>'
    params = _table(
        ["parameter", "value"],
        [
            ["shuffle", s["shuffle"]],
            ["random source", s["source"]],
            ["shuffles (N)", f"{p['shuffles']:,}"],
            ["deck size", p["deck_size"]],
            ["cells (card x position)", f"{p['cells']:,}"],
            ["expected count per cell", f"{p['expected_per_cell']:.2f}"],
            ["significance level", f"{p['level']}"],
            ["whole-table degrees of freedom", f"{p['table_df']:,}"],
            ["per-card / per-position tests", f"{p['line_tests']} of {p['line_df']} degrees of freedom"],
        ],
    )
    results = _table(
        ["test", "statistic", "degrees of freedom", "critical value", "p-value / failures"],
        [
            ["whole table", r["table_chi2"], r["table_df"], r["table_critical"], r["table_p_value"]],
            [
                f"worst line ({r['worst_line']})",
                r["worst_line_chi2"],
                r["line_df"],
                r["line_critical_bonferroni"],
                f"{r['lines_failed']} of {p['line_tests']} lines above the critical value",
            ],
        ],
        [1, 2, 3],
    )
    return (
        '<section id="shuffle"><h2>Shuffle: chi-square uniformity</h2>'
        f"<p>The shuffle {verdict} at the {p['level']} level ({s['seconds']} s).</p>"
        f"{params}{results}<p>{escape(s['method'])}</p></section>"
    )


def _pay_lines(table: Mapping[str, Any]) -> str:
    return _table(["outcome", "pay"], [[line["outcome"], _pay_label(line)] for line in table["lines"]])


def _pay_label(line: Mapping[str, Any]) -> str:
    kind = line["kind"]
    if kind == "to_one":
        return f"{line['ratio']} to 1"
    if kind == "for_one":
        return f"{line['ratio']} for 1"
    if kind == "progressive":
        return f"{line['pool']} progressive"
    return str(kind)


def _main(g: Mapping[str, Any]) -> str:
    main = g["main"]
    parts = [f'<h3 id="{escape(g["game"])}-main">Main game</h3>']
    for table in main["pay_tables"]:
        parts.append(f"<h4>Pay table {escape(table['name'])} (version {escape(table['version'])})</h4>")
        parts.append(_pay_lines(table))
    if not main.get("supplied"):
        parts.append(f'<p class="note">{escape(main["note"])}</p>')
        return "".join(parts)
    parts.append(
        f"<p>Results from <code>{escape(main['source'])}</code>. Method: {escape(main['method'] or 'not stated')}.</p>"
    )
    if main.get("rules_version_mismatch"):
        parts.append(
            f'<p class="note">These results were computed for rules version '
            f"{escape(str(main['rules_version_of_results']))}, not {escape(g['rules_version'])}.</p>"
        )
    for missing in main.get("pay_tables_not_supplied", []):
        parts.append(f'<p class="note">No results supplied for pay table {escape(str(missing))}.</p>')
    for result in main["results"]:
        tables = ", ".join(f"{w} {n}" for w, n in result["pay_tables"].items()) or "no priced main wager"
        rows = [
            ["RTP per ante", _pct(result["rtp_per_ante"]["value"]), result["rtp_per_ante"]["exact"]],
            ["RTP per total wagered", _pct(result["rtp_per_total"]["value"]), result["rtp_per_total"]["exact"]],
            ["house edge (per ante)", _pct(result["house_edge"]["value"]), result["house_edge"]["exact"]],
            [
                "element of risk (per total)",
                _pct(result["element_of_risk"]["value"]),
                result["element_of_risk"]["exact"],
            ],
        ]
        for key, label in (("mean_total_wagered", "mean total wagered (antes)"), ("variance_per_ante", "variance")):
            if result.get(key):
                rows.append([label, _num(result[key]["value"]), result[key]["exact"]])
        parts.append(f"<h4>Perfect strategy, pay tables: {escape(tables)}</h4>")
        parts.append(_table(["figure", "value", "exact"], rows, [1]))
        if result["outcomes"]:
            parts.append(
                _table(
                    ["outcome", "probability", "net (antes)"],
                    [[o["outcome"], _num(o["probability"]["value"]), o["net"]["exact"]] for o in result["outcomes"]],
                    [1, 2],
                )
            )
            parts.append(
                log_bar_chart(
                    f"{g['game']} main outcomes",
                    [(o["outcome"], o["probability"]["value"], o["net"]["value"] > 0) for o in result["outcomes"]],
                    "Probability of each main-game outcome (log axis); winning outcomes dark.",
                )
            )
        for strategy in result["strategy"]:
            parts.append(f"<h4>Optimal strategy: {escape(strategy['name'])}</h4>")
            if strategy["title"]:
                parts.append(f"<p>{escape(strategy['title'])}</p>")
            parts.append(_table(strategy["columns"], strategy["rows"]))
        if not result["strategy"]:
            parts.append('<p class="note">No strategy tables were supplied with these results.</p>')
    return "".join(parts)


def _side_bet(bet: Mapping[str, Any]) -> str:
    anchor = escape(bet["paytable"].replace(".", "-"))
    version = f"version {bet['version']}, " if bet.get("version") else ""
    digest = f"SHA-256 {bet['sha256'][:16]}…, " if bet.get("sha256") else ""
    figures = _table(
        ["figure", "value", "exact"],
        [
            ["RTP", _pct(bet["rtp"]), bet["rtp_exact"]],
            ["house edge", _pct(bet["house_edge"]), ""],
            ["variance (per unit staked)", _num(bet["variance"]), bet["variance_exact"]],
            ["standard deviation", _num(bet["standard_deviation"]), ""],
            ["hit frequency (any paying line)", _num(bet["hit_frequency"]), ""],
            ["card sets enumerated", f"{bet['combinations']:,}", ""],
        ],
        [1],
    )
    lines = _table(
        ["pay line", "pay", "count", "probability (hit frequency)", "exact", "return per unit"],
        [
            [
                line["outcome"],
                line["pay"],
                f"{line['count']:,}",
                _num(line["probability"], 8),
                line["probability_exact"],
                _num(line["return"]),
            ]
            for line in bet["lines"]
        ],
        [2, 3, 5],
    )
    chart = log_bar_chart(
        f"hit frequencies of {bet['paytable']}",
        [(line["outcome"], line["probability"], line["pay"] != "lose") for line in bet["lines"]],
        f"Hit frequency of each line of {bet['paytable']} (log axis); paying lines dark, losing lines light.",
    )
    notes = "".join(f'<p class="note">{escape(n)}</p>' for n in bet.get("notes", []))
    return (
        f'<h4 id="{anchor}">{escape(bet["wager"])}: {escape(bet["paytable"])} {escape(bet.get("title") or "")}</h4>'
        f"<p>{escape(version + digest)}cards: {escape(bet['basis'])}.</p>{notes}{figures}{lines}{chart}"
    )


def _game(g: Mapping[str, Any]) -> str:
    wagers = _table(["wager", "kind", "equals"], [[w["name"], w["kind"], w["equals"] or ""] for w in g["wagers"]])
    decisions = _table(
        ["street", "options (x ante)", "timeout default"],
        [
            [d["street"], ", ".join(f"{o['name']} ({o['multiplier']})" for o in d["options"]), d["timeout_default"]]
            for d in g["decisions"]
        ],
    )
    side = "".join(_side_bet(b) for b in g["side_bets"]) or "<p>No side bets.</p>"
    return (
        f'<section id="{escape(g["game"])}"><h2>{escape(g["title"])} (<code>{escape(g["game"])}</code>)</h2>'
        f"<p>Rules version <code>{escape(g['rules_version'])}</code>; dealer qualifies with "
        f"{escape(g['dealer_qualifies'])}.</p>{wagers}{decisions}{_main(g)}"
        f'<h3 id="{escape(g["game"])}-side">Side bets and bonus tables</h3>{side}</section>'
    )


def render_html(report: Mapping[str, Any]) -> str:
    """The report as one HTML document (UTF-8 text)."""
    toc = "".join(
        f'<li><a href="#{anchor}">{escape(title)}</a></li>'
        for anchor, title in [
            ("summary", "Summary"),
            ("versions", "Versions"),
            ("rng", "Random number generator"),
            ("shuffle", "Shuffle test"),
            *((g["game"], g["title"]) for g in report["games"]),
        ]
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        "<title>Certification pack: house games</title>"
        f"<style>{CSS}</style></head><body>"
        "<h1>Certification pack: house-banked games</h1>"
        f"<p>Generated {escape(report.get('generated_at') or '')}; report format "
        f"<code>{escape(report['format'])}</code>; the same figures are in <code>report.json</code>.</p>"
        f"<nav><ul>{toc}</ul></nav>"
        f"{_summary(report)}{_versions(report)}{_rng(report)}{_shuffle(report)}"
        + "".join(_game(g) for g in report["games"])
        + "</body></html>\n"
    )
