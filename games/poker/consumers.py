"""``ws/poker/<id>/``: one player's realtime feed of a poker table (docs/websocket.md, "Poker tables").

Thin: authenticate, send the snapshot from the same redacting presenter as
the REST API, then follow the table's two kinds of streams in the event
store and forward each new event, redacted for this viewer:

- ``{"type": "delta", "hand_id", "version", "event"}``: a hand event (others'
  hole cards as ``null``); the viewer's own ``poker.hole_cards_dealt`` comes
  as ``{"type": "private", ...}`` with the cards;
- ``{"type": "table", "version", "event"}``: a seat event (sat down, topped
  up, stood up, sat out, sat in).

Why polling the store rather than the house tables' relay: every fact is an
event committed by a service (a Celery worker or another ASGI process), and
reading a table's streams after the last version seen needs no shared state.
One ``TableFeed`` per table and process reads them every ``POLL_SECONDS``
while anyone in the process watches that table, and hands the new events to
each connection, which redacts them for its viewer: the database sees one
poll per table and process, not one per connection.

From the client: ``{"type": "act", "action", "amount"?, "idempotency_key"}``
(the REST act service), ``{"type": "snapshot"}``, ``{"type": "ping"}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from channels.db import database_sync_to_async
from django.utils import timezone

from casino.errors import DomainError
from games.poker import event_types as et
from games.poker import presenters, services
from games.poker.engine.events import HoleCardsDealt
from games.poker.models import PokerHand, PokerTable
from games.realtime import (
    CLOSE_TABLE_NOT_FOUND,
    CLOSE_UNAUTHENTICATED,
    JSONFrames,
    authenticate_scope,
    refuse,
)
from ledger.services import read_stream

log = logging.getLogger(__name__)

POLL_SECONDS = 0.2
MAX_KEY = 100


def _read_new(table_id: int, cursor: dict[str, Any]) -> dict[str, Any]:
    """The table's and current hand's events committed since ``cursor`` (updated
    in place), unredacted, with the hand's seats (seat -> player id)."""
    table_events = list(read_stream(stream_id=et.table_stream(table_id), after_version=cursor["table_version"]))
    if table_events:
        cursor["table_version"] = table_events[-1].version
    hand_id = PokerTable.objects.filter(pk=table_id).values_list("current_hand_id", flat=True).first() or ""
    if hand_id != cursor["hand_id"]:
        cursor["hand_id"], cursor["hand_version"] = hand_id, 0
    batch: dict[str, Any] = {"table": table_events, "hand_id": hand_id, "hand": [], "seats": {}}
    if not hand_id:
        return batch
    players = PokerHand.objects.filter(hand_id=hand_id).values_list("players", flat=True).first() or {}
    batch["seats"] = {int(pid): int(seat) for seat, pid in players.items()}
    batch["hand"] = list(read_stream(stream_id=et.hand_stream(hand_id), after_version=cursor["hand_version"]))
    if batch["hand"]:
        cursor["hand_version"] = batch["hand"][-1].version
    return batch


def _messages_for(viewer_id: int, batch: dict[str, Any], seen: dict[str, Any]) -> list[dict[str, Any]]:
    """``batch`` (``_read_new``) as messages for one viewer, skipping what their
    cursor ``seen`` (updated in place) already covers: their snapshot, or events
    a shared feed read before they joined. Others' hole cards are redacted."""
    messages: list[dict[str, Any]] = []
    for event in batch["table"]:
        if event.version > seen["table_version"]:
            seen["table_version"] = event.version
            messages.append({"type": "table", "version": event.version, "event": {"type": event.type, **event.data}})
    hand_id = batch["hand_id"]
    if hand_id != seen["hand_id"]:
        seen["hand_id"], seen["hand_version"] = hand_id, 0
    seat = batch["seats"].get(viewer_id)
    for event in batch["hand"]:
        if event.version <= seen["hand_version"]:
            continue
        seen["hand_version"] = event.version
        shown = presenters.redact_event(dict(event.data), event.type, seat)
        if shown is None:
            continue
        own = event.type == HoleCardsDealt.type and event.data.get("seat") == seat
        messages.append({"type": "private" if own else "delta", "hand_id": hand_id, "version": event.version,
                         "event": shown})  # fmt: skip
    return messages


def _new_messages(table_id: int, viewer_id: int, cursor: dict[str, Any]) -> list[dict[str, Any]]:
    """Events committed since ``cursor`` (updated in place), as messages for the viewer."""
    return _messages_for(viewer_id, _read_new(table_id, cursor), dict(cursor, hand_version=-1, table_version=-1))


def _feed_cursor(table_id: int) -> dict[str, Any]:
    """Where a new feed starts: the table's latest versions now."""
    table_events = read_stream(stream_id=et.table_stream(table_id))
    hand_id = PokerTable.objects.filter(pk=table_id).values_list("current_hand_id", flat=True).first() or ""
    hand_version = PokerHand.objects.filter(hand_id=hand_id).values_list("stream_version", flat=True).first() or 0
    return {"table_version": table_events[-1].version if table_events else 0, "hand_id": hand_id,
            "hand_version": hand_version}  # fmt: skip


class TableFeed:
    """This process's one reader of a poker table's streams: polls while it has
    subscribers, hands every batch to each of them, stops with the last one."""

    feeds: dict[int, TableFeed] = {}

    def __init__(self, table_id: int) -> None:
        self.table_id = table_id
        self.subscribers: set[PokerTableConsumer] = set()
        self.task: asyncio.Task[None] | None = None
        self.cursor: dict[str, Any] | None = None
        # Held while a batch is read and handed out, and while a subscriber takes
        # its snapshot: every batch a subscriber gets was read after its snapshot.
        self.lock = asyncio.Lock()

    @classmethod
    async def join(cls, table_id: int, consumer: PokerTableConsumer) -> TableFeed:
        feed = cls.feeds.get(table_id)
        if feed is None:
            feed = cls.feeds[table_id] = cls(table_id)
        feed.subscribers.add(consumer)
        if feed.cursor is None:
            async with feed.lock:
                feed.cursor = await database_sync_to_async(_feed_cursor)(table_id)
        if feed.task is None or feed.task.done():
            feed.task = asyncio.ensure_future(feed._run())
        return feed

    async def leave(self, consumer: PokerTableConsumer) -> None:
        self.subscribers.discard(consumer)
        if self.subscribers or self.task is None:
            return
        if TableFeed.feeds.get(self.table_id) is self:
            del TableFeed.feeds[self.table_id]
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task

    async def _run(self) -> None:
        while self.subscribers:
            await asyncio.sleep(POLL_SECONDS)
            assert self.cursor is not None
            async with self.lock:
                try:
                    batch = await database_sync_to_async(_read_new)(self.table_id, self.cursor)
                except Exception:  # a database hiccup must not end the feed for everyone
                    log.exception("poker feed: table %s", self.table_id)
                    continue
                if batch["table"] or batch["hand"]:
                    for consumer in list(self.subscribers):
                        await consumer.deliver(batch)


def _snapshot(table_id: int, viewer_id: int) -> tuple[dict[str, Any], dict[str, Any]]:
    view = presenters.table_view(table_id=table_id, viewer_id=viewer_id)
    table_events = read_stream(stream_id=et.table_stream(table_id))
    hand_id = view["table"]["current_hand_id"]
    hand_version = PokerHand.objects.filter(hand_id=hand_id).values_list("stream_version", flat=True).first() or 0
    cursor = {
        "table_version": table_events[-1].version if table_events else 0,
        "hand_id": hand_id,
        "hand_version": hand_version,
    }
    return {"type": "snapshot", "table": view, **cursor}, cursor


class PokerTableConsumer(JSONFrames):
    """One websocket: one player watching (and playing at) one poker table."""

    table_id: int
    player_id: int
    cursor: dict[str, Any] | None = None
    feed: TableFeed | None = None

    async def connect(self) -> None:
        user = await self._authenticate()
        if user is None:
            await refuse(self, CLOSE_UNAUTHENTICATED)
            return
        self.player_id = int(user.pk)
        self.table_id = int(self.scope["url_route"]["kwargs"]["table_id"])
        if not await database_sync_to_async(PokerTable.objects.filter(pk=self.table_id).exists)():
            await refuse(self, CLOSE_TABLE_NOT_FOUND)
            return
        if not await self.admit(self.player_id):
            return  # closed 4429: too many connections for this player
        self.feed = await TableFeed.join(self.table_id, self)
        await self.send_snapshot()

    async def _authenticate(self) -> Any:
        """``?token=`` (API token) or the session user, as ``ws/tables/``."""
        return await authenticate_scope(self.scope)

    async def disconnect(self, code: int) -> None:
        if self.feed is not None:
            await self.feed.leave(self)

    async def send_snapshot(self) -> None:
        """The snapshot, taken under the feed's lock: the batches that follow were
        read after it, and its cursor skips what it already shows."""
        assert self.feed is not None
        async with self.feed.lock:
            snapshot, cursor = await database_sync_to_async(_snapshot)(self.table_id, self.player_id)
            await self.send_json(snapshot)
            self.cursor = cursor

    async def deliver(self, batch: dict[str, Any]) -> None:
        """A feed's batch, redacted for this viewer (none before the first snapshot)."""
        if self.cursor is None:
            return
        for message in _messages_for(self.player_id, batch, self.cursor):
            await self.send_json(message)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        kind = content.get("type") if isinstance(content, dict) else None
        if kind == "act":
            await self._act(content)
        elif kind == "snapshot":
            await self.send_snapshot()
        elif kind == "ping":
            await self.send_json({"type": "pong", "nonce": content.get("nonce")})
        else:
            await self.send_json({"type": "error", "code": "unknown_message", "message": "Unknown message type."})

    async def _act(self, content: dict[str, Any]) -> None:
        key = content.get("idempotency_key")
        if not isinstance(key, str) or not 0 < len(key) <= MAX_KEY:
            await self.send_json({"type": "error", "request": "act", "code": "idempotency_key_required",
                                  "message": "Send an idempotency_key (1 to 100 characters)."})  # fmt: skip
            return
        amount = content.get("amount")
        try:
            result = await database_sync_to_async(services.act)(
                table_id=self.table_id, player_id=self.player_id, action=str(content.get("action")),
                amount=amount, idempotency_key=f"play:{self.player_id}:{key}", now=timezone.now(),
            )  # fmt: skip
        except DomainError as exc:
            await self.send_json({"type": "error", "request": "act", **exc.as_dict()})
            return
        await self.send_json({"type": "acted", "hand_id": result.hand_id, "action": result.action,
                              "amount": result.amount, "stack": result.stack})  # fmt: skip
