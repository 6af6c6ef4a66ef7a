"""A smoke slice of ``bench poker_action`` (``games.benchmarks.commands_poker``):
the poker action as a service call and its raw psycopg floor run end to end on
a scratch PostgreSQL database at a tiny size, print their figures and ratio as
the last line's JSON, and leave a ledger ``verify_ledger`` finds nothing wrong
with. Never a speed check."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_bench_poker_action_prints_its_ratio_and_leaves_a_clean_ledger() -> None:
    out = StringIO()
    call_command("bench", "poker_action", "-o", "actions=12", "-o", "rounds=2", "-o", "players=3", stdout=out)
    figures = json.loads(out.getvalue().strip().splitlines()[-1])
    for name in ("poker_action_ms", "poker_action_floor_ms", "poker_action_ratio"):
        assert isinstance(figures[name], int | float), name
        assert not isinstance(figures[name], bool), name
        assert figures[name] > 0, name
    assert figures["poker_actions"] == 12
    assert figures["poker_verify_ledger_problems"] == 0
