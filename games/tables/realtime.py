"""What every table websocket shares, whichever the game family (protocol:
docs/websocket.md): who the user is, the application close codes, refusing
a connection so the client sees the code, answering frames that are not
one JSON text, and the inbound limits (docs/websocket.md, "Limits"): frame
size, a per-connection message rate, connections per player. Interface
layer: no game rule lives here."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import math
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import parse_qs

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser

from casino import i18n, json_input, log_context, metrics
from casino.auth import consume_ws_ticket
from games.tables.api import MAX_IDEMPOTENCY_KEY

log = logging.getLogger(__name__)

# Close codes (4000-4999 are the application's; 1008 and 1009 are RFC 6455's).
CLOSE_UNAUTHENTICATED = 4401
CLOSE_TABLE_NOT_FOUND = 4404
CLOSE_TOO_SLOW = 4408
CLOSE_TOO_MANY_CONNECTIONS = 4429
# A newer connection of the same player to the same table took over (seed 000).
CLOSE_REPLACED = 4409
# A poker tournament's table socket could not follow its player to their new table (docs/websocket.md).
CLOSE_MOVED = 4410
CLOSE_POLICY_VIOLATION = 1008
CLOSE_MESSAGE_TOO_BIG = 1009


async def refuse(consumer: AsyncJsonWebsocketConsumer, code: int) -> None:
    """Close with an application close code (4401, 4404). The handshake is
    accepted first: a close before it becomes an HTTP 403 refusal, and the
    client never sees the code."""
    await consumer.accept()
    await consumer.close(code=code)


def _user_from_ticket(ticket: str) -> Any:
    user_id = consume_ws_ticket(ticket=ticket)
    if user_id is None:
        return None
    user = get_user_model().objects.filter(pk=user_id).first()
    return user if user is not None and user.is_active else None


async def authenticate_scope(scope: Mapping[str, Any]) -> Any:
    """The websocket's user, else ``None`` (close 4401): ``?ticket=`` (from
    ``POST /api/auth/ws-ticket/``, consumed here: a ticket opens one
    connection) or the session cookie's user. An API token in the URL
    (``?token=``) is not accepted: URLs end up in logs and histories."""
    query = parse_qs((scope.get("query_string") or b"").decode(errors="replace"))
    if query.get("ticket"):
        return await database_sync_to_async(_user_from_ticket)(query["ticket"][0])
    user = scope.get("user")
    if user is None or isinstance(user, AnonymousUser) or not user.is_authenticated:
        return None
    return user


class TokenBucket:
    """``rate`` tokens a second up to ``burst``; a message takes one. Starts full,
    so a client may send ``burst`` messages at once and then ``rate`` a second."""

    def __init__(self, *, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, max(1, burst)
        self.tokens = float(self.burst)
        self.updated = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(float(self.burst), self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True

    def wait_seconds(self) -> float:
        """How long until the next message would be taken."""
        return max(0.0, (1 - self.tokens) / self.rate) if self.rate > 0 else float("inf")


# --- connections per player -------------------------------------------------------------------

# Atomic in Redis: forget entries not refreshed within the TTL (a crashed
# process's), then add this connection unless the player is at the limit.
_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[3]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[3]) * 2))
return 1
"""
# Refresh this process's entries (XX: never resurrect one released meanwhile).
_REFRESH = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, 'XX', now, ARGV[i + 1])
  redis.call('EXPIRE', key, math.ceil(tonumber(ARGV[1]) * 2))
end
return 1
"""


# Registry calls in flight at once per process (well under the client pool's 100).
REDIS_CALLS = 32
# Entries refreshed per script call: one call does not hold Redis for long.
REFRESH_CHUNK = 500


class PlayerConnections:
    """Who holds how many websockets: at most ``CASINO_WS_MAX_CONNECTIONS_PER_PLAYER``
    a player, across tables and both families.

    With ``REDIS_URL`` the count spans every ASGI process: one sorted set per
    player (``casino:ws:<database>:conn:<player id>``) of connection ids scored
    by the Redis server's time of their last refresh; this process refreshes its
    own entries every third of ``CASINO_WS_CONNECTION_TTL_SECONDS``, so the
    entries of a process that died expire after the TTL. Without Redis (the
    embedded default: one process) the count is this process's. A Redis error
    admits the connection (logged): the limit protects the service, an outage
    of the limit's store must not lock every player out.
    """

    def __init__(self) -> None:
        self.local: dict[int, set[str]] = {}
        self._redis: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._refresher: asyncio.Task[None] | None = None
        self._calls: asyncio.Semaphore | None = None

    @staticmethod
    def key(player_id: int) -> str:
        # Player ids are per database: two databases on one Redis never mix.
        return f"casino:ws:{settings.DATABASES['default']['NAME']}:conn:{player_id}"

    def _client(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._redis is None or self._loop is not loop:  # a client belongs to one event loop
            import redis.asyncio

            # Bounded waits: a Redis that hangs must not hang every handshake (see acquire).
            client = redis.asyncio.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
            self._redis, self._loop = client, loop
            self._refresher = None
            # redis-py's pool raises MaxConnectionsError rather than waiting when
            # every connection is busy: thousands of sockets opening or closing at
            # once (a network blip, a deploy) queue here instead.
            self._calls = asyncio.Semaphore(REDIS_CALLS)
        if self._refresher is None or self._refresher.done():
            self._refresher = loop.create_task(self._refresh_forever())
        return self._redis

    async def acquire(self, player_id: int) -> str | None:
        """A new connection id for ``player_id``, or ``None`` at the limit."""
        limit = settings.CASINO_WS_MAX_CONNECTIONS_PER_PLAYER
        connection_id = uuid.uuid4().hex
        if settings.REDIS_URL:
            try:
                client = self._client()
                assert self._calls is not None
                async with self._calls:
                    ttl = settings.CASINO_WS_CONNECTION_TTL_SECONDS
                    admitted = await client.eval(_ACQUIRE, 1, self.key(player_id), connection_id, limit, ttl)
            except Exception:
                log.exception("websocket connection limit: Redis unavailable, admitting player %s", player_id)
                admitted = 1
            if not int(admitted):
                return None
        elif len(self.local.get(player_id, ())) >= limit:
            return None
        self.local.setdefault(player_id, set()).add(connection_id)
        return connection_id

    async def release(self, player_id: int, connection_id: str) -> None:
        held = self.local.get(player_id)
        if held is not None:
            held.discard(connection_id)
            if not held:
                del self.local[player_id]
        if settings.REDIS_URL:
            try:
                client = self._client()
                assert self._calls is not None
                async with self._calls:
                    await client.zrem(self.key(player_id), connection_id)
            except Exception:  # it expires after the TTL anyway
                log.exception("websocket connection limit: could not release a connection of player %s", player_id)

    async def close(self) -> None:
        """Stop refreshing and close the Redis client (a process that stops serving;
        its entries then expire after the TTL). The refresher has ended before the
        client closes: cancelled in the middle of a call, it would otherwise see its
        connection closed under it and log a failed refresh. A cancellation that
        lands as a redis-py call completes can be lost (``asyncio.wait_for``), so it
        is asked again until the task ends (it next waits in its sleep)."""
        refresher, self._refresher = self._refresher, None
        while refresher is not None and not refresher.done():
            refresher.cancel()
            await asyncio.wait({refresher}, timeout=0.5)
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None

    async def _refresh_forever(self) -> None:
        while True:
            await asyncio.sleep(settings.CASINO_WS_CONNECTION_TTL_SECONDS / 3)
            entries = [(self.key(p), c) for p, held in list(self.local.items()) for c in held]
            for start in range(0, len(entries), REFRESH_CHUNK):
                chunk = entries[start : start + REFRESH_CHUNK]
                try:
                    await self._redis.eval(
                        _REFRESH, len(chunk), *(k for k, _ in chunk),
                        settings.CASINO_WS_CONNECTION_TTL_SECONDS, *(c for _, c in chunk),
                    )  # fmt: skip
                except Exception:
                    log.exception("websocket connection limit: refresh failed")


player_connections = PlayerConnections()


# How often a channel-layer receive whose cancellation was lost is cancelled again.
RECANCEL_SECONDS = 0.5


async def receive_until_cancelled(receive: Callable[[], Awaitable[Any]]) -> Any:
    """``receive()`` (a consumer's channel-layer receive) in a task of its own,
    which, when this is cancelled, is cancelled again until it has ended.

    Why: Channels ends a consumer by cancelling its pending channel-layer receive
    and awaiting it (``channels.utils.await_many_dispatch``). channels_redis's
    receive blocks in a redis-py ``BZPOPMIN`` (5 s, in a loop); a cancellation
    that lands as a reply arrives is lost in redis-py (redis/redis-py#2028), the
    task goes on popping with its cancel still requested (``Task.cancelling()``
    1) until a message comes to some channel of this process: the consumer never
    ended after its client's close, so its connection stayed counted and its
    slot held (issue 36: ``casino_ws_connections`` stuck at 1). A message that
    arrives as the consumer ends is dropped, as Channels drops it."""
    task = asyncio.ensure_future(receive())
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        while not task.done():
            task.cancel()
            await asyncio.wait({task}, timeout=RECANCEL_SECONDS)
        if not task.cancelled() and task.exception() is not None:
            log.info("websocket: the channel-layer receive ended with %r as its consumer ended", task.exception())
        raise


class DirectDispatch:
    """A Channels consumer's ``dispatch`` without Channels' per-message hop to
    the sync thread: since Channels 4.2, ``AsyncConsumer.dispatch`` awaits
    ``aclose_old_connections()`` (``close_old_connections`` through
    ``sync_to_async``, on the one thread every consumer's
    ``database_sync_to_async`` shares) before each message's handler, every
    frame received and every channel-layer message. These consumers touch the
    database only through ``database_sync_to_async`` (which closes stale and
    broken connections itself before and after each call) or through their own
    threads (the group commit's pool, ``ws_commands``), which do the same, so
    the hop checks nothing those do not; it only queued each message behind
    the shared thread's work (a tenth of a table socket's CPU a bet under
    load, measured with py-spy). Otherwise Channels' own dispatch: the
    handler named by the message's type, ``ValueError`` if there is none.
    Every consumer of the project's server takes it, the benchmarks' bare
    peers too (``games.benchmarks.bare``, ``bare_broadcast``), so they go
    through the same stack as the table sockets."""

    async def dispatch(self, message: Any) -> None:
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)


class JSONFrames(DirectDispatch, AsyncJsonWebsocketConsumer):
    """The base of both families' table consumers: the inbound limits, in this order,
    before any frame is handled (docs/websocket.md, "Limits"):

    - a frame over ``CASINO_WS_MAX_FRAME_BYTES`` closes the connection with 1009
      (uvicorn's ``--ws-max-size`` refuses it first; this is the second line);
    - a frame when the connection's token bucket (``CASINO_WS_RATE`` a second,
      ``CASINO_WS_BURST`` at once) is empty is answered ``rate_limited`` (with
      the command's ``id``, if any: every command gets one answer naming it)
      and does nothing else; ``CASINO_WS_FLOOD_CLOSE`` refusals in a row close
      the connection with 1008 (policy violation);
    - a frame that is not one JSON text (binary, empty, not JSON) is answered
      ``malformed_message``; Channels' own consumer raised and dropped the socket.

    Subclasses accept the handshake with ``admit(player_id)``, which holds one of
    the player's ``CASINO_WS_MAX_CONNECTIONS_PER_PLAYER`` connections until the
    consumer ends, however it ends.
    """

    _bucket: TokenBucket | None = None
    _refusals = 0
    _closing = False
    _slot: tuple[int, str] | None = None
    # Metrics (casino_ws_connections, casino_ws_closes_total): the family counted when the
    # handshake was accepted, and the close code (the server's, else the client's).
    _counted_family: str | None = None
    _close_code: int | None = None
    _channel_receive: Callable[[], Awaitable[Any]] | None = None
    # The language of error frames' messages (casino.i18n): set by ``admit``.
    language: str | None = None

    @property
    def channel_receive(self) -> Callable[[], Awaitable[Any]] | None:
        """The channel-layer receive Channels' ``__call__`` awaits with the client's;
        set by it, wrapped so that the consumer's end cannot wait on it forever
        (``receive_until_cancelled``)."""
        return self._channel_receive

    @channel_receive.setter
    def channel_receive(self, receive: Callable[[], Awaitable[Any]]) -> None:
        self._channel_receive = functools.partial(receive_until_cancelled, receive)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            # Whatever ended the consumer (disconnect, an exception): count the close, free the slot.
            family, self._counted_family = self._counted_family, None
            if family is not None:
                metrics.ws_closed(family, self._close_code)
            slot, self._slot = self._slot, None
            if slot is not None:
                await player_connections.release(*slot)

    async def accept(self, subprotocol: str | None = None, headers: Any = None) -> None:
        await super().accept(subprotocol=subprotocol, headers=headers)
        if self._counted_family is None:
            self._counted_family = str(getattr(self, "feed_family", "other"))
            metrics.ws_opened(self._counted_family)

    async def websocket_disconnect(self, message: Any) -> None:
        if self._close_code is None and isinstance(message.get("code"), int):
            self._close_code = message["code"]
        await super().websocket_disconnect(message)

    async def admit(self, player_id: int) -> bool:
        """Accept the handshake for ``player_id``; at their connection limit close it
        with 4429 (after the accept, so the client sees the code) and return False:
        the caller then returns and sends nothing. The connection's error
        messages are in the player's language from here on (their profile's,
        else the handshake's ``Accept-Language``)."""
        headers = dict(self.scope.get("headers") or ())
        accept_language = headers.get(b"accept-language", b"").decode("latin-1")
        self.language = await database_sync_to_async(i18n.player_language)(
            user_id=player_id, accept_language=accept_language
        )
        await self.accept()
        connection_id = await player_connections.acquire(player_id)
        if connection_id is None:
            await self.close(code=CLOSE_TOO_MANY_CONNECTIONS)
            return False
        self._slot = (player_id, connection_id)
        return True

    async def close(self, code: int | bool | None = None, reason: str | None = None) -> None:
        self._closing = True
        if self._close_code is None:
            self._close_code = code if isinstance(code, int) and not isinstance(code, bool) else 1000
        await super().close(code=code, reason=reason)

    async def send(self, text_data: str | None = None, bytes_data: bytes | None = None, close: bool = False) -> None:
        """Nothing is sent once the server closed the connection: uvicorn raises on a
        send after the close, and a delivery racing the close (the relay, a feed)
        must not fail for it."""
        if self._closing:
            return
        await super().send(text_data=text_data, bytes_data=bytes_data, close=close)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any) -> None:
        if self._closing:
            return  # frames that were already queued when the server closed
        if _frame_size(text_data, bytes_data) > settings.CASINO_WS_MAX_FRAME_BYTES:
            await self.close(code=CLOSE_MESSAGE_TOO_BIG)
            return
        if self._bucket is None:
            self._bucket = TokenBucket(rate=settings.CASINO_WS_RATE, burst=settings.CASINO_WS_BURST)
        if not self._bucket.take():
            self._refusals += 1
            if self._refusals >= settings.CASINO_WS_FLOOD_CLOSE:
                await self.close(code=CLOSE_POLICY_VIOLATION)
                return
            retry = self._bucket.wait_seconds()  # infinite if CASINO_WS_RATE is 0: not JSON, left out
            details = {"retry_after": round(retry, 3)} if math.isfinite(retry) else {}
            await self.send_json({"type": "error", **_command_id(text_data), "code": "rate_limited", "details": details,
                                  "message": "Too many messages: this one was dropped."})  # fmt: skip
            return
        self._refusals = 0
        try:
            content = await self.decode_json(text_data) if text_data else None
        except (json_input.TooDeep, json_input.InvalidText) as refused:
            # The same refusal as REST's; the connection stays open.
            await self.send_json({"type": "error", **_command_id(text_data), "code": refused.code,
                                  "message": refused.message})  # fmt: skip
            return
        except ValueError:
            content = None
        if content is None:
            await self.send_json(
                {"type": "error", "code": "malformed_message", "message": "Send one JSON object per text frame."}
            )
            return
        # Each command frame is a request of its own in the log lines (casino.log_context).
        with log_context.scope(request_id=log_context.new_request_id(), player=getattr(self, "player_id", None),
                               table=getattr(self, "table_id", None)):  # fmt: skip
            await self.receive_json(content, **kwargs)

    @classmethod
    async def decode_json(cls, text_data: str) -> Any:
        """One frame's JSON, checked at the edge (``casino.json_input``): a frame
        nested too deep, or with a string that is not text, raises its refusal;
        one that is not JSON (or not finite numbers) raises ``InvalidJSON``, a
        ``ValueError``: ``malformed_message``."""
        return json_input.loads(text_data, max_depth=settings.CASINO_JSON_MAX_DEPTH)


def message_type(content: Any) -> str | None:
    """A decoded frame's ``type`` when the frame is an object and its ``type`` a
    string, else ``None`` (answered ``unknown_message``). A ``type`` that is a list
    or an object is not hashable: ``kind in COMMANDS`` raised on it and dropped
    the socket (issue 35, found by tests/platform/test_ws_fuzz.py)."""
    kind = content.get("type") if isinstance(content, dict) else None
    return kind if isinstance(kind, str) else None


def _command_id(text_data: str | None) -> dict[str, str]:
    """``{"id": <the command's id>}`` for a refused frame that is a command whose
    id an answer repeats (as ``ws_commands.answer_awaiting`` does: a string of at
    most ``MAX_IDEMPOTENCY_KEY`` characters; poker's ``act`` may carry it as
    ``idempotency_key``), else ``{}``. A client matches answers by ``id``: a
    refusal without it left a pipelined or closed-loop client waiting for an
    answer that had come. The frame is within the size limit, so parsing it
    costs little, and a flood is closed after ``CASINO_WS_FLOOD_CLOSE`` of them."""
    if not text_data:
        return {}
    try:
        # Leniently (the frame may be refused for another string in it): only the id must be text.
        content = json.loads(text_data)
    except (ValueError, RecursionError):
        return {}
    if not isinstance(content, dict):
        return {}
    client_id = content["id"] if "id" in content else content.get("idempotency_key")
    if isinstance(client_id, str) and len(client_id) <= MAX_IDEMPOTENCY_KEY and json_input.is_text(client_id):
        return {"id": client_id}
    return {}


def _frame_size(text_data: str | None, bytes_data: bytes | None) -> int:
    """The frame's size in bytes (a text frame's UTF-8 length: at most 4 bytes a character)."""
    if text_data is None:
        return len(bytes_data or b"")
    if len(text_data) * 4 <= settings.CASINO_WS_MAX_FRAME_BYTES:
        return len(text_data)  # surely within the limit: no need to encode
    return len(text_data.encode())
