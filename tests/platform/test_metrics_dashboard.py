"""The Grafana dashboard (docs/grafana/casino-dashboard.json) and the metrics'
page (docs/live.md, "Metrics") stay true to the code: the dashboard is valid
Grafana JSON with a Prometheus datasource variable, every metric it queries is
one the code defines, every series the code defines has a panel and a line in
the docs."""

from __future__ import annotations

import json
import re
from pathlib import Path

from prometheus_client.metrics import MetricWrapperBase

from casino import metrics
from casino.metrics_view import LedgerCollector

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "docs" / "grafana" / "casino-dashboard.json"
SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}


def defined_families() -> dict[str, str]:
    """Every ``casino_`` metric family the code defines (name -> type): the
    process's metrics (the lazy gauges made) and the ledger collector's."""
    made = [value for value in vars(metrics).values() if isinstance(value, MetricWrapperBase)]
    made += [metrics._feed_position(), *metrics._verify_gauges()]
    families = {family.name: family.type for metric in made for family in metric.describe()}
    families.update({family.name: family.type for family in LedgerCollector().describe()})
    return families


def series_names(families: dict[str, str]) -> set[str]:
    return {name + suffix for name, kind in families.items() for suffix in SUFFIXES[kind]}


def queried(dashboard: dict) -> set[str]:
    exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    return {name for expr in exprs for name in re.findall(r"\bcasino_[a-z0-9_]+", expr)}


def test_the_dashboard_queries_only_defined_series_and_every_one_of_them():
    dashboard = json.loads(DASHBOARD.read_text())
    families = defined_families()
    defined = series_names(families)
    used = queried(dashboard)
    assert used - defined == set(), "queried but not defined"
    for name, kind in families.items():
        assert any(n in used for n in (name + suffix for suffix in SUFFIXES[kind])), f"no panel for {name}"
    # The series issue 36 names are among them.
    named = {"commands", "command_duration_seconds", "group_commit_batch_size", "dealer_phase_lag_seconds",
             "task_queue_lag_seconds", "feed_lag_seconds", "feed_read_position", "ws_connections", "ws_closes",
             "ws_too_slow", "ledger_seal_age_seconds", "ledger_verify_ok", "rg_refusals"}  # fmt: skip
    assert {f"casino_{name}" for name in named} <= set(families)


def test_the_dashboard_is_grafana_json_with_a_prometheus_datasource_variable():
    dashboard = json.loads(DASHBOARD.read_text())
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in dashboard["panels"]:
        assert set(panel["gridPos"]) == {"h", "w", "x", "y"}
        assert panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24
        if panel["type"] != "row":
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
            assert panel["targets"], panel["title"]
            assert all(t["datasource"]["uid"] == "${datasource}" for t in panel["targets"])


def test_every_series_is_documented_in_docs_live():
    text = (ROOT / "docs" / "live.md").read_text()
    section = text[text.index("## Metrics") :]
    for name, kind in defined_families().items():
        shown = name + ("_total" if kind == "counter" else "")
        assert f"`{shown}`" in section, shown
