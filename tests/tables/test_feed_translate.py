"""The realtime feed survives a translator that fails on one event (games/tables/feed.py,
``translate``): the other events of the batch are still presented, the bad one
is skipped and logged, and a database error still propagates so the reader
retries the batch. Before, one bad event made the reader retry the same batch
forever and every table's websocket went silent."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from datetime import UTC, datetime

import pytest
from django.db import OperationalError

from games.tables import feed
from ledger.services.events import RecordedEvent

FAMILY = "test-family"


def event(position: int, kind: str) -> RecordedEvent:
    return RecordedEvent(position, 1, f"test-{position}", 1, kind, 1, {}, {}, datetime(2026, 11, 26, tzinfo=UTC),
                         "0" * 64, "0" * 64)  # fmt: skip


def translator(events: Sequence[RecordedEvent], tables: Collection[int] | None) -> list[tuple[str, int, feed.Delta]]:
    out = []
    for recorded in events:
        if recorded.type == "bad":
            raise KeyError("a presenter bug")
        if recorded.type == "db":
            raise OperationalError("connection lost")
        out.append((FAMILY, 1, feed.Delta(public=recorded.type, lane="seq", position=recorded.position)))
    return out


@pytest.fixture
def registered() -> Iterator[None]:
    feed.register_translator(FAMILY, translator)
    yield
    feed._translators.pop(FAMILY, None)


@pytest.mark.usefixtures("registered")
def test_a_bad_event_is_skipped_and_the_rest_of_the_batch_is_presented(caplog: pytest.LogCaptureFixture) -> None:
    deltas = feed.translate([event(1, "good"), event(2, "bad"), event(3, "also-good")], {FAMILY: frozenset({1})})
    assert [delta.public for _, _, delta in deltas] == ["good", "also-good"]
    assert "skipping event 2 of test-2 (bad)" in caplog.text


@pytest.mark.usefixtures("registered")
def test_a_database_error_propagates_so_the_batch_is_retried() -> None:
    with pytest.raises(OperationalError):
        feed.translate([event(1, "good"), event(2, "db")], {FAMILY: frozenset({1})})
