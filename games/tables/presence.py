"""Who is *present* at a table (docs/websocket.md, "Presence"; issue #22).

A player is present at a table while they hold a websocket to it, or for
``CASINO_PRESENCE_GRACE_SECONDS`` after their last REST call to it. The house
dealer asks at "No More Bets" (``absent``: their bets are declined), the poker
dealer when a hand starts and when a player's turn runs out.

One row per (family, table, player) in ``TablePresence``, in the database:
the same store whichever process asks (ASGI processes, Celery workers), with
PostgreSQL in production and with the embedded default's SQLite file alike.

- A websocket holds a *lease*: ``socket_until`` is pushed
  ``CASINO_PRESENCE_LEASE_SECONDS`` ahead when the socket is admitted and
  every third of that while it stays open (one UPDATE per process for all its
  sockets, ``SocketLeases``). A socket that closes sets it to the moment it
  closed; a process that is killed stops refreshing, so its players stop
  being present when the lease runs out, never later.
- ``connection`` names the one socket holding the lease: a second socket of
  the same player to the same table takes it over (and the consumers close
  the first one, ``CLOSE_REPLACED``), so the first one's close or refresh no
  longer touches the lease.
- A REST call to the table (``PresenceMiddleware``: any answered request on
  the table's URLs, bets included) sets ``rest_at``.

Reads create no row (issue #21): a GET refreshes an existing row only, and a
websocket creates one only for a player seated at the table. A watcher's
socket holds the lease once its player has a row: a REST command to the
table creates it (``bind_sockets``, at the next refresh) or a command through
the socket takes a seat (``PresentSocket.presence_acted``).

A player with no row at all for the table was never seen by its interfaces:
only code calling the services directly (service tests, the fuzz, the
benchmarks) does that, and such a player counts as present. Taking a seat or
betting always goes through a REST command or a socket of a seated player,
both of which write the row, so a real player with something at stake has one.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Collection, Mapping
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, models, transaction
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

log = logging.getLogger(__name__)

HOUSE = "house"
POKER = "poker"
FAMILIES = (HOUSE, POKER)

# URL names (games.urls, games.poker.api.views) of a table's REST calls, by family.
TABLE_URLS = {
    "table": HOUSE, "table-join": HOUSE, "table-leave": HOUSE, "bet-chip": HOUSE, "bet-undo": HOUSE,
    "bet-clear": HOUSE, "bet-repeat": HOUSE, "bet-double": HOUSE, "decision": HOUSE, "table-chat": HOUSE,
    "poker-table": POKER, "poker-sit": POKER, "poker-top-up": POKER, "poker-leave": POKER,
    "poker-sit-out": POKER, "poker-sit-in": POKER, "poker-act": POKER,
}  # fmt: skip


class TablePresence(models.Model):
    """A player's presence at one table (see the module docstring)."""

    family = models.CharField(max_length=8)
    table_id = models.BigIntegerField()
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="presences")
    connection = models.CharField(max_length=32, blank=True, default="", help_text="The socket holding the lease.")
    socket_until = models.DateTimeField(null=True, blank=True, help_text="The websocket lease's end.")
    rest_at = models.DateTimeField(null=True, blank=True, help_text="The last REST call to the table.")

    class Meta:
        app_label = "games"
        constraints = [
            models.UniqueConstraint(fields=["family", "table_id", "player"], name="presence_one_per_table"),
        ]
        indexes = [models.Index(fields=["connection"], name="presence_connection")]

    def __str__(self) -> str:
        return f"player {self.player_id} at {self.family} table {self.table_id}"

    def present_at(self, moment: datetime, grace: timedelta) -> bool:
        if self.socket_until is not None and self.socket_until >= moment:
            return True
        return self.rest_at is not None and self.rest_at >= moment - grace


def _upsert(family: str, table_id: int, player_id: int, *, create: bool = True, **fields: Any) -> bool:
    """Update the row, or create it when ``create``; whether there is one now."""
    rows = TablePresence.objects.filter(family=family, table_id=table_id, player_id=player_id)
    if rows.update(**fields):
        return True
    if not create:
        return False
    try:
        with transaction.atomic():
            TablePresence.objects.create(family=family, table_id=table_id, player_id=player_id, **fields)
    except IntegrityError:  # created meanwhile by another request or socket (or the player is gone)
        return bool(rows.update(**fields))
    return True


def touch(*, family: str, table_id: int, player_id: int, now: datetime, create: bool = True) -> bool:
    """A REST call of ``player_id`` to the table: present until ``now`` + the grace.
    ``create=False`` (a read): only a player already known at the table is
    touched, so reading creates no row. Whether the player has a row now."""
    return _upsert(family, table_id, player_id, create=create, rest_at=now)


#: Each family's seat model (``table_id``, ``player_id``), registered at start-up (``games.apps``),
#: so this shared module imports no family.
_SEATS: dict[str, type[models.Model]] = {}


def register_seats(family: str, model: type[models.Model]) -> None:
    """``model``'s rows are the seats of ``family``'s tables."""
    if family not in FAMILIES:
        raise ValueError(f"unknown table family {family!r}")
    _SEATS[family] = model


def _seated(family: str, table_id: int, player_id: int) -> bool:
    return _SEATS[family]._default_manager.filter(table_id=table_id, player_id=player_id).exists()


def hold_socket(*, family: str, table_id: int, player_id: int, connection: str, now: datetime) -> bool:
    """Socket ``connection`` now holds the player's lease at the table (taking
    it over from any other socket of theirs there). A watcher (no row, no seat
    at the table) gets no row: False, and the lease is bound later, when a REST
    call of theirs creates the row (``bind_sockets``)."""
    until = now + timedelta(seconds=settings.CASINO_PRESENCE_LEASE_SECONDS)
    fields: dict[str, Any] = {"connection": connection, "socket_until": until}
    if _upsert(family, table_id, player_id, create=False, **fields):
        return True
    return _seated(family, table_id, player_id) and _upsert(family, table_id, player_id, **fields)


def bind_sockets(*, sockets: Mapping[str, tuple[str, int, int]], now: datetime) -> set[str]:
    """The sockets (connection -> (family, table, player)) whose player has a
    row at their table by now take its lease (a row no other socket holds);
    returns the connections bound."""
    bound: set[str] = set()
    items = list(sockets.items())
    for start in range(0, len(items), 500):
        chunk = dict(items[start : start + 500])
        wanted = {key: connection for connection, key in chunk.items()}
        match = Q()
        for family, table_id, player_id in wanted:
            match |= Q(family=family, table_id=table_id, player_id=player_id)
        for row in TablePresence.objects.filter(match, connection=""):
            connection = wanted.get((row.family, row.table_id, row.player_id))
            if connection is None:
                continue
            if hold_socket(family=row.family, table_id=row.table_id, player_id=row.player_id, connection=connection,
                           now=now):  # fmt: skip
                bound.add(connection)
    return bound


def release_socket(*, connection: str, now: datetime) -> None:
    """Socket ``connection`` closed at ``now``: its lease ends (a lease another
    socket took over is left alone)."""
    TablePresence.objects.filter(connection=connection).update(socket_until=now, connection="")


def refresh_sockets(*, connections: Collection[str], now: datetime) -> int:
    """Push the leases of these open sockets ahead (one UPDATE)."""
    if not connections:
        return 0
    until = now + timedelta(seconds=settings.CASINO_PRESENCE_LEASE_SECONDS)
    return TablePresence.objects.filter(connection__in=list(connections)).update(socket_until=until)


def absent(*, family: str, table_id: int, player_ids: Collection[int], at: datetime) -> set[int]:
    """The players of ``player_ids`` who were not present at the table at ``at``
    (never-seen players count as present: see the module docstring). Presence is
    known up to the present moment: an ``at`` later than the clock now (a dealer
    step run ahead of time) is taken as now."""
    if not player_ids:
        return set()
    at = min(at, timezone.now())
    grace = timedelta(seconds=settings.CASINO_PRESENCE_GRACE_SECONDS)
    rows = TablePresence.objects.filter(family=family, table_id=table_id, player_id__in=list(player_ids))
    return {row.player_id for row in rows if not row.present_at(at, grace)}


def is_present(*, family: str, table_id: int, player_id: int, at: datetime) -> bool:
    return player_id not in absent(family=family, table_id=table_id, player_ids=[player_id], at=at)


# --- websocket leases of this process ------------------------------------------------------------


class SocketLeases:
    """The sockets this process holds leases for, refreshed together every third
    of ``CASINO_PRESENCE_LEASE_SECONDS`` by one task on the event loop."""

    def __init__(self) -> None:
        self.held: set[str] = set()
        # Sockets of players without a row at their table yet (watchers): bound
        # when one appears (a REST call: joining, sitting down, a bet).
        self.unbound: dict[str, tuple[str, int, int]] = {}
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def hold(self, *, family: str, table_id: int, player_id: int, connection: str) -> None:
        from channels.db import database_sync_to_async

        held = await database_sync_to_async(hold_socket)(
            family=family, table_id=table_id, player_id=player_id, connection=connection, now=timezone.now()
        )
        if held:
            self.held.add(connection)
        else:
            self.unbound[connection] = (family, table_id, player_id)
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done() or self._loop is not loop:
            self._loop, self._task = loop, loop.create_task(self._refresh_forever())

    async def rebind(self, connection: str) -> None:
        """An unbound socket's player did something at the table through it (took
        a seat, placed a bet): hold the lease now if they have a seat."""
        key = self.unbound.get(connection)
        if key is None:
            return
        from channels.db import database_sync_to_async

        family, table_id, player_id = key
        if await database_sync_to_async(hold_socket)(
            family=family, table_id=table_id, player_id=player_id, connection=connection, now=timezone.now()
        ):
            self.unbound.pop(connection, None)
            self.held.add(connection)

    async def release(self, connection: str) -> None:
        from channels.db import database_sync_to_async

        self.unbound.pop(connection, None)
        if connection not in self.held:
            return
        self.held.discard(connection)
        try:
            await database_sync_to_async(release_socket)(connection=connection, now=timezone.now())
        except Exception:  # the lease runs out by itself
            log.exception("presence: could not release a websocket lease")

    async def _refresh_forever(self) -> None:
        from channels.db import database_sync_to_async

        while self.held or self.unbound:
            await asyncio.sleep(settings.CASINO_PRESENCE_LEASE_SECONDS / 3)
            try:
                await database_sync_to_async(refresh_sockets)(connections=set(self.held), now=timezone.now())
                if self.unbound:
                    bound = await database_sync_to_async(bind_sockets)(sockets=dict(self.unbound),
                                                                       now=timezone.now())  # fmt: skip
                    for connection in bound:
                        if self.unbound.pop(connection, None) is not None:
                            self.held.add(connection)
            except Exception:
                log.exception("presence: refreshing the websocket leases failed")


socket_leases = SocketLeases()


def replaced_group(family: str, table_id: int, player_id: int) -> str:
    """The channel-layer group of one player's sockets at one table: a new socket
    tells the older ones to close (``CLOSE_REPLACED``)."""
    return f"presence-{family}-{table_id}-{player_id}"


class PresentSocket:
    """Mixin of the table consumers (before ``JSONFrames`` in the bases): the
    socket's presence lease and seed 000's rule that a player joining the same
    table from another device or browser leaves it on the first one. Once
    admitted, ``take_presence`` holds the lease and tells the player's other
    sockets at this table (any process: the channel layer's group
    ``replaced_group``) to close with ``CLOSE_REPLACED`` (4409). The lease is
    released however the consumer ends."""

    presence_family: str
    channel_layer: Any
    channel_name: str
    _presence: tuple[str, str] | None = None  # (connection id, group)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)  # type: ignore[misc]
        finally:
            await self.drop_presence()

    async def take_presence(self, *, table_id: int, player_id: int) -> None:
        connection = uuid.uuid4().hex
        group = replaced_group(self.presence_family, table_id, player_id)
        await self.channel_layer.group_add(group, self.channel_name)
        self._presence = (connection, group)
        await socket_leases.hold(family=self.presence_family, table_id=table_id, player_id=player_id,
                                 connection=connection)  # fmt: skip
        await self.channel_layer.group_send(group, {"type": "presence.replaced", "connection": connection})

    async def presence_acted(self) -> None:
        """A command of this socket's player succeeded: a watcher who took a seat
        through it now holds the lease."""
        if self._presence is not None:
            await socket_leases.rebind(self._presence[0])

    async def presence_replaced(self, message: dict[str, Any]) -> None:
        """Another socket of this player took over at this table: close this one."""
        from games.tables.realtime import CLOSE_REPLACED

        if self._presence is not None and message.get("connection") != self._presence[0]:
            await self.close(code=CLOSE_REPLACED)  # type: ignore[attr-defined]

    async def drop_presence(self) -> None:
        presence, self._presence = self._presence, None
        if presence is None:
            return
        connection, group = presence
        await socket_leases.release(connection)
        try:
            await self.channel_layer.group_discard(group, self.channel_name)
        except Exception:  # the group's membership expires in the layer
            log.exception("presence: could not leave a replacement group")


# --- REST calls ------------------------------------------------------------------------------------


# A REST call refreshes the row at most once a second per player and table (per process).
_TOUCH_EVERY = 1.0
_touched: dict[tuple[str, int, int], tuple[float, bool]] = {}  # key -> (when, the row existed)


class PresenceMiddleware:
    """Records an answered (status < 400) REST call of an authenticated player to
    a table's URLs (``TABLE_URLS``) as their presence there. A command (POST)
    creates the player's row at the table if need be; a read (GET) refreshes an
    existing row only (reads create no row). Either writes at most once a second
    per player and table in this process, once the row exists."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        family = TABLE_URLS.get(match.url_name or "") if match is not None else None
        user = getattr(request, "user", None)  # DRF sets it on the Django request when it authenticates
        if family is None or response.status_code >= 400 or user is None or not user.is_authenticated:
            return response
        key = (family, int(match.kwargs["table_id"]), int(user.pk))  # type: ignore[union-attr]
        write = request.method not in ("GET", "HEAD", "OPTIONS")  # a read creates no row
        last, had_row = _touched.get(key, (-_TOUCH_EVERY, False))
        if time.monotonic() - last >= _TOUCH_EVERY or (write and not had_row):
            try:
                has_row = touch(family=family, table_id=key[1], player_id=key[2], now=timezone.now(), create=write)
                _touched[key] = (time.monotonic(), has_row)
                if len(_touched) > 100_000:
                    _touched.clear()
            except Exception:
                log.exception("presence: could not record a REST call")
        return response
