"""The websocket relay: from the event store's committed global log to the table
and player groups of this ASGI process (docs/websocket.md, "Delivery").

Why a relay: the dealer runs in a Celery worker process, the websockets live in
the ASGI processes. On the embedded default the channel layer is in memory and
process-local, so a worker's ``group_send`` would never reach a client. Every
fact a client needs is an event in the store, so each ASGI process tails the
store's *safe* global log (``read_global``: never past an uncommitted
transaction, so a late-committing event is delivered late, never skipped) and
turns each event into redacted deltas with the ONE presenter
(``games.house.realtime.presenters.public_delta`` / ``private_delta``).

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
import contextlib
import json
import logging
import os
import random
import uuid
import weakref
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connection

from casino.processes import database_url_of
from ledger.services.events import GlobalPosition, RecordedEvent, position_of, read_cursor, read_global, safe_txid_bound

log = logging.getLogger(__name__)

RELAY_ID = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
BATCH = 2000
NOTIFY_CHANNEL = "casino_round_events"  # games/migrations/0006_notify_round_events_on_commit.py


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


# A Redis layer's pool raises when every connection is busy: thousands of
# websockets joining or leaving at once (a network blip) outnumber it. Membership
# changes therefore take at most half the pool at a time (per event loop), and a
# change that still finds it exhausted (other traffic) retries after a jittered
# backoff.
_POOL_RETRY_DELAYS = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2)
_MEMBERSHIP_SLOTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


def _membership_slots(layer: Any) -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    slots = _MEMBERSHIP_SLOTS.get(loop)
    if slots is None:
        hosts = getattr(layer, "hosts", None) or [{}]
        pool = int(hosts[0].get("max_connections") or 100) if isinstance(hosts[0], dict) else 100
        slots = _MEMBERSHIP_SLOTS[loop] = asyncio.Semaphore(max(1, pool // 2))
    return slots


async def change_membership(layer: Any, action: str, group: str, channel: str) -> None:
    """``layer.group_add`` or ``layer.group_discard`` (``action``: ``add`` or
    ``discard``) without exhausting the layer's connection pool: bounded
    concurrency, then retries while the pool is exhausted; the last failure is raised."""
    from redis.exceptions import MaxConnectionsError

    change = layer.group_add if action == "add" else layer.group_discard
    async with _membership_slots(layer):
        for delay in (*_POOL_RETRY_DELAYS, None):
            try:
                await change(group, channel)
                return
            except MaxConnectionsError:
                if delay is None:
                    raise
                await asyncio.sleep(delay * (0.5 + random.random()))


class RoundInfo:
    """What the relay caches per round: its table, hand mode and the table's
    public sequence number just before the round's first event."""

    __slots__ = ("base_seq", "currency", "hand_mode", "table_id")

    def __init__(self, table_id: int, hand_mode: str, base_seq: int, currency: str) -> None:
        self.table_id, self.hand_mode, self.base_seq, self.currency = table_id, hand_mode, base_seq, currency


_rounds: dict[str, RoundInfo] = {}


def round_info(round_id: str) -> RoundInfo | None:
    """The round's table and base sequence. The table's ``public_seq`` counts every
    round-stream event at the table, so an event's table sequence is the total of
    the earlier rounds' stream versions plus its own version (gap-free, the same
    number the snapshot's ``public_seq`` carries)."""
    info = _rounds.get(round_id)
    if info is None:
        from django.db.models import Sum

        from games.house.models import HouseRound

        row = HouseRound.objects.filter(round_id=round_id).values("pk", "table_id", "hand_mode", "currency").first()
        if row is None:
            return None
        earlier = HouseRound.objects.filter(table_id=row["table_id"], pk__lt=row["pk"])
        base = earlier.aggregate(total=Sum("stream_version"))["total"] or 0
        info = _rounds[round_id] = RoundInfo(row["table_id"], row["hand_mode"], int(base), row["currency"])
        if len(_rounds) > 10_000:  # old rounds are never needed again
            _rounds.pop(next(iter(_rounds)))
    return info


def parse_stream(stream_id: str) -> tuple[str, int | None] | None:
    """``round-<id>`` -> (id, None); ``round-<id>-player-<pid>`` -> (id, pid); else None."""
    if not stream_id.startswith("round-"):
        return None
    rest = stream_id[len("round-") :]
    round_id, sep, player = rest.rpartition("-player-")
    if sep and player.isdigit():
        return round_id, int(player)
    return rest, None


def messages_for(event: RecordedEvent) -> list[tuple[str, dict[str, Any]]]:
    """The (group, message) pairs one stored event turns into, already redacted
    by the presenter (``games.house.realtime.presenters``)."""
    from games.house.realtime import presenters
    from games.house.round.events import CARDS_DEALT, WINDOW_OPENED

    parsed = parse_stream(event.stream_id)
    if parsed is None:
        return []
    round_id, player_id = parsed
    info = round_info(round_id)
    if info is None:
        return []
    out: list[tuple[str, dict[str, Any]]] = []
    context = {"table_id": info.table_id, "round_id": round_id}
    if player_id is None:
        public = presenters.public_delta(event)
        if public is None:
            return []
        seq = info.base_seq + event.version
        out.append((table_group(info.table_id), {"type": "table.delta", "delta": {**public, **context, "seq": seq}}))
        if event.type == CARDS_DEALT and info.hand_mode == "per_seat":
            # Each seat's own hole cards, to that player only.
            owners = {c["to"] for c in event.data["cards"] if str(c["to"]).startswith("player:")}
            for owner in sorted(owners):
                pid = int(owner.split(":", 1)[1])
                own = presenters.public_delta(event, viewer_id=pid)
                out.append((player_table_group(info.table_id, pid), private(own, context, pid)))
        elif event.type == WINDOW_OPENED:
            for pid, options, balance in offers(round_id):
                offer = {"type": "decision.offered", "data": {**event.data, "options": options, "balance": balance}}
                out.append((player_table_group(info.table_id, pid), private(offer, context, pid)))
        return out
    delta = presenters.private_delta(event)
    if delta is not None:
        context["currency"] = info.currency
        out.append((player_table_group(info.table_id, player_id), private(delta, context, player_id)))
    return out


def wallet_balances(players: Iterable[tuple[int, str]]) -> dict[tuple[int, str], int]:
    """(player, currency) -> wallet balance, in one query by the accounts' unique key."""
    from ledger.models import Account
    from ledger.services.money import account_key

    keys = {account_key("wallet", f"player:{pid}", currency): (pid, currency) for pid, currency in players}
    if not keys:
        return {}
    rows = Account.objects.filter(key__in=list(keys)).values_list("key", "balance")
    return {keys[key]: int(balance) for key, balance in rows}


def add_balances(messages: list[tuple[str, dict[str, Any]]]) -> None:
    """Give each player-stream delta (those with a ``currency``) the player's
    wallet balance as the relay sends it: one query per batch; it may already
    include later movements, e.g. at another table."""
    wanted = [m["delta"] for _, m in messages if m["type"] == "player.delta" and "currency" in m["delta"]]
    balances = wallet_balances({(delta["player_id"], delta["currency"]) for delta in wanted})
    for delta in wanted:
        delta["balance"] = balances.get((delta["player_id"], delta["currency"]), 0)


def private(delta: Any, context: dict[str, Any], player_id: int) -> dict[str, Any]:
    return {"type": "player.delta", "delta": {**delta, **context, "player_id": player_id}}


def offers(round_id: str) -> list[tuple[int, list[str], int]]:
    """(player, options offered now, wallet balance) for every participant of the
    round, in two queries (a decision window can have 10,000 participants)."""
    from games.house.models import PlayerRound
    from games.house.round.commands import offered_options
    from games.house.store import load_round, state_from_json

    state = load_round(round_id)
    if state.config is None:
        return []
    # Offered iff a decision sent now would be accepted: past the deadline, none.
    now = datetime.now(UTC).isoformat()
    rows = list(PlayerRound.objects.filter(round__round_id=round_id).values_list("player_id", "state"))
    currency = state.config.currency
    balances = wallet_balances((pid, currency) for pid, _ in rows)
    result = []
    for pid, data in rows:
        balance = balances.get((pid, currency), 0)
        options = offered_options(state, state_from_json(pid, data), balance=balance, now=now)
        if options:
            result.append((pid, options, balance))
    return result


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
    add_balances(messages)
    return (position_of(events[-1]) if events else after), messages


def as_message(kind: str, delta: dict[str, Any]) -> dict[str, Any]:
    """A delta as the client sees it: ``type`` is the message kind, ``event`` the event type."""
    body = {k: v for k, v in delta.items() if k != "type"}
    return {"type": kind, "event": delta["type"], **body}


def with_text(messages: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    """Encode each public delta's frame once, not once per client."""
    for _, message in messages:
        if message["type"] == "table.delta":
            message["text"] = json.dumps(as_message("delta", message["delta"]), separators=(",", ":"))
    return messages


class Relay:
    """The process's relay task; started by the first websocket connection.

    Delivery (``CASINO_RELAY_DELIVERY``): ``local`` (default) hands each message
    straight to this process's subscribed consumers; ``layer`` sends it through
    the channel layer to the process's groups. Both are per process; ``bench
    fanout`` compares them (local skips a Redis round trip per client)."""

    def __init__(self) -> None:
        self.task: asyncio.Task[None] | None = None
        self.listener: asyncio.Task[None] | None = None
        self.position: GlobalPosition | None = None
        self.ready = asyncio.Event()
        self.wake = asyncio.Event()
        self.local: dict[str, set[Any]] = {}

    @property
    def delivers_locally(self) -> bool:
        return bool(settings.CASINO_RELAY_DELIVERY == "local")

    def subscribe(self, group: str, consumer: Any) -> None:
        self.local.setdefault(group, set()).add(consumer)

    def unsubscribe(self, group: str, consumer: Any) -> None:
        members = self.local.get(group)
        if members is not None:
            members.discard(consumer)
            if not members:
                del self.local[group]

    async def deliver(self, layer: Any, messages: list[tuple[str, dict[str, Any]]]) -> None:
        """Send in order (per group, the order of the log)."""
        for group, message in with_text(messages):
            if self.delivers_locally:
                for consumer in list(self.local.get(group, ())):
                    await consumer.relay_message(message)
            else:
                await layer.group_send(group, message)

    def ensure_running(self) -> None:
        loop = asyncio.get_running_loop()
        if self.task is None or self.task.done():
            self.task = loop.create_task(self.run())
        if connection.vendor == "postgresql" and (self.listener is None or self.listener.done()):
            self.listener = loop.create_task(self.listen())

    async def listen(self) -> None:
        """Wake the relay when a round-stream event commits (PostgreSQL NOTIFY sent
        by the trigger of migration ``games.0006``). Only a hint: what to send is
        still read from the safe global log, and the poll stays as the fallback
        (player streams, a bound held back by an older transaction, a lost
        listener connection)."""
        import psycopg

        url = database_url_of(settings.DATABASES["default"])
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(url, autocommit=True) as listener:
                    await listener.execute(f"LISTEN {NOTIFY_CHANNEL}")
                    self.wake.set()  # anything committed while not listening
                    async for _ in listener.notifies():
                        self.wake.set()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("relay: LISTEN connection lost; polling until it is back")
                await asyncio.sleep(1)

    async def run(self) -> None:
        layer = get_channel_layer()
        assert layer is not None, "the relay needs a channel layer"
        if self.position is None:
            self.position = await database_sync_to_async(head_position)()
        self.ready.set()
        poll = settings.CASINO_RELAY_POLL_SECONDS
        while True:
            self.wake.clear()  # a commit from now on wakes the next wait
            try:
                position, messages = await database_sync_to_async(next_batch)(self.position)
                await self.deliver(layer, messages)
                moved = position != self.position
                self.position = position
                if moved:
                    continue
            except asyncio.CancelledError:
                raise
            except Exception:  # a database hiccup must not kill realtime for good
                log.exception("relay: poll failed; retrying")
                await asyncio.sleep(1)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), poll)


_relays: dict[int, Relay] = {}


def relay() -> Relay:
    """The relay of the running event loop (one per process in practice)."""
    loop = asyncio.get_running_loop()
    key = id(loop)
    if key not in _relays:
        _relays[key] = Relay()
    return _relays[key]
