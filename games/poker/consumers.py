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
reading a table's streams after the last version seen needs no shared state;
the cost is one indexed read per connection every ``POLL_SECONDS``.

From the client: ``{"type": "act", "action", "amount"?, "idempotency_key"}``
(the REST act service), ``{"type": "snapshot"}``, ``{"type": "ping"}``.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from casino.errors import DomainError
from games.consumers import CLOSE_TABLE_NOT_FOUND, CLOSE_UNAUTHENTICATED, _user_from_token
from games.domain.poker.events import HoleCardsDealt
from games.poker import event_types as et
from games.poker import presenters, services
from games.poker.models import PokerHand, PokerTable
from ledger.services import read_stream

POLL_SECONDS = 0.2
MAX_KEY = 100


def _new_messages(table_id: int, viewer_id: int, cursor: dict[str, Any]) -> list[dict[str, Any]]:
    """Events committed since ``cursor`` (updated in place), as messages for the viewer."""
    messages: list[dict[str, Any]] = []
    for event in read_stream(stream_id=et.table_stream(table_id), after_version=cursor["table_version"]):
        cursor["table_version"] = event.version
        messages.append({"type": "table", "version": event.version, "event": {"type": event.type, **event.data}})
    hand_id = PokerTable.objects.filter(pk=table_id).values_list("current_hand_id", flat=True).first() or ""
    if hand_id != cursor["hand_id"]:
        cursor["hand_id"], cursor["hand_version"] = hand_id, 0
    if not hand_id:
        return messages
    players = PokerHand.objects.filter(hand_id=hand_id).values_list("players", flat=True).first() or {}
    seat = next((int(s) for s, pid in players.items() if pid == viewer_id), None)
    for event in read_stream(stream_id=et.hand_stream(hand_id), after_version=cursor["hand_version"]):
        cursor["hand_version"] = event.version
        shown = presenters.redact_event(dict(event.data), event.type, seat)
        if shown is None:
            continue
        own = event.type == HoleCardsDealt.type and event.data.get("seat") == seat
        messages.append({"type": "private" if own else "delta", "hand_id": hand_id, "version": event.version,
                         "event": shown})  # fmt: skip
    return messages


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


class PokerTableConsumer(AsyncJsonWebsocketConsumer):
    """One websocket: one player watching (and playing at) one poker table."""

    table_id: int
    player_id: int
    cursor: dict[str, Any]
    poller: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        user = await self._authenticate()
        if user is None:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.player_id = int(user.pk)
        self.table_id = int(self.scope["url_route"]["kwargs"]["table_id"])
        if not await database_sync_to_async(PokerTable.objects.filter(pk=self.table_id).exists)():
            await self.close(code=CLOSE_TABLE_NOT_FOUND)
            return
        await self.accept()
        await self.send_snapshot()
        self.poller = asyncio.ensure_future(self._poll())

    async def _authenticate(self) -> Any:
        """``?token=`` (API token) or the session user, as ``ws/tables/``."""
        query = parse_qs((self.scope.get("query_string") or b"").decode())
        if query.get("token"):
            return await database_sync_to_async(_user_from_token)(query["token"][0])
        user = self.scope.get("user")
        if user is None or isinstance(user, AnonymousUser) or not user.is_authenticated:
            return None
        return user

    async def disconnect(self, code: int) -> None:
        if self.poller is not None:
            self.poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.poller

    async def send_snapshot(self) -> None:
        snapshot, self.cursor = await database_sync_to_async(_snapshot)(self.table_id, self.player_id)
        await self.send_json(snapshot)

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(POLL_SECONDS)
            messages = await database_sync_to_async(_new_messages)(self.table_id, self.player_id, self.cursor)
            for message in messages:
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

    async def decode_json(self, text_data: str) -> Any:
        try:
            return await super().decode_json(text_data)
        except ValueError:
            return {"type": "malformed"}
