"""What poker's two websockets share (``ws/poker/<id>/``, a table, and
``ws/poker/tournaments/<id>/``, a tournament; docs/websocket.md): the
handshake, the snapshot and the frames both answer. Interface layer: no game
rule lives here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from channels.db import database_sync_to_async
from django.db import models

from games.tables.feed import FeedSocket, ready
from games.tables.realtime import CLOSE_TABLE_NOT_FOUND, CLOSE_UNAUTHENTICATED, JSONFrames, message_type, refuse


class PokerSocket(FeedSocket, JSONFrames):
    """A subclass sets ``feed_family``, ``model`` (the row the socket follows:
    a table, a tournament) and ``url_key`` (the route's id of that row: the
    feed's key, ``table_id``), and reads its snapshot in ``read_snapshot``."""

    model: type[models.Model]
    url_key: str

    async def open(self, user: Any) -> bool:
        """The handshake: closed 4401 without ``user``, 4404 without the row;
        else the feed joined (before the snapshot: a racing delta is in it or
        after it) and the player admitted. False: refused, or closed 4429 (too
        many connections for this player); the caller then sends nothing."""
        if user is None:
            await refuse(self, CLOSE_UNAUTHENTICATED)
            return False
        self.player_id = int(user.pk)
        self.table_id = int(self.scope["url_route"]["kwargs"][self.url_key])
        if not await database_sync_to_async(self.model._default_manager.filter(pk=self.table_id).exists)():
            await refuse(self, CLOSE_TABLE_NOT_FOUND)
            return False
        self.subscribe()
        await ready()
        return await self.admit(self.player_id)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        """``snapshot`` (the snapshot again) and ``ping`` (``pong`` with its
        ``nonce``); anything else is ``unknown_message``."""
        kind = message_type(content)
        if kind == "snapshot":
            await self.send_snapshot()
        elif kind == "ping":
            await self.send_json({"type": "pong", "nonce": content.get("nonce")})
        else:
            await self.send_json({"type": "error", "code": "unknown_message", "message": "Unknown message type."})

    async def read_snapshot(self) -> tuple[dict[str, Any], Mapping[str, int]]:
        """The snapshot frame and its marks per lane (``FeedSocket.snapshot_then_live``)."""
        raise NotImplementedError

    async def send_snapshot(self) -> None:
        await self.snapshot_then_live(self.read_snapshot)
