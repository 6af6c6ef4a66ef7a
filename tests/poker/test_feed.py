"""The poker websocket's shared feed: every connection of one process to one
table is served by the table's one ``games.tables.feed.TableFeed`` (fed by the
process's one reader of the event store, not one poll per connection), and
each connection still gets the events redacted for its own viewer: its hole
cards privately, nobody else's (issue 7).
In process: the real ASGI application driven through asgiref's communicator
(Channels' own ``channels.testing`` imports daphne, which is not installed)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from asgiref.testing import ApplicationCommunicator
from django.db import connections
from django.utils import timezone

from casino.asgi import application
from casino.auth import issue_ws_ticket
from games.poker import services
from games.poker.realtime.consumers import FAMILY
from games.tables.feed import feed_of
from tests.poker.tables import advance, key, make_player, make_table
from tests.poker.test_tables import AA_VS_KK

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


class Socket(ApplicationCommunicator):
    """One websocket to the ASGI application, in process."""

    def __init__(self, path: str, query: str) -> None:
        headers = [(b"origin", b"http://localhost"), (b"host", b"localhost")]
        scope = {
            "type": "websocket", "path": path, "raw_path": path.encode(), "query_string": query.encode(),
            "headers": headers, "subprotocols": [], "client": ("127.0.0.1", 1), "server": ("localhost", 80),
        }  # fmt: skip
        super().__init__(application, scope)

    async def connect(self) -> bool:
        await self.send_input({"type": "websocket.connect"})
        return (await self.receive_output(10))["type"] == "websocket.accept"

    async def receive_json(self, timeout: float = 5.0) -> dict[str, Any]:
        message = await self.receive_output(timeout)
        assert message["type"] == "websocket.send", message
        return dict(json.loads(message["text"]))

    async def until(self, wanted: str) -> list[dict[str, Any]]:
        """Messages received until one of type ``wanted`` (that one included)."""
        seen: list[dict[str, Any]] = []
        while not seen or seen[-1]["type"] != wanted:
            seen.append(await self.receive_json())
        return seen

    async def close(self) -> None:
        await self.send_input({"type": "websocket.disconnect", "code": 1000})
        await self.wait(5)


def test_one_feed_per_table_and_process_each_viewer_sees_only_their_own_cards() -> None:
    # Real time and long pauses: should a dealer worker be running, it
    # must not deal (or time anyone out) before this test does.
    table = make_table(between_hands_seconds=3600, turn_seconds=3600)
    players = [make_player() for _ in range(2)]
    for number, player in enumerate(players, start=1):
        services.sit_down(table_id=table.pk, player_id=player, seat_number=number, buy_in=1000,
                          idempotency_key=key("sit"), now=timezone.now())  # fmt: skip

    async def scenario() -> tuple[int, list[list[dict[str, Any]]], bool]:
        tickets = [await sync_to_async(issue_ws_ticket)(user_id=player) for player in players]
        sockets = [Socket(f"/ws/poker/{table.pk}/", f"ticket={ticket}") for ticket in tickets]
        for socket in sockets:
            assert await socket.connect()
            assert (await socket.receive_json(10))["type"] == "snapshot"
        feed = feed_of(FAMILY, table.pk)
        assert feed is not None
        subscribers = len(feed.subscribers)
        await sync_to_async(advance)(table, cards=AA_VS_KK)  # the dealer deals the hand
        received = [await socket.until("private") for socket in sockets]
        # Both viewers' messages: let the other's hole cards arrive too.
        await asyncio.sleep(0.6)
        for socket, messages in zip(sockets, received, strict=True):
            while not await socket.receive_nothing(timeout=0.1):
                messages.append(await socket.receive_json())
            await socket.close()
        # The consumers' database work ran in asgiref's thread: close its connection there.
        await sync_to_async(connections.close_all)()
        return subscribers, received, feed_of(FAMILY, table.pk) is not None

    subscribers, received, still_there = asyncio.run(scenario())
    assert subscribers == 2
    assert not still_there  # the last viewer gone, the feed stops
    for player, messages in zip(players, received, strict=True):
        dealt = [m for m in messages if m.get("event", {}).get("type") == "poker.hole_cards_dealt"]
        own = [m for m in dealt if m["type"] == "private"]
        others = [m for m in dealt if m["type"] == "delta"]
        assert len(own) == 1, player
        assert all(own[0]["event"]["cards"]), player
        assert others, player
        assert all(card is None for m in others for card in m["event"]["cards"]), player
