"""``ws/tables/<id>/``: the table's realtime feed for one player (protocol: docs/websocket.md).

Thin: authenticate, join the table's feed (``games.tables.feed``), send the snapshot
from the same redacting presenter as the REST API
(``games.house.realtime.presenters.table_view``), then the feed's deltas and
what the channel layer delivers (chat, notices). Every frame goes through the
connection's bounded outbox. No game rule lives here.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from django.utils import timezone

from casino.errors import DomainError
from games.house.models import HouseTable
from games.house.realtime import presenters
from games.house.realtime.commands import COMMANDS, execute_command
from games.house.realtime.relay import FAMILY, change_membership, chat_group, notice_group
from games.house.round.state import RoundState
from games.house.services import chat
from games.house.store.streams import load_round
from games.tables.feed import FeedSocket, TableFeed, consistent_read, feed_of, ready
from games.tables.presence import HOUSE, PresentSocket
from games.tables.realtime import (
    CLOSE_TABLE_NOT_FOUND,
    CLOSE_UNAUTHENTICATED,
    JSONFrames,
    authenticate_scope,
    message_type,
    refuse,
)

CHAT_SETTING_REFRESH_SECONDS = 5.0


def _snapshot(table_id: int, player_id: int, feed: TableFeed | None = None) -> dict[str, Any]:
    """The REST table view (clock fields included, by the server's clock now),
    the seq it was taken at and the recent chat. With the table's ``feed``, the
    round's public state is replayed at most once per table change (keyed by
    the round and the table's ``public_seq``); only the viewer's own part
    (their round row, balance, chat setting) is read per snapshot."""

    def round_state(table: HouseTable) -> RoundState:
        def build() -> RoundState:
            return load_round(table.current_round_id)

        if feed is None:
            return build()
        state: RoundState = feed.cached("round", (table.current_round_id, table.public_seq), build)
        return state

    with consistent_read():  # the view and its seq agree
        view = presenters.table_view(
            table_id=table_id, viewer_id=player_id, now=timezone.now(), round_state=round_state
        )
    return {
        "type": "snapshot",
        "seq": int(view["table"]["public_seq"]),
        "table": view,
        "chat": chat.recent_chat(table_id=table_id, viewer_id=player_id),
    }


def resume_seq(query_string: bytes) -> str | None:
    """The ``?since=`` of a reconnecting client (``None``: not resuming)."""
    values = parse_qs(query_string.decode()).get("since")
    return values[0] if values else None


def _current_seq(table_id: int) -> int:
    return int(HouseTable.objects.filter(pk=table_id).values_list("public_seq", flat=True).first() or 0)


class TableConsumer(FeedSocket, PresentSocket, JSONFrames):
    """One websocket: one player watching one table."""

    feed_family = FAMILY
    presence_family = HOUSE
    table_id: int
    player_id: int
    username: str
    groups_joined: list[str]
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
        # Join before the snapshot: a delta racing the snapshot is then either in
        # it (dropped by seq) or sent after it; never lost.
        self.subscribe()
        self.groups_joined = []
        for group in (chat_group(self.table_id), notice_group(self.player_id)):
            await change_membership(self.channel_layer, "add", group, self.channel_name)
            self.groups_joined.append(group)
        await ready()
        if not await self.admit(self.player_id):
            return  # closed 4429: too many connections for this player
        await self.take_presence(table_id=self.table_id, player_id=self.player_id)
        self.hide_chat = await database_sync_to_async(chat.hides_chat)(player_id=self.player_id)
        self.hide_chat_checked = time.monotonic()
        since = resume_seq(self.scope.get("query_string") or b"")
        if since is not None:
            await self.check_resume(since)
        await self.send_snapshot()

    async def check_resume(self, since: str) -> None:
        """A ``since`` past the table's seq (or not a seq) is an error frame
        ``bad_resume_seq``; the snapshot follows either way."""
        current = await database_sync_to_async(_current_seq)(self.table_id)
        if not since.isdigit() or int(since) > current:
            message = "since is not a seq this table has reached; take the snapshot."
            await self.send_json(
                {"type": "error", "code": "bad_resume_seq", "message": message, "details": {"current_seq": current}}
            )

    async def disconnect(self, code: int) -> None:
        await self.drop_presence()
        await self.stop_feed()
        for group in getattr(self, "groups_joined", []):
            await change_membership(self.channel_layer, "discard", group, self.channel_name)

    async def _authenticate(self) -> Any:
        return await authenticate_scope(self.scope)

    async def send_snapshot(self, *, requested: bool = False) -> None:
        """The snapshot, then live deltas (``requested``: the client asked: see ``snapshot_then_live``)."""

        async def read() -> tuple[dict[str, Any], Mapping[str, int]]:
            feed = feed_of(FAMILY, self.table_id)
            snapshot = await database_sync_to_async(_snapshot)(self.table_id, self.player_id, feed)
            return snapshot, {"seq": snapshot["seq"]}

        await self.snapshot_then_live(read, requested=requested)

    # --- from the client -------------------------------------------------------

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        kind = message_type(content)
        if kind == "snapshot":
            await self.send_snapshot(requested=True)
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
        elif kind in COMMANDS:
            answer = await execute_command(
                table_id=self.table_id, player_id=self.player_id, kind=kind, fields=content,
                client_id=content.get("id"),
            )  # fmt: skip
            await self.send_json(answer)
            if answer.get("type") == "ack":
                await self.presence_acted()
        else:
            await self.send_json({"type": "error", "code": "unknown_message", "message": "Unknown message type."})

    # --- from the channel layer ---------------------------------------------------

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
