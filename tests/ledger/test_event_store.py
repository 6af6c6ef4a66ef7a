"""The event store: append with expected version, read, replay, upcasting, global order."""

from __future__ import annotations

import threading
import uuid

import pytest
from django.db import connection, connections, transaction

from ledger.canonical import GENESIS_HASH, canonical_json, chain_hash, event_body
from ledger.errors import InvalidEvent, StaleStreamVersion
from ledger.event_types import DEPOSITED
from ledger.services import (
    GlobalPosition,
    NewEvent,
    StreamAppend,
    append_events,
    position_of,
    read_global,
    read_stream,
    replay,
)
from ledger.services.events import timestamp
from tests.db import wait_until_readable

from .conftest import snapshot

pytestmark = pytest.mark.django_db


@pytest.mark.postgres
def test_event_data_and_metadata_are_stored_as_their_canonical_text_through_every_writer(settings):
    # PostgreSQL ``json`` keeps the text written (``jsonb`` would reorder keys
    # and re-space it): what is stored is exactly what was hashed. Written by
    # ``append_events``, the bet statement and the settlement's COPY alike.
    from ledger.services import EventRef, HoldSettlement, open_hold, settle_batch
    from ledger.services.verify import verify_ledger

    from .conftest import CURRENCY, fund, house_account

    data = {"zeta": [3, {"b": "é", "a": None}], "alpha": True, "mid": -7}
    metadata = {"actor": "dealer", "correlation_id": "c-1"}
    append_events(stream_id="canon-1", expected_version=0, events=[NewEvent("test.noted", data)], metadata=metadata)
    accounts = fund("canon", 1_000)
    house = house_account(table_id="canon", currency=CURRENCY)
    bet = StreamAppend("canon-2", 0, [NewEvent("test.bet", data)], metadata)
    held = open_hold(source=accounts.wallet, escrow=accounts.held, destination=house, amount=100, currency=CURRENCY,
                     idempotency_key="canon-bet", cause=bet)  # fmt: skip
    settle_batch(idempotency_key="canon-settle", currency=CURRENCY,
                 appends=[StreamAppend("canon-2", 1, [NewEvent("test.settled", data)], metadata)],
                 holds=[HoldSettlement(uuid.UUID(held.hold_id), 100, EventRef("canon-2", 2))])  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_typeof(data)::text, data::text, metadata::text FROM ledger_event "
            "WHERE stream_id IN ('canon-1', 'canon-2') ORDER BY id"
        )
        rows = cursor.fetchall()
    # The bet and the settlement carry their money legs (docs/ledger.md, "Money legs in the events").
    opened = [["hold", accounts.wallet, accounts.held, 100, CURRENCY, held.hold_id, house]]
    written = [data, {**data, "legs": opened}, {**data, "legs": [["post", held.hold_id, 100]]}]
    expected = [("json", canonical_json(d).decode(), canonical_json(metadata).decode()) for d in written]
    assert rows == expected
    assert [e.data for e in read_stream(stream_id="canon-2")] == written[1:]
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []


def test_append_assigns_gap_free_versions_and_chains_hashes():
    first = append_events(
        stream_id="round-1",
        expected_version=0,
        events=[NewEvent("round.opened", {"table": 7})],
        metadata={"actor": "dealer", "correlation_id": "c1"},
    )
    more = append_events(
        stream_id="round-1",
        expected_version=1,
        events=[NewEvent("round.card_dealt", {"card": "As"}), NewEvent("round.closed", {})],
        metadata={"actor": "dealer", "causation_id": str(first[0].position)},
    )
    events = read_stream(stream_id="round-1")
    assert [e.version for e in events] == [1, 2, 3]
    assert [e.type for e in events] == ["round.opened", "round.card_dealt", "round.closed"]
    assert events[0].prev_hash == GENESIS_HASH
    assert events[1].prev_hash == events[0].hash
    assert events[2].prev_hash == events[1].hash
    assert events[0].position < events[1].position < events[2].position
    assert events[1].metadata == {"actor": "dealer", "causation_id": str(first[0].position)}
    assert [e.hash for e in more] == [e.hash for e in events[1:]]
    # The hash is SHA-256(prev || canonical body), recomputable from the envelope alone.
    e = events[1]
    body = event_body(
        stream_id=e.stream_id,
        version=e.version,
        type=e.type,
        schema_version=e.schema_version,
        data=e.data,
        metadata=e.metadata,
        recorded_at=timestamp(e.recorded_at),
    )
    assert chain_hash(e.prev_hash, canonical_json(body)) == e.hash


def test_stale_expected_version_writes_nothing():
    append_events(stream_id="s", expected_version=0, events=[NewEvent("x.happened", {"n": 1})])
    before = snapshot()
    for expected in (0, 2, 5):
        with pytest.raises(StaleStreamVersion) as caught, transaction.atomic():
            append_events(stream_id="s", expected_version=expected, events=[NewEvent("x.happened", {"n": 2})])
        assert caught.value.code == "stale_stream_version"
    assert snapshot() == before


@pytest.mark.parametrize(
    ("event", "stream"),
    [
        (NewEvent("x.bad", {"amount": 1.5}), "s"),  # floats have no canonical form
        (NewEvent("x.bad", {"reason": "jam\x00med"}), "s"),  # nor has NUL (the json column would keep it)
        (NewEvent("", {}), "s"),
        (NewEvent("x.bad", {}, schema_version=0), "s"),
        (NewEvent(DEPOSITED, {}, schema_version=3), "s"),  # newer than the registered current version
        (NewEvent("x.ok", {}), ""),
    ],
)
def test_invalid_events_are_refused_and_nothing_is_written(event, stream):
    before = snapshot()
    with pytest.raises(InvalidEvent) as caught, transaction.atomic():
        append_events(stream_id=stream, expected_version=0, events=[event])
    assert caught.value.code == "invalid_event"
    assert snapshot() == before


def test_append_with_no_expectation_appends_at_the_head():
    append_events(stream_id="acc", expected_version=None, events=[NewEvent("a.b", {})])
    append_events(stream_id="acc", expected_version=None, events=[NewEvent("a.b", {})])
    assert [e.version for e in read_stream(stream_id="acc")] == [1, 2]


def test_replay_folds_the_stream_through_apply():
    append_events(stream_id="p", expected_version=0, events=[NewEvent("bet.placed", {"amount": a}) for a in (5, 7, 9)])
    append_events(stream_id="other", expected_version=0, events=[NewEvent("bet.placed", {"amount": 1000})])

    def apply(total: int, event) -> int:
        return total + event.data["amount"]

    assert replay(stream_id="p", apply=apply, initial=0) == (21, 3)
    assert replay(stream_id="missing", apply=apply, initial=0) == (0, 0)


def test_replay_folds_with_the_collector_paused_and_gives_it_back_as_it_was():
    """The fold runs with the cyclic collector paused (its full collections walked the
    whole heap once per few pages: a third of a long replay), and leaves it as found."""
    import gc

    append_events(stream_id="gc", expected_version=0, events=[NewEvent("bet.placed", {"amount": a}) for a in (1, 2)])
    seen: list[bool] = []

    def apply(total: int, event) -> int:
        seen.append(gc.isenabled())
        return total + event.data["amount"]

    was = gc.isenabled()
    gc.enable()
    try:
        assert replay(stream_id="gc", apply=apply, initial=0) == (3, 2)
        assert seen == [False, False]
        assert gc.isenabled()
        gc.disable()  # a caller that paused it already: left paused
        assert replay(stream_id="gc", apply=apply, initial=0) == (3, 2)
        assert not gc.isenabled()
    finally:
        gc.enable() if was else gc.disable()


def test_upcaster_turns_a_stored_v1_deposit_into_the_current_shape():
    v1 = {"account_id": 3, "amount": "12.34", "currency": "EUR", "reference": "psp-1"}
    [stored] = append_events(stream_id="account-3", expected_version=0, events=[NewEvent(DEPOSITED, v1, 1)])
    [read] = read_stream(stream_id="account-3")
    assert read.schema_version == 2
    assert read.data == {"account_id": 3, "amount": 1234, "currency": "EUR", "external_reference": "psp-1", "actor": ""}
    # The stored row (and its hash) keep the original version-1 body.
    with connection.cursor() as cursor:
        cursor.execute("SELECT schema_version, hash FROM ledger_event WHERE id = %s", [stored.position])
        assert cursor.fetchone() == (1, stored.hash)


def test_read_global_returns_committed_events_in_order_from_a_position():
    for n in range(5):
        append_events(stream_id=f"g{n}", expected_version=0, events=[NewEvent("g.e", {"n": n})])
    # Inside this test's own (still open) transaction nothing is committed yet
    # on PostgreSQL, so the log must not show these events; SQLite has one
    # writer, whose own rows are the newest and are below the bound.
    seen = read_global(after=GlobalPosition(), limit=100)
    if connection.vendor == "postgresql":
        assert seen == []
    else:
        page1 = read_global(limit=2)
        page2 = read_global(after=position_of(page1[-1]), limit=10)
        assert [e.data["n"] for e in page1 + page2] == [0, 1, 2, 3, 4]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_late_committing_event_is_never_skipped_by_a_global_reader():
    """T1 appends first (smaller position) but commits after T2: a reader
    polling between the two commits must not advance past T1's event."""
    t1_appended, t2_committed, t1_may_commit = threading.Event(), threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def writer(stream: str, before_commit: threading.Event | None, after_append: threading.Event | None):
        try:
            with transaction.atomic():
                append_events(stream_id=stream, expected_version=0, events=[NewEvent("race.e", {"s": stream})])
                if after_append:
                    after_append.set()
                if before_commit:
                    assert before_commit.wait(10)
        except BaseException as exc:  # pragma: no cover - surfaced below
            errors.append(exc)
        finally:
            connections.close_all()

    t1 = threading.Thread(target=writer, args=("race-1", t1_may_commit, t1_appended))
    t1.start()
    assert t1_appended.wait(10)
    t2 = threading.Thread(target=writer, args=("race-2", None, None))
    t2.start()
    t2.join(10)
    t2_committed.set()

    seen = read_global(limit=100)  # T2 committed, T1 still open
    assert [e.stream_id for e in seen] == []
    t1_may_commit.set()
    t1.join(10)
    assert not errors
    wait_until_readable()  # other databases' transactions on this shared server may hold the bound back
    seen = read_global(limit=100)
    assert [e.stream_id for e in seen] == ["race-1", "race-2"]
    assert seen[0].position < seen[1].position
    # A reader resuming from the first event still gets the second.
    assert [e.stream_id for e in read_global(after=position_of(seen[0]))] == ["race-2"]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_appends_to_one_stream_one_wins_the_other_is_stale():
    append_events(stream_id="hot", expected_version=0, events=[NewEvent("h.e", {})])
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def writer(n: int):
        try:
            barrier.wait(5)
            with transaction.atomic():
                append_events(stream_id="hot", expected_version=1, events=[NewEvent("h.e", {"n": n})])
            outcomes.append("ok")
        except StaleStreamVersion:
            outcomes.append("stale")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert sorted(outcomes) == ["ok", "stale"]
    assert [e.version for e in read_stream(stream_id="hot")] == [1, 2]
