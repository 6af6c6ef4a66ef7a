"""A connection's outbox (``games.tables.outbox.Outbox``): ``when_written`` calls
back right after the very frame it names is written, once, and never for a
frame that is not written. The feed counts a snapshot the client owes from that
moment, in bytes on the wire (``games.tables.feed.FeedSocket._snapshot_written``;
docs/websocket.md, "Backpressure")."""

from __future__ import annotations

import asyncio

from games.tables.outbox import Outbox


async def _outbox(sent: list[str], *, gate: asyncio.Event | None = None) -> Outbox:
    async def send(text: str) -> None:
        if gate is not None:
            await gate.wait()
        sent.append(text)

    async def close(code: int) -> None:
        pass

    return Outbox(send=send, close=close, on_gone=lambda: None, limit=8, timeout=60, close_grace=1)


def test_the_callback_runs_right_after_its_frame_is_written_and_once() -> None:
    async def scenario() -> None:
        sent: list[str] = []
        outbox = await _outbox(sent)
        seen: list[list[str]] = []
        snapshot = "".join(["snap", "shot"])  # its own object, equal to no other frame's
        outbox.put("before")
        outbox.put(snapshot)
        outbox.when_written(snapshot, lambda: seen.append(list(sent)))
        outbox.put("after")
        for _ in range(5):
            await asyncio.sleep(0)
        assert sent == ["before", "snapshot", "after"]
        assert seen == [["before", "snapshot"]]  # after the snapshot was written, before the next frame
        await outbox.stop()

    asyncio.run(scenario())


def test_an_equal_frame_that_is_another_object_does_not_call_back() -> None:
    async def scenario() -> None:
        sent: list[str] = []
        outbox = await _outbox(sent)
        seen: list[str] = []
        outbox.when_written("".join(["snap", "shot"]), lambda: seen.append("called"))
        outbox.put("".join(["snap", "shot"]))  # equal text, not the frame named
        for _ in range(3):
            await asyncio.sleep(0)
        assert sent == ["snapshot"]
        assert seen == []
        await outbox.stop()

    asyncio.run(scenario())


def test_a_frame_never_written_never_calls_back() -> None:
    async def scenario() -> None:
        sent: list[str] = []
        gate = asyncio.Event()  # the socket never takes anything
        outbox = await _outbox(sent, gate=gate)
        seen: list[str] = []
        frame = "".join(["snap", "shot"])
        outbox.put(frame)
        outbox.when_written(frame, lambda: seen.append("called"))
        for _ in range(3):
            await asyncio.sleep(0)
        await outbox.stop()  # the connection closes with the frame unwritten
        assert sent == []
        assert seen == []

    asyncio.run(scenario())
