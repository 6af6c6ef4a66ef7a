"""A websocket consumer ends after its client's close even when the cancellation
of its pending channel-layer receive is lost (issue 36: a poker consumer
outlived its client's close now and then, ``casino_ws_connections`` stayed at 1).

Channels ends a consumer by cancelling that receive and awaiting it
(``channels.utils.await_many_dispatch``); channels_redis's receive blocks in a
redis-py ``BZPOPMIN`` loop, and a cancellation that lands as a reply arrives is
lost there (seen in a task dump of a lingering consumer: the receive task
"cancelling", still popping). The receive here loses its first cancellation the
same way: it keeps waiting until cancelled again."""

from __future__ import annotations

import asyncio
from typing import Any

from channels.exceptions import StopConsumer
from channels.utils import await_many_dispatch

from games.poker.realtime.consumers import PokerTableConsumer

# Generous: the consumer ends within a fraction of a second; a lingering one never does.
BOUND_SECONDS = 30


class LosesOneCancellation:
    """A receive that waits for a message that never comes and, like redis-py's
    blocking pop, swallows the first cancellation that reaches it."""

    def __init__(self) -> None:
        self.cancellations = 0
        self.ended = asyncio.Event()

    async def __call__(self) -> dict[str, Any]:
        try:
            while True:
                try:
                    await asyncio.sleep(3600)
                except asyncio.CancelledError:
                    self.cancellations += 1
                    if self.cancellations > 1:
                        raise
        finally:
            self.ended.set()


def test_a_consumer_ends_when_its_channel_receive_loses_a_cancellation() -> None:
    async def scenario() -> None:
        consumer = PokerTableConsumer()
        layer_receive = LosesOneCancellation()
        consumer.channel_receive = layer_receive  # as Channels' AsyncConsumer.__call__ sets it
        disconnected = asyncio.Event()

        async def client_receive() -> dict[str, Any]:
            await asyncio.sleep(0)
            return {"type": "websocket.disconnect", "code": 1000}

        async def dispatch(message: dict[str, Any]) -> None:
            assert message["type"] == "websocket.disconnect"
            disconnected.set()
            raise StopConsumer

        ended = asyncio.ensure_future(await_many_dispatch([client_receive, consumer.channel_receive], dispatch))
        done, _ = await asyncio.wait({ended}, timeout=BOUND_SECONDS)
        assert disconnected.is_set()
        assert ended in done, "the consumer outlived its client's close: its channel receive was never ended"
        assert isinstance(ended.exception(), StopConsumer)  # Channels' __call__ takes it as a clean end
        assert layer_receive.ended.is_set()
        assert layer_receive.cancellations >= 2  # cancelled again after the first was lost

    asyncio.run(scenario())


def test_a_message_received_before_the_end_is_dispatched() -> None:
    """The wrapped receive still hands over what the channel layer delivers."""

    async def scenario() -> None:
        consumer = PokerTableConsumer()

        async def layer_receive() -> dict[str, Any]:
            return {"type": "presence.replaced", "connection": "other"}

        consumer.channel_receive = layer_receive
        assert consumer.channel_receive is not None
        assert await asyncio.wait_for(consumer.channel_receive(), BOUND_SECONDS) == {
            "type": "presence.replaced",
            "connection": "other",
        }

    asyncio.run(scenario())
