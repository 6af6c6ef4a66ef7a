"""``ws/tables/<id>/``: the table's realtime feed for one player (protocol: docs/websocket.md).

Thin: authenticate, join the groups, send the snapshot from the same redacting
presenter as the REST API (``games.house.realtime.presenters.table_view``), then forward what
the relay and the channel layer deliver. No game rule lives here.
"""

from __future__ import annotations

import time
from typing import Any

from channels.db import database_sync_to_async
from django.utils import timezone

from casino.errors import DomainError
from games.house.models import HouseTable
from games.house.realtime import presenters
from games.house.realtime.relay import (
    as_message,
    change_membership,
    chat_group,
    notice_group,
    player_table_group,
    relay,
    table_group,
)
from games.house.services import chat
from games.realtime import CLOSE_TABLE_NOT_FOUND, CLOSE_UNAUTHENTICATED, JSONFrames, authenticate_scope, refuse

CHAT_SETTING_REFRESH_SECONDS = 5.0


def _snapshot(table_id: int, player_id: int) -> dict[str, Any]:
    """The REST table view (clock fields included, by the server's clock now),
    the seq it was taken at and the recent chat."""
    view = presenters.table_view(table_id=table_id, viewer_id=player_id, now=timezone.now())
    return {
        "type": "snapshot",
        "seq": int(view["table"]["public_seq"]),
        "table": view,
        "chat": chat.recent_chat(table_id=table_id, viewer_id=player_id),
    }


class TableConsumer(JSONFrames):
    """One websocket: one player watching one table."""

    table_id: int
    player_id: int
    username: str
    last_seq: int
    groups_joined: list[str]
    relayed: list[str]
    relay: Any
    hide_chat: bool
    hide_chat_checked: float

    async def connect(self) -> None:
        user = await self._authenticate()
        if user is None:
            await refuse(self, CLOSE_UNAUTHENTICATED)
            return
        self.player_id, self.username = int(user.pk), user.get_username()
        self.table_id = int(self.scope["url_route"]["kwargs"]["table_id"])
        if not await database_sync_to_async(HouseTable.objects.filter(pk=self.table_id).exists)():
            await refuse(self, CLOSE_TABLE_NOT_FOUND)
            return
        the_relay = relay()
        the_relay.ensure_running()
        # Join before the snapshot: a delta racing the snapshot is then either in
        # it (dropped by seq below) or delivered after it; never lost.
        self.relay = the_relay
        relayed = [table_group(self.table_id), player_table_group(self.table_id, self.player_id)]
        self.groups_joined = [chat_group(self.table_id), notice_group(self.player_id)]
        if the_relay.delivers_locally:
            self.relayed = relayed
            for group in relayed:
                the_relay.subscribe(group, self)
        else:
            self.relayed = []
            self.groups_joined += relayed
        for group in self.groups_joined:
            await change_membership(self.channel_layer, "add", group, self.channel_name)
        await the_relay.ready.wait()
        if not await self.admit(self.player_id):
            return  # closed 4429: too many connections for this player
        self.hide_chat = await database_sync_to_async(chat.hides_chat)(player_id=self.player_id)
        self.hide_chat_checked = time.monotonic()
        await self.send_snapshot()

    async def disconnect(self, code: int) -> None:
        for group in getattr(self, "relayed", []):
            self.relay.unsubscribe(group, self)
        for group in getattr(self, "groups_joined", []):
            await change_membership(self.channel_layer, "discard", group, self.channel_name)

    async def _authenticate(self) -> Any:
        return await authenticate_scope(self.scope)

    async def send_snapshot(self) -> None:
        snapshot = await database_sync_to_async(_snapshot)(self.table_id, self.player_id)
        self.last_seq = snapshot["seq"]
        await self.send_json(snapshot)

    # --- from the client -------------------------------------------------------

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        kind = content.get("type") if isinstance(content, dict) else None
        if kind == "snapshot":
            await self.send_snapshot()
        elif kind == "chat":
            try:
                line = await database_sync_to_async(chat.post_chat)(
                    table_id=self.table_id, player_id=self.player_id, username=self.username, text=content.get("text")
                )
            except DomainError as exc:
                await self.send_json({"type": "error", "request": "chat", **exc.as_dict()})
                return
            await self.channel_layer.group_send(chat_group(self.table_id), {"type": "chat.message", "line": line})
        elif kind == "ping":
            await self.send_json({"type": "pong", "nonce": content.get("nonce")})
        else:
            await self.send_json({"type": "error", "code": "unknown_message", "message": "Unknown message type."})

    # --- from the relay and the channel layer ---------------------------------------

    async def relay_message(self, message: dict[str, Any]) -> None:
        """Local delivery from this process's relay (same messages as the layer's)."""
        if not hasattr(self, "last_seq"):
            return  # subscribed, snapshot not sent yet: the snapshot will cover it
        if message["type"] == "table.delta":
            await self.table_delta(message)
        else:
            await self.player_delta(message)

    async def table_delta(self, message: dict[str, Any]) -> None:
        delta = message["delta"]
        seq = int(delta.get("seq", 0))
        if seq and seq <= self.last_seq:
            return  # already contained in the snapshot this client has
        self.last_seq = max(self.last_seq, seq)
        text = message.get("text")
        if text:
            await self.send(text_data=text)
        else:
            await self.send_json(as_message("delta", delta))

    async def player_delta(self, message: dict[str, Any]) -> None:
        await self.send_json(as_message("private", message["delta"]))

    async def chat_message(self, message: dict[str, Any]) -> None:
        line = message["line"]
        if time.monotonic() - self.hide_chat_checked > CHAT_SETTING_REFRESH_SECONDS:
            self.hide_chat = await database_sync_to_async(chat.hides_chat)(player_id=self.player_id)
            self.hide_chat_checked = time.monotonic()
        if self.hide_chat and line.get("player") != self.username:
            return
        await self.send_json({"type": "chat", **line})

    async def player_notice(self, message: dict[str, Any]) -> None:
        """Responsible-gaming and other notices sent to group ``player-<id>``."""
        await self.send_json({**message, "type": "notice"})
