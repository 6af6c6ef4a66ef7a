"""The process's one reader of the event log (``games.tables.feed``) presents only the
tables its own connections watch: presenting (redaction, JSON, balances) costs
far more than reading, and a process would otherwise pay for every table of the
casino on every bet."""

from __future__ import annotations

import pytest
from django.utils import timezone

import games.house.realtime.relay  # noqa: F401  (registers the house translator)
from games.house.realtime.relay import FAMILY
from games.house.services import start_table
from games.tables.feed import next_batch
from ledger.services.events import GlobalPosition
from tests.house.services.conftest import make_table


@pytest.mark.django_db(transaction=True)
def test_only_watched_tables_are_presented() -> None:
    watched, other = make_table("uth"), make_table("uth")
    for table in (watched, other):
        start_table(table_id=table.pk, now=timezone.now())
    position, events, deltas = next_batch(GlobalPosition(), {FAMILY: frozenset({watched.pk})})
    assert position != GlobalPosition()
    for table in (watched, other):
        table.refresh_from_db()
    assert {e.stream_id for e in events} >= {f"round-{t.current_round_id}" for t in (watched, other)}
    assert deltas, "the watched table's round opening is presented"
    assert {table_id for _, table_id, _ in deltas} == {watched.pk}
    _, again, nothing = next_batch(GlobalPosition(), {})
    assert len(again) == len(events)
    assert nothing == []
