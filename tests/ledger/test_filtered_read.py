"""``read_stream_filtered`` and ``count_stream_filtered``: a stream's events of
some types whose top-level data fields equal given values (as text), below a
global position, in version order, paged (the poker seat history, issue #22)."""

from __future__ import annotations

import uuid

import pytest

from ledger.services import (
    NewEvent,
    RecordedEvent,
    append_events,
    count_stream_filtered,
    read_stream,
    read_stream_filtered,
)

pytestmark = pytest.mark.django_db


def _stream() -> str:
    stream = f"test-filtered-{uuid.uuid4().hex}"
    events = [
        NewEvent("t.a", {"who": 7, "n": 1}),
        NewEvent("t.b", {"who": 7, "n": 2}),
        NewEvent("t.a", {"who": 8, "n": 3}),
        NewEvent("t.a", {"who": 7, "n": 4}),
        NewEvent("t.c", {"who": 7, "n": 5}),
    ]
    append_events(stream_id=stream, expected_version=0, events=events, metadata={})
    # Another stream's matching events are never read.
    append_events(stream_id=f"{stream}-other", expected_version=0, events=[NewEvent("t.a", {"who": 7, "n": 9})])
    return stream


def numbers(events: list[RecordedEvent]) -> list[int]:
    return [e.data["n"] for e in events]


def test_only_the_types_and_field_values_asked_for_in_version_order() -> None:
    stream = _stream()
    seven = {"who": "7"}
    assert numbers(read_stream_filtered(stream_id=stream, types=["t.a", "t.b"], data_equals=seven)) == [1, 2, 4]
    assert count_stream_filtered(stream_id=stream, types=["t.a", "t.b"], data_equals=seven) == 3
    assert numbers(read_stream_filtered(stream_id=stream, types=["t.a"])) == [1, 3, 4]
    assert read_stream_filtered(stream_id=stream, types=["t.a"], data_equals={"who": "70"}) == []


def test_paged_and_below_a_global_position() -> None:
    stream = _stream()
    types = ["t.a", "t.b", "t.c"]
    assert numbers(read_stream_filtered(stream_id=stream, types=types, limit=2, offset=1)) == [2, 3]
    assert numbers(read_stream_filtered(stream_id=stream, types=types, offset=3)) == [4, 5]
    assert read_stream_filtered(stream_id=stream, types=types, limit=2, offset=10) == []
    fourth = read_stream(stream_id=stream)[3].position
    assert numbers(read_stream_filtered(stream_id=stream, types=types, before_position=fourth)) == [1, 2, 3]
    assert count_stream_filtered(stream_id=stream, types=types, before_position=fourth) == 3


def test_no_types_is_a_caller_error() -> None:
    with pytest.raises(ValueError, match="at least one event type"):
        read_stream_filtered(stream_id="any", types=[])
