"""A smoke slice of ``bench live_round`` (docs/benchmarks.md): a tiny round of
each size plays and settles on a scratch PostgreSQL database, its raw COPY
peer runs, the last line is the JSON of figures with every ratio of the
benchmark, and the closing ``verify_ledger`` finds nothing. It checks that the
benchmark runs, never how fast (speed is never a test here)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_bench_live_round_prints_its_ratios_and_leaves_the_ledger_clean() -> None:
    out = StringIO()
    call_command("bench", "live_round", "-o", "players=20", "-o", "small=5", stdout=out)
    figures = json.loads(out.getvalue().strip().splitlines()[-1])
    numeric = ("settle_seconds", "settle_copy_seconds", "settle_ratio", "settle_seconds_small", "settle_growth")
    for key in numeric:
        assert isinstance(figures[key], int | float), key
        assert figures[key] > 0, key
    assert (figures["players"], figures["small_players"]) == (20, 5)
    written = figures["rows_written"]
    # Every player's row settled; each one's settled event and the round's own events.
    assert written["games_playerround (updated)"] == 20
    assert written["ledger_event"] > 20
    # Double entry: each transfer has its debit's and its credit's statement line.
    assert written["ledger_statement_line"] == 2 * written["ledger_transfer"]
    assert figures["settle_rows"] == sum(
        written[table]
        for table in ("ledger_event", "ledger_transfer", "ledger_statement_line", "games_playerround (updated)")
    )
    # One seed deals both rounds the same cards: each player's settlement writes the same rows.
    small = figures["rows_written_small"]
    assert small["games_playerround (updated)"] == 5
    assert small["ledger_transfer"] * 20 == written["ledger_transfer"] * 5
    assert figures["verify_ledger_problems"] == 0
