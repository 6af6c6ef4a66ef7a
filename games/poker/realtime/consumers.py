"""``ws/poker/<id>/``: one player's realtime feed of a poker table (docs/websocket.md, "Poker tables").

Thin: authenticate, join the table's feed (``games.tables.feed``, the same machinery
as the house tables), send the snapshot from the same redacting presenter as
the REST API, then the feed's deltas, redacted by ``frames_for``:

- ``{"type": "delta", "hand_id", "version", "event"}``: a hand event (others'
  hole cards as ``null``); the viewer's own ``poker.hole_cards_dealt`` comes
  as ``{"type": "private", ...}`` with the cards, instead;
- ``{"type": "table", "version", "event"}``: a seat event (sat down, topped
  up, stood up, sat out, sat in). A sit-out for responsible gaming carries
  its ``reason`` and refusal ``code`` to that player only; the others see
  ``reason: null`` and no code (``presenters.public_table_event``).

- ``{"type": "moved", "tournament_id", "from_table", "to_table", "seat", ...}``:
  a tournament moved the viewer to another table; the socket follows them
  (``follow``): it leaves this table's feed and presence, joins the new
  table's and sends its snapshot (close 4410 if that fails).

The events come from the process's one reader of the event store's global log
(``games.tables.feed.LogReader``), which calls ``deltas`` with every batch: one
reader per process for every table of both families, not one poll per table.

From the client: ``{"type": "act", "id", "action", "amount"?}`` (the REST act
command, answered ``ack`` or ``error``), ``{"type": "snapshot"}``, ``{"type": "ping"}``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from django.db.models import Max
from django.utils import timezone

from games.poker import event_types as et
from games.poker import services
from games.poker.api.views import act_command
from games.poker.engine.events import HoleCardsDealt
from games.poker.models import PokerHand, PokerTable
from games.poker.realtime import presenters
from games.poker.realtime.socket import PokerSocket
from games.poker.services.tables import load_hand
from games.tables import ws_commands
from games.tables.feed import Delta, TableFeed, consistent_read, encode, feed_of, register_translator
from games.tables.presence import POKER, PresentSocket
from games.tables.realtime import (
    CLOSE_MOVED,
    authenticate_scope,
    message_type,
)
from ledger.legs import without_legs
from ledger.models import Event
from ledger.services.events import RecordedEvent

log = logging.getLogger(__name__)

FAMILY = "poker"
TABLE_PREFIX = "poker-table-"
HAND_PREFIX = "poker-hand-"
TOURNAMENT_PREFIX = "poker-tournament-"
# A hand event's position in lane "hand": the hand's number at the table, then
# its version in the hand's stream (a stream never reaches 2**32 events).
HAND_SHIFT = 32


def hand_position(hand_number: int, version: int) -> int:
    return (hand_number << HAND_SHIFT) | version


class HandInfo:
    """What the translator caches per hand: its table, number and seats."""

    __slots__ = ("hand_number", "seats", "table_id")

    def __init__(self, table_id: int, hand_number: int, seats: dict[int, int]) -> None:
        self.table_id, self.hand_number, self.seats = table_id, hand_number, seats


_hands: dict[str, HandInfo] = {}


def hand_info(hand_id: str) -> HandInfo | None:
    info = _hands.get(hand_id)
    if info is None:
        row = PokerHand.objects.filter(hand_id=hand_id).values("table_id", "hand_number", "players").first()
        if row is None:
            return None
        seats = {int(seat): int(pid) for seat, pid in (row["players"] or {}).items()}
        info = _hands[hand_id] = HandInfo(row["table_id"], row["hand_number"], seats)
        if len(_hands) > 10_000:  # old hands are never needed again
            _hands.pop(next(iter(_hands)))
    return info


def frames_for(event: RecordedEvent, info: HandInfo) -> Delta | None:
    """A hand event as the feed's ``Delta``: the frame every watcher gets and,
    for a player's own hole cards, that player's frame instead (``None``: the
    event is shown to nobody, e.g. a hand shuffled before commitments)."""
    public = presenters.redact_event(dict(event.data), event.type, None)
    if public is None:
        return None
    base = {"hand_id": event.stream_id[len(HAND_PREFIX) :], "version": event.version}
    position = hand_position(info.hand_number, event.version)
    owner = info.seats.get(int(event.data.get("seat") or 0)) if event.type == HoleCardsDealt.type else None
    if owner is None:
        return Delta(public=encode({"type": "delta", **base, "event": public}), lane="hand", position=position)
    own = presenters.redact_event(
        dict(event.data), event.type, event.data.get("seat"), hand_id=str(base["hand_id"]), viewer_id=owner
    )  # the owner's own cards, opened with their key
    return Delta(
        public=encode({"type": "delta", **base, "event": public}),
        private={owner: encode({"type": "private", **base, "event": own})},
        instead=True,
        lane="hand",
        position=position,
    )


def moved_delta(event: RecordedEvent) -> tuple[str, int, Delta]:
    """``poker_tournament.player_moved`` as a delta of the table the player
    left: their own ``moved`` frame (nobody else's) and the control that makes
    their socket follow them to the new table (``PokerTableConsumer.follow``)."""
    data = event.data
    player, from_table = int(data["player_id"]), int(data["from_table"])
    moved = {"type": "moved", "tournament_id": int(event.stream_id[len(TOURNAMENT_PREFIX) :]),
             "from_table": from_table, "to_table": int(data["to_table"]), "seat": int(data["to_seat"]),
             "chips": data.get("chips"), "reason": data.get("reason")}  # fmt: skip
    delta = Delta(private={player: encode(moved)}, instead=True, control={player: moved})
    return FAMILY, from_table, delta


def deltas(events: Sequence[RecordedEvent], tables: Collection[int] | None = None) -> list[tuple[str, int, Delta]]:
    """The feed's translator for poker tables (``tables``: only these): seat
    events (lane ``table``, by the table stream's version) and hand events
    (lane ``hand``); a tournament player moved to another table (unsequenced,
    to that player only, ``moved_delta``)."""
    out: list[tuple[str, int, Delta]] = []
    for event in events:
        if event.stream_id.startswith(TABLE_PREFIX):
            table_id = int(event.stream_id[len(TABLE_PREFIX) :])
            if tables is not None and table_id not in tables:
                continue
            told = {"type": event.type, **without_legs(event.data)}  # the money legs: the ledger's record
            public = presenters.public_table_event(told)
            private: dict[int, str] = {}
            if public != told:  # told to the player concerned only (a responsible-gaming stop)
                private = {int(event.data["player_id"]): encode({"type": "table", "version": event.version,
                                                                 "event": told})}  # fmt: skip
            text = encode({"type": "table", "version": event.version, "event": public})
            seat_delta = Delta(public=text, private=private, instead=bool(private), lane="table",
                               position=event.version)  # fmt: skip
            out.append((FAMILY, table_id, seat_delta))
        elif event.stream_id.startswith(TOURNAMENT_PREFIX) and event.type == et.TOURNAMENT_MOVED:
            moved = moved_delta(event)
            if tables is None or moved[1] in tables:
                out.append(moved)
        elif event.stream_id.startswith(HAND_PREFIX):
            info = hand_info(event.stream_id[len(HAND_PREFIX) :])
            if info is None or (tables is not None and info.table_id not in tables):
                continue
            delta = frames_for(event, info)
            if delta is not None:
                out.append((FAMILY, info.table_id, delta))
    return out


register_translator(FAMILY, deltas)


def table_version(table_id: int) -> int:
    """The version of the table's seat stream now."""
    found = Event.objects.filter(stream_id=et.table_stream(table_id)).aggregate(v=Max("version"))["v"]
    return int(found or 0)


def latest_hand(table_id: int) -> tuple[str, int, int]:
    """(hand id, hand number, stream version) of the table's latest hand, or ("", 0, 0)."""
    row = (
        PokerHand.objects.filter(table_id=table_id)
        .order_by("-hand_number")
        .values_list("hand_id", "hand_number", "stream_version")
        .first()
    )
    return (row[0], int(row[1]), int(row[2])) if row else ("", 0, 0)


def _snapshot(table_id: int, viewer_id: int, feed: TableFeed | None = None) -> tuple[dict[str, Any], dict[str, int]]:
    with consistent_read():
        return _read_snapshot(table_id, viewer_id, feed)


def _read_snapshot(table_id: int, viewer_id: int, feed: TableFeed | None) -> tuple[dict[str, Any], dict[str, int]]:
    """The snapshot and its marks per lane. With the table's ``feed``, the
    current hand is replayed at most once per hand change (keyed by the hand
    and its ``stream_version``); only the viewer's view of it is built per
    snapshot. ``seq`` is the resume token (docs/websocket.md)."""

    def loader(hand: PokerHand) -> tuple[Any, Any, Any]:
        def build() -> tuple[Any, Any, Any]:
            return load_hand(hand.hand_id)

        if feed is None:
            return build()
        loaded: tuple[Any, Any, Any] = feed.cached("hand", (hand.hand_id, hand.stream_version), build)
        return loaded

    # One consistent read (``consistent_read``): the versions are those the view shows.
    version = table_version(table_id)
    _, number, hand_version = latest_hand(table_id)
    view = presenters.table_view(table_id=table_id, viewer_id=viewer_id, hand_loader=loader)
    hand_id = view["table"]["current_hand_id"] or ""
    snapshot = {"type": "snapshot", "table": view, "table_version": version, "hand_id": hand_id,
                "hand_version": hand_version if hand_id else 0,
                "seq": f"{version}:{hand_version if hand_id else 0}:{hand_id}"}  # fmt: skip
    return snapshot, {"table": version, "hand": hand_position(number, hand_version)}


def bad_resume(table_id: int, since: str) -> dict[str, Any] | None:
    """``None`` if ``since`` (``<table_version>:<hand_version>:<hand_id>``) is a
    point this table has reached, else the current one (``details``)."""
    version = table_version(table_id)
    latest_id, _, latest_version = latest_hand(table_id)
    current = {"seq": f"{version}:{latest_version}:{latest_id}"}
    parts = since.split(":", 2)
    if len(parts) != 3 or not parts[0].isdigit() or not parts[1].isdigit():
        return current
    since_table, since_hand, hand_id = int(parts[0]), int(parts[1]), parts[2]
    if since_table > version:
        return current
    if hand_id:
        number = PokerHand.objects.filter(table_id=table_id, hand_id=hand_id).values_list("stream_version", flat=True)
        reached = number.first()
        if reached is None or since_hand > reached:
            return current
    elif since_hand:
        return current
    return None


class PokerTableConsumer(PresentSocket, PokerSocket):
    """One websocket: one player watching (and playing at) one poker table."""

    feed_family = FAMILY
    presence_family = POKER
    model = PokerTable
    url_key = "table_id"
    table_id: int
    player_id: int
    following: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        if not await self.open(await self._authenticate()):
            return  # refused (4401, 4404) or closed 4429
        await self.take_presence(table_id=self.table_id, player_id=self.player_id)
        # Seed 001: back before the reservation ran out, a seat sat out as disconnected sits in again.
        await database_sync_to_async(services.rejoin)(table_id=self.table_id, player_id=self.player_id,
                                                      now=timezone.now())  # fmt: skip
        since = parse_qs((self.scope.get("query_string") or b"").decode()).get("since")
        if since:
            current = await database_sync_to_async(bad_resume)(self.table_id, since[0])
            if current is not None:
                message = "since is not a point this table has reached; take the snapshot."
                frame = {"type": "error", "code": "bad_resume_seq", "message": message, "details": current}
                await self.send_json(frame)
        await self.send_snapshot()

    async def _authenticate(self) -> Any:
        """``?ticket=`` (a websocket ticket) or the session user, as ``ws/tables/``."""
        return await authenticate_scope(self.scope)

    def subscribe(self) -> None:
        super().subscribe()
        assert self.subscriber is not None
        self.subscriber.on_control = self.follow

    def follow(self, moved: dict[str, Any]) -> None:
        """The player was moved to another table (their ``moved`` frame is queued):
        leave this table's feed now, so nothing of it follows that frame, then
        (``_follow``) watch the new table: presence there and its snapshot."""
        if moved["to_table"] == self.table_id or self.following is not None:
            return
        self.leave_feed()
        self.subscriber = None
        self.following = asyncio.get_running_loop().create_task(self._follow(int(moved["to_table"])))

    async def _follow(self, table_id: int) -> None:
        try:
            await self.drop_presence()
            self.table_id = table_id
            self.subscribe()  # before the snapshot, as at connect
            await self.take_presence(table_id=table_id, player_id=self.player_id)
            await self.send_snapshot()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("poker: following player %s to table %s failed", self.player_id, table_id)
            await self.close(code=CLOSE_MOVED)
        finally:
            self.following = None

    async def disconnect(self, code: int) -> None:
        if self.following is not None:
            self.following.cancel()
        await self.drop_presence()
        await self.stop_feed()

    async def read_snapshot(self) -> tuple[dict[str, Any], Mapping[str, int]]:
        feed = feed_of(FAMILY, self.table_id)
        return await database_sync_to_async(_snapshot)(self.table_id, self.player_id, feed)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        kind = message_type(content)
        if kind == "act":
            await self._act(content)
        elif kind == "snapshot" and self.following is not None:
            return  # the new table's snapshot is on its way
        else:
            await super().receive_json(content, **kwargs)  # snapshot, ping, unknown_message

    async def _act(self, content: dict[str, Any]) -> None:
        """The REST act command (``games.poker.api.views.act_command``) on a command
        thread; ``id`` is its idempotency key (``idempotency_key``, the older
        name, is still read when there is no ``id``). Answer: ``ack`` with the
        REST answer body, or ``error`` with the REST code."""
        client_id = content["id"] if "id" in content else content.get("idempotency_key")
        answer = await ws_commands.answer(
            "act", client_id, act_command, family="poker",
            table_id=self.table_id, player_id=self.player_id, raw_key=client_id, fields=lambda: content,
            now=timezone.now(),
        )  # fmt: skip
        await self.send_json(answer)
