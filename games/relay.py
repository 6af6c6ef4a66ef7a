"""The websocket relay: from the event store's committed global log to the table
and player groups of this ASGI process (docs/websocket.md, "Delivery").

Why a relay: the dealer runs in a Celery worker process, the websockets live in
the ASGI processes. On the embedded default the channel layer is in memory and
process-local, so a worker's ``group_send`` would never reach a client. Every
fact a client needs is an event in the store, so each ASGI process tails the
store's *safe* global log (``read_global``: never past an uncommitted
transaction, so a late-committing event is delivered late, never skipped) and
turns each event into redacted deltas with the ONE presenter
(``games.presenters.public_delta`` / ``private_delta``).

One relay per ASGI process, not per deployment: it works unchanged on both
layers (in memory nothing else could reach this process's clients), it needs
no leader election, and a process's clients never depend on another process
being alive. Its groups are named with the process's ``RELAY_ID`` so that on
Redis one process's relay never delivers to another process's clients (each
would otherwise get every message once per process). The cost is one indexed
poll of the global log per process every ``CASINO_RELAY_POLL_SECONDS``.

Chat and ``player.notice`` messages are not events: they travel on the channel
layer directly (groups ``chat-<table>`` and ``player-<id>``), which reaches every
process on Redis and the one process of the embedded default.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import Iterable
from typing import Any

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings

from ledger.services.events import GlobalPosition, RecordedEvent, position_of, read_cursor, read_global, safe_txid_bound

log = logging.getLogger(__name__)

RELAY_ID = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
BATCH = 2000


def table_group(table_id: int) -> str:
    """This process's group of everyone watching a table (public deltas)."""
    return f"live.{RELAY_ID}.t{table_id}"


def player_table_group(table_id: int, player_id: int) -> str:
    """This process's group of one player's connections to one table (private deltas)."""
    return f"live.{RELAY_ID}.t{table_id}.p{player_id}"


def chat_group(table_id: int) -> str:
    """Deployment-wide chat group of a table (channel layer, every process)."""
    return f"chat-{table_id}"


def notice_group(player_id: int) -> str:
    """Deployment-wide group for ``player.notice`` messages (e.g. reality checks)."""
    return f"player-{player_id}"


def messages_for(event: RecordedEvent) -> list[tuple[str, dict[str, Any]]]:
    """The (group, message) pairs one stored event turns into, already redacted."""
    from games import presenters

    out: list[tuple[str, dict[str, Any]]] = []
    public = presenters.public_delta(event)
    if public is not None:
        out.append((table_group(int(public["table_id"])), {"type": "table.delta", "delta": public}))
    private = presenters.private_delta(event)
    if private is not None:
        group = player_table_group(int(private["table_id"]), int(private["player_id"]))
        out.append((group, {"type": "player.delta", "delta": private}))
    return out


def head_position() -> GlobalPosition:
    """The last committed position of the global log (where a fresh relay starts:
    a connecting client gets a snapshot, history is not replayed)."""
    with read_cursor() as cursor:
        bound = safe_txid_bound(cursor)
        cursor.execute("SELECT txid, id FROM ledger_event WHERE txid < %s ORDER BY txid DESC, id DESC LIMIT 1", [bound])
        row = cursor.fetchone()
    return GlobalPosition(int(row[0]), int(row[1])) if row else GlobalPosition()


def next_batch(after: GlobalPosition) -> tuple[GlobalPosition, list[tuple[str, dict[str, Any]]]]:
    """Read the next committed events after ``after`` and map them to messages."""
    events = read_global(after=after, limit=BATCH)
    messages: list[tuple[str, dict[str, Any]]] = []
    for event in events:
        messages.extend(messages_for(event))
    return (position_of(events[-1]) if events else after), messages


class Relay:
    """The process's relay task; started by the first websocket connection."""

    def __init__(self) -> None:
        self.task: asyncio.Task[None] | None = None
        self.position: GlobalPosition | None = None
        self.ready = asyncio.Event()

    def ensure_running(self) -> None:
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self.run())

    async def run(self) -> None:
        layer = get_channel_layer()
        assert layer is not None, "the relay needs a channel layer"
        if self.position is None:
            self.position = await database_sync_to_async(head_position)()
        self.ready.set()
        poll = settings.CASINO_RELAY_POLL_SECONDS
        while True:
            try:
                position, messages = await database_sync_to_async(next_batch)(self.position)
                await send_all(layer, messages)
                moved = position != self.position
                self.position = position
                if moved:
                    continue
            except asyncio.CancelledError:
                raise
            except Exception:  # a database hiccup must not kill realtime for good
                log.exception("relay: poll failed; retrying")
                await asyncio.sleep(1)
            await asyncio.sleep(poll)


async def send_all(layer: Any, messages: Iterable[tuple[str, dict[str, Any]]]) -> None:
    """Send in order (group_send per message keeps each group's order)."""
    for group, message in messages:
        await layer.group_send(group, message)


_relays: dict[int, Relay] = {}


def relay() -> Relay:
    """The relay of the running event loop (one per process in practice)."""
    loop = asyncio.get_running_loop()
    key = id(loop)
    if key not in _relays:
        _relays[key] = Relay()
    return _relays[key]
