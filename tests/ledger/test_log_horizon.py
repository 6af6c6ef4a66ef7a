"""Issue 35, part 3: the global log's read position waits on no transaction of
another database, and a stuck transaction of this one delays a follower by a
bounded time (docs/ledger.md, "Global order"). Real PostgreSQL sessions hold
the transactions open: one in a scratch database of the same server, others
in this test database on their own connections."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import psycopg
import pytest
from django.db import connection, connections, transaction
from psycopg import sql

from casino.processes import database_url_of
from ledger.services import NewEvent, append_events
from ledger.services.events import LogFollower, head_position, read_global, safe_txid_bound
from ledger.services.seals import seal, seal_key
from ledger.services.verify import verify_ledger
from tests.db import idle_in_another_database, idle_in_transaction
from tests.platform.conftest import drop_role, unique_role_name

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
GAP = 1.0


@pytest.fixture
def other_database() -> Iterator[psycopg.Connection]:
    """A session idle in a transaction in another database of the same server."""
    with idle_in_another_database() as session:
        yield session


def max_txid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT MAX(txid) FROM ledger_event")
        return int(cursor.fetchone()[0])


def append(stream: str) -> None:
    append_events(stream_id=stream, expected_version=0, events=[NewEvent("horizon.e", {"s": stream})])


class OpenWriter:
    """A transaction of this database, on its own thread and connection, that
    appends ``stream``'s event and stays open until ``finish``."""

    def __init__(self, stream: str) -> None:
        self.appended, self.go = threading.Event(), threading.Event()
        self.commit = True
        self.errors: list[BaseException] = []
        self.thread = threading.Thread(target=self._run, args=(stream,))
        self.thread.start()
        assert self.appended.wait(10)

    def _run(self, stream: str) -> None:
        try:
            with transaction.atomic():
                append(stream)
                self.appended.set()
                assert self.go.wait(30)
                if not self.commit:
                    transaction.set_rollback(True)
        except BaseException as exc:  # surfaced by finish
            self.errors.append(exc)
        finally:
            connections.close_all()

    def finish(self, *, commit: bool = True) -> None:
        self.commit = commit
        self.go.set()
        self.thread.join(30)
        assert not self.errors


def streams(follower: LogFollower) -> list[str]:
    return [event.stream_id for event in follower.read()]


def test_a_transaction_of_another_database_holds_back_no_reader_and_no_seal(other_database: psycopg.Connection):
    start = head_position()
    for n in range(3):
        append(f"elsewhere-{n}")
    with connection.cursor() as cursor:
        assert safe_txid_bound(cursor) > max_txid()
    assert [e.stream_id for e in read_global(after=start)] == [f"elsewhere-{n}" for n in range(3)]
    sealed = seal()
    assert sealed is not None
    assert sealed.to_txid > max_txid()
    assert verify_ledger(key=seal_key()) == []
    assert other_database.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS  # still open throughout


def test_the_seal_never_passes_a_running_transaction_of_this_database(other_database: psycopg.Connection):
    seal()  # whatever came before
    stuck = OpenWriter("sealed-late")
    append("sealed-early")  # a younger transaction, committed first
    first = seal()
    # Nothing from the stuck transaction on is sealed: its event could still commit below.
    assert first is None or first.to_txid <= max_txid()
    stuck.finish()
    second = seal()
    assert second is not None
    assert second.to_txid > max_txid()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT stream_id FROM ledger_event WHERE txid >= %s AND txid < %s ORDER BY txid, id",
            [second.from_txid, second.to_txid],
        )
        assert [row[0] for row in cursor.fetchall()] == ["sealed-late", "sealed-early"]
    assert verify_ledger(key=seal_key()) == []


def fake_clock() -> tuple[list[float], Callable[[], float]]:
    now = [0.0]
    return now, lambda: now[0]


def test_a_stuck_transaction_delays_a_follower_by_the_gap_and_its_late_event_still_follows(
    other_database: psycopg.Connection,
):
    """T1 appends first (older transaction id) and stays open past the gap; T2
    commits meanwhile: the follower waits the gap for T1, reads T2's event,
    and reads T1's once it commits, each exactly once."""
    now, clock = fake_clock()
    follower = LogFollower(after=head_position(), gap_seconds=GAP, clock=clock)
    stuck = OpenWriter("late")
    append("early")
    assert streams(follower) == []  # T1 may still commit below T2: wait (within the gap)
    now[0] += GAP / 2
    assert streams(follower) == []
    now[0] += GAP
    assert streams(follower) == ["early"]  # past the gap: read past T1
    assert streams(follower) == []
    append("after")
    assert streams(follower) == ["after"]
    stuck.finish()
    assert streams(follower) == ["late"]  # committed late: delivered, not lost
    append("last")
    assert streams(follower) == ["last"]
    assert streams(follower) == []
    assert follower.skipped == set()


def test_a_skipped_transaction_that_rolls_back_leaves_nothing_to_follow():
    now, clock = fake_clock()
    follower = LogFollower(after=head_position(), gap_seconds=GAP, clock=clock)
    stuck = OpenWriter("never")
    append("kept")
    assert streams(follower) == []
    now[0] += 2 * GAP
    assert streams(follower) == ["kept"]
    assert follower.skipped
    stuck.finish(commit=False)
    assert streams(follower) == []
    assert follower.skipped == set()


def completed_elsewhere() -> None:
    """A transaction that takes an id and commits, writing no event."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT txid_current()")


def test_a_late_event_read_before_the_follower_passes_it_is_not_read_again():
    """The skipped transaction commits before any younger one: its events come
    once (as late ones), never again from the ordinary read that now reaches them."""
    now, clock = fake_clock()
    follower = LogFollower(after=head_position(), gap_seconds=GAP, clock=clock)
    stuck = OpenWriter("alone")
    completed_elsewhere()  # a younger transaction ends: the stuck one is now below the snapshot's xmax
    assert streams(follower) == []
    now[0] += 2 * GAP
    assert streams(follower) == []
    assert follower.skipped
    stuck.finish()
    assert streams(follower) == ["alone"]
    append("next")
    assert streams(follower) == ["next"]
    assert streams(follower) == []


def test_a_rewound_follower_reads_the_same_batch_again():
    now, clock = fake_clock()
    follower = LogFollower(after=head_position(), gap_seconds=GAP, clock=clock)
    stuck = OpenWriter("again-late")
    append("again-early")
    now[0] += 2 * GAP
    assert streams(follower) == []  # first seen now
    now[0] += 2 * GAP
    mark = follower.mark()
    assert streams(follower) == ["again-early"]
    follower.rewind(mark)
    assert streams(follower) == ["again-early"]
    stuck.finish()
    mark = follower.mark()
    assert streams(follower) == ["again-late"]
    follower.rewind(mark)
    assert streams(follower) == ["again-late"]
    assert streams(follower) == []


def test_a_lagging_follower_delivers_a_late_transaction_in_its_place_in_the_log():
    """The follower is behind (its batch limit): a skipped transaction that has
    committed comes once the follower has read up to it, not before older events."""
    now, clock = fake_clock()
    follower = LogFollower(after=head_position(), gap_seconds=GAP, clock=clock)
    for n in range(3):
        append(f"behind-{n}")
    stuck = OpenWriter("behind-late")
    append("behind-after")
    assert [e.stream_id for e in follower.read(limit=1)] == ["behind-0"]
    now[0] += 2 * GAP
    assert [e.stream_id for e in follower.read(limit=1)] == ["behind-1"]
    assert follower.skipped
    stuck.finish()
    assert [e.stream_id for e in follower.read(limit=1)] == ["behind-2"]
    assert [e.stream_id for e in follower.read(limit=1)] == ["behind-late", "behind-after"]
    assert follower.read(limit=1) == []
    assert follower.skipped == set()


def test_a_session_of_a_role_that_cannot_write_events_holds_back_no_seal():
    """Another application on this database, as a role without INSERT on
    ``ledger_event``, leaves a transaction open: the seal does not wait on it."""
    name = unique_role_name("reader")
    with connection.cursor() as cursor:
        cursor.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(name)))
    try:
        url = database_url_of({**connection.settings_dict, "USER": name, "PASSWORD": ""})
        with idle_in_transaction(url) as other_application:
            seal()
            append("not-waited-for")
            sealed = seal()
            assert sealed is not None
            assert sealed.to_txid > max_txid()
            assert other_application.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
    finally:
        drop_role(name)
