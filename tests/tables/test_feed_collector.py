"""The feed keeps CPython's cyclic garbage collector out of its deliveries
(``games.tables.collector``; docs/websocket.md, "Delivery"): a full
collection of a process holding thousands of websockets stops every thread
for a large fraction of a second.

- It hands a batch out with the collector held off until the writers it woke
  have written their frames (``games.tables.feed.hand_out``): one started by
  the hand-out's own allocations delayed every watcher of the batch.
- The walks of everything that the process's freezer defers to the feed's
  reader run only once delivery is quiet (``walk_if_quiet``), never while
  hand-outs keep coming: one that ran at the next full collection after
  2,000 sockets had connected delayed a whole change (``bench fanout``,
  issue 39). Real ``gc`` and a real freezer, no mocks."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
import weakref
from collections.abc import Iterator

import pytest
from django.test import override_settings

from casino.collector import LongLivedFrozen
from games.tables import collector, feed
from games.tables.collector import delivering, walk_if_quiet, walks_deferred
from games.tables.feed import Delta, Outbox, Subscriber, hand_out, join, leave
from tests.freezing import Node, arrivals_past, dead_frozen_cycle, own_freezer

FAMILY = "collector-test"


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


async def _socket(sent: list[tuple[str, bool]]) -> tuple[Subscriber, Outbox]:
    async def send(text: str) -> None:
        sent.append((text, gc.isenabled()))

    async def close(code: int) -> None:
        pass

    outbox = Outbox(send=send, close=close, on_gone=lambda: None, limit=8, timeout=60, close_grace=1)
    subscriber = Subscriber(7, outbox)
    subscriber.end_snapshot("snapshot", {"seq": 0})
    await asyncio.sleep(0)  # the writer sends the snapshot and waits for more
    return subscriber, outbox


@pytest.mark.usefixtures("collector_on")
def test_the_writers_a_hand_out_wakes_write_before_the_collector_runs_again() -> None:
    async def scenario() -> None:
        sent: list[tuple[str, bool]] = []
        sockets = [await _socket(sent) for _ in range(3)]
        for subscriber, _ in sockets:
            join(FAMILY, 1, subscriber)
        try:
            assert sent == [("snapshot", True)] * 3
            sent.clear()
            hand_out([(FAMILY, 1, Delta(public="one", lane="seq", position=1)),
                      (FAMILY, 1, Delta(public="two", lane="seq", position=2))])  # fmt: skip
            assert not gc.isenabled(), "held while the frames are handed out"
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            assert gc.isenabled(), "enabled again once the woken writers have run"
            assert sent == [("one", False), ("two", False)] * 3, "each writer wrote its frames while held"
        finally:
            for subscriber, outbox in sockets:
                leave(FAMILY, 1, subscriber)
                await outbox.stop()

    asyncio.run(scenario())


@pytest.mark.usefixtures("collector_on")
def test_a_collector_disabled_by_someone_else_is_left_alone() -> None:
    async def scenario() -> None:
        sent: list[tuple[str, bool]] = []
        subscriber, outbox = await _socket(sent)
        join(FAMILY, 2, subscriber)
        try:
            gc.disable()
            hand_out([(FAMILY, 2, Delta(public="one", lane="seq", position=1))])
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            assert not gc.isenabled(), "not enabled by the feed"
            assert sent[-1] == ("one", False)
        finally:
            gc.enable()
            leave(FAMILY, 2, subscriber)
            await outbox.stop()

    asyncio.run(scenario())


def test_an_empty_batch_does_not_touch_the_collector() -> None:
    async def scenario() -> None:
        gc.enable()
        hand_out([])
        assert gc.isenabled()
        assert collector._holds == 0

    asyncio.run(scenario())


@pytest.fixture
def frozen() -> Iterator[LongLivedFrozen]:
    with own_freezer() as freezer:
        yield freezer


# The quiet interval of these tests (CASINO_GC_WALK_QUIET_SECONDS), seconds: a loaded machine
# may stall this process for a good fraction of it without making a busy feed look quiet.
QUIET = 1.5
EVERY = 0.1  # seconds between two hand-outs of the busy feed
HAND_OUTS = 20  # over QUIET in all


def _due(frozen: LongLivedFrozen) -> tuple[weakref.ref[Node], list[list[int]]]:
    """A dead frozen cycle and a walk of everything due (the frozen set grown
    past its ``growth``, below its hard bound); returns the cycle's weak
    reference and what grew the set (the caller keeps it alive)."""
    gone = dead_frozen_cycle()
    arrived = arrivals_past(frozen.thaw_due_above)
    gc.collect()  # they are frozen
    assert frozen.walk_due
    assert gc.get_freeze_count() < frozen.bound_above
    return gone, arrived


@pytest.mark.usefixtures("collector_on")
def test_a_due_walk_waits_while_the_feed_hands_out_and_runs_once_it_has_been_quiet(frozen: LongLivedFrozen) -> None:
    async def scenario() -> None:
        sent: list[tuple[str, bool]] = []
        subscriber, outbox = await _socket(sent)
        join(FAMILY, 3, subscriber)
        try:
            with walks_deferred():
                assert frozen.deferred
                gone, arrived = _due(frozen)
                walks = frozen.walks
                # Steady delivery: HAND_OUTS hand-outs EVERY seconds apart (longer
                # than a quiet interval), the reader's check between them, and
                # full collections among them.
                for position in range(1, HAND_OUTS + 1):
                    hand_out([(FAMILY, 3, Delta(public=str(position), lane="seq", position=position))])
                    assert not walk_if_quiet(quiet=QUIET), "no walk inside a hand-out"
                    await asyncio.sleep(0)
                    await asyncio.sleep(0)
                    assert not walk_if_quiet(quiet=QUIET), "no walk right after one"
                    last_hand_out = time.monotonic()
                    gc.collect()  # a full collection CPython starts during delivery: no walk of everything
                    await asyncio.sleep(EVERY / 2)
                    assert not walk_if_quiet(quiet=QUIET), "no walk between two"
                    await asyncio.sleep(EVERY / 2)
                assert frozen.walks == walks, "no walk of everything while delivery was busy"
                assert gone() is not None
                assert frozen.walk_due
                assert len(sent) == 1 + HAND_OUTS
                # The feed falls quiet: not walked within QUIET of the last hand-out,
                # then the reader's next check runs the walk.
                quiet_for = time.monotonic() - last_hand_out
                assert quiet_for < QUIET / 2
                assert not walk_if_quiet(quiet=QUIET), "quiet for less than the interval"
                while not walk_if_quiet(quiet=QUIET):
                    assert time.monotonic() - last_hand_out < QUIET + 3.0, "the walk ran once quiet"
                    await asyncio.sleep(0.02)
                assert frozen.walks == walks + 1
                assert gone() is None, "the walk reclaimed the cycle that had died frozen"
                assert not frozen.walk_due
                assert frozen.frozen_after_walk >= len(arrived)
            assert not frozen.deferred, "deferred only while the block runs"
        finally:
            leave(FAMILY, 3, subscriber)
            await outbox.stop()

    asyncio.run(scenario())


def test_no_walk_during_a_delivering_block_nor_within_the_quiet_interval_after_it(frozen: LongLivedFrozen) -> None:
    async def scenario() -> None:
        with walks_deferred():
            gone, arrived = _due(frozen)
            await asyncio.sleep(QUIET)  # nothing delivered for a quiet interval
            with delivering():  # the bare broadcast peer's sends, which await
                await asyncio.sleep(QUIET + 0.1)
                assert not walk_if_quiet(quiet=QUIET), "no walk while a delivery awaits its sends"
            assert not walk_if_quiet(quiet=QUIET), "nor right after it"
            await asyncio.sleep(QUIET + 0.05)
            assert walk_if_quiet(quiet=QUIET)
            assert gone() is None
            assert len(arrived) <= frozen.frozen_after_walk

    asyncio.run(scenario())


def test_nothing_to_walk_is_not_walked(frozen: LongLivedFrozen) -> None:
    walks = frozen.walks
    assert not frozen.walk_due
    assert not walk_if_quiet(quiet=0)
    assert frozen.walks == walks


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("collector_on")
def test_the_feeds_reader_runs_a_due_walk_once_delivery_is_quiet_and_not_while_it_is_busy(
    frozen: LongLivedFrozen,
) -> None:
    """The wiring: the process's reader defers the freezer's walks while it
    runs, and runs a due one between two reads of the log, only once no
    hand-out has been made for the quiet interval."""

    async def scenario() -> None:
        sent: list[tuple[str, bool]] = []
        subscriber, outbox = await _socket(sent)
        join(FAMILY, 4, subscriber)
        reader = feed.LogReader()
        reader.ensure_running()
        try:
            await asyncio.wait_for(reader.ready.wait(), 30)
            assert frozen.deferred
            gone, arrived = _due(frozen)
            walks = frozen.walks
            for position in range(1, HAND_OUTS + 1):  # the reader polls the log between them
                hand_out([(FAMILY, 4, Delta(public=str(position), lane="seq", position=position))])
                await asyncio.sleep(EVERY)
            last_hand_out = time.monotonic()
            assert frozen.walks == walks, "no walk of everything while delivery was busy"
            assert gone() is not None
            while frozen.walks == walks:
                assert time.monotonic() - last_hand_out < QUIET + 5.0, "the reader ran the walk once quiet"
                await asyncio.sleep(0.02)
            assert gone() is None, "the walk reclaimed the cycle that had died frozen"
            assert frozen.frozen_after_walk >= len(arrived)
        finally:
            for task in (reader.task, reader.listener):
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
            reader.executor.shutdown(wait=True)
            leave(FAMILY, 4, subscriber)
            await outbox.stop()
        assert not frozen.deferred, "the walks are the collections' own again once the reader stops"

    with override_settings(CASINO_GC_WALK_QUIET_SECONDS=QUIET):
        asyncio.run(scenario())
