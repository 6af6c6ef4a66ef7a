"""The process's one reader of the event log (``games.tables.feed``) presents only the
tables its own connections watch: presenting (redaction, JSON, balances) costs
far more than reading, and a process would otherwise pay for every table of the
casino on every bet."""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterator, Sequence

import pytest
from django.db import connection, connections, transaction
from django.utils import timezone

import games.house.realtime.relay  # noqa: F401  (registers the house translator)
from games.house.realtime.relay import FAMILY
from games.house.services import start_table
from games.tables import feed
from games.tables.feed import Delta, next_batch, register_translator
from ledger.services import NewEvent, append_events
from ledger.services.events import GlobalPosition, LogFollower, RecordedEvent, head_position
from tests.house.services.conftest import make_table


@pytest.mark.django_db(transaction=True)
def test_only_watched_tables_are_presented() -> None:
    watched, other = make_table("uth"), make_table("uth")
    for table in (watched, other):
        start_table(table_id=table.pk, now=timezone.now())
    follower = LogFollower()
    events, deltas = next_batch(follower, {FAMILY: frozenset({watched.pk})})
    assert follower.position != GlobalPosition()
    for table in (watched, other):
        table.refresh_from_db()
    assert {e.stream_id for e in events} >= {f"round-{t.current_round_id}" for t in (watched, other)}
    assert deltas, "the watched table's round opening is presented"
    assert {table_id for _, table_id, _ in deltas} == {watched.pk}
    again, nothing = next_batch(LogFollower(), {})
    assert len(again) == len(events)
    assert nothing == []


def stream_translator(events: Sequence[RecordedEvent], tables: Collection[int] | None) -> list[tuple[str, int, Delta]]:
    """Table 1's lane ``seq``: one delta per event of the stream ``lane-order``, at its version."""
    return [("lane-test", 1, Delta(public=str(e.version), lane="seq", position=e.version))
            for e in events if e.stream_id == "lane-order"]  # fmt: skip


@pytest.fixture
def lane_family() -> Iterator[None]:
    register_translator("lane-test", stream_translator)
    yield
    feed._translators.pop("lane-test", None)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("lane_family")
def test_a_tables_deltas_go_out_in_its_order_when_an_older_transaction_appends_its_next_event() -> None:
    """Transaction ids are handed out at a transaction's first write, not at its
    commit: T1 takes its id, T2 appends the table's event 1 and commits, then T1
    appends event 2. The log's ``(txid, position)`` order has 2 before 1; the
    table's watchers still get 1 then 2."""
    follower = LogFollower(after=head_position())
    took_id, may_append = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def older() -> None:
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("SELECT txid_current()")
                took_id.set()
                assert may_append.wait(10)
                append_events(stream_id="lane-order", expected_version=1, events=[NewEvent("lane.e", {})])
        except BaseException as exc:  # surfaced below
            errors.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=older)
    thread.start()
    try:
        assert took_id.wait(10)
        append_events(stream_id="lane-order", expected_version=0, events=[NewEvent("lane.e", {})])
    finally:
        may_append.set()
        thread.join(10)
    assert not errors
    events, deltas = next_batch(follower, {"lane-test": frozenset({1})})
    assert [e.version for e in events if e.stream_id == "lane-order"] == [2, 1]  # the log's order
    assert [d.position for _, _, d in deltas] == [1, 2]  # the table's
