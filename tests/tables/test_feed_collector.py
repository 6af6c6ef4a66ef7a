"""The feed hands a batch out with CPython's cyclic garbage collector held off
until the writers it woke have written their frames (``games.tables.feed.hand_out``):
a full collection of a process holding thousands of websockets stops every
thread for a large fraction of a second, and one started by the hand-out's
own allocations delayed every watcher of the batch (``bench fanout``, issue 39)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import pytest

from games.tables import collector
from games.tables.feed import Delta, Outbox, Subscriber, hand_out, join, leave

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
