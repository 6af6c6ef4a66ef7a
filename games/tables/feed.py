"""The process's realtime feed, shared by both table families (protocol:
docs/websocket.md, "Delivery" and "Close codes, resume and backpressure").
Interface layer: asyncio and sockets; no game rule lives here.

- ``LogReader``: ONE reader of the event store per ASGI process (event loop).
  It tails the store's *safe* global log (``LogFollower``: never past a
  transaction of this database still running, so a late commit is delivered
  late, never skipped; one running past ``CASINO_FEED_GAP_SECONDS`` is read
  past and its events follow when it commits; each table lane's deltas of a
  batch in position order, ``in_lane_order``), woken by PostgreSQL NOTIFY on
  round-stream commits and otherwise polling every ``CASINO_RELAY_POLL_SECONDS``. Each family registers a
  translator (``register_translator``) that turns a batch of events into
  ``Delta`` objects, already redacted and JSON-encoded once for everyone.
- ``TableFeed``: one per table (family, table id) and process; it hands each
  ``Delta`` to its subscribers in log order. Handing out never awaits: it
  puts frames on each connection's bounded ``Outbox`` and moves on, so no
  connection can stall the reader, another table or another connection.
- ``Outbox``: a connection's bounded queue of outbound frames and the one
  writer task that drains it into the socket. A queue that overflows
  (``CASINO_WS_OUTBOX_FRAMES``), a send that does not complete within
  ``CASINO_WS_SEND_TIMEOUT_SECONDS``, or a client that takes none of the bytes
  waiting for it for that long (``delivery_progress``) closes the connection
  with 4408 and unsubscribes it; while it stays open nothing is dropped. Any failure of a
  writer (client gone, dead socket) removes that connection only.
- ``FeedSocket``: the consumers' mixin: every frame they send (deltas, the
  snapshot, chat, notices, pongs, errors) goes through the outbox, and a
  consumer that dies anywhere (connect, snapshot, a handler) leaves its feed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone

from casino import metrics
from casino.i18n import localized_frame
from casino.processes import database_url_of
from games.tables.collector import collector_held, walk_if_quiet, walks_deferred
from games.tables.intake import delivery_progress
from games.tables.outbox import Outbox, transport_of
from ledger.services.events import LogFollower, RecordedEvent, head_position

log = logging.getLogger(__name__)

# "Too slow: reconnect with your last seq and take a snapshot."
NOTIFY_CHANNEL = "casino_round_events"  # the trigger: games/migrations/0001_squashed_0016_deal_keys.py
BATCH = 2000


def encode(message: Mapping[str, Any]) -> str:
    """A frame's text (compact JSON), encoded once however many receive it."""
    return json.dumps(message, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class Delta:
    """One thing a table's watchers are told, in the table's log order.

    ``public``: the frame for every connection at the table. ``private``:
    player id -> that player's own frame, sent in addition to ``public`` or,
    with ``instead``, in its place. ``lane``/``position``: where the delta
    stands in the table's gap-free sequence (house: lane ``seq``; poker: lanes
    ``table`` and ``hand``); a connection never gets a delta whose position
    its snapshot (or an earlier delta) already covers. ``lane=None``: not
    sequenced (a player-stream fact), sent once to every live connection.
    ``control``: player id -> what that player's connections are told to do
    (``Subscriber.on_control``, called right after their frame is queued; e.g.
    a poker table socket follows its player moved to another table)."""

    public: str | None = None
    private: Mapping[int, str] = field(default_factory=dict)
    instead: bool = False
    lane: str | None = None
    position: int = 0
    control: Mapping[int, Any] = field(default_factory=dict)


# ``translate(events, tables)``: the deltas of ``tables`` (this family's tables
# watched in this process; ``None``: every table) among ``events``.
Translator = Callable[[Sequence[RecordedEvent], Collection[int] | None], list[tuple[str, int, Delta]]]
_translators: dict[str, Translator] = {}
_births = 0  # feeds created in this process so far (the reader notices new ones mid-batch)


def register_translator(family: str, translate: Translator) -> None:
    """``translate(events, tables)`` -> ``(family, table id, Delta)`` for the
    events of the batch it knows, of ``tables`` only (called in a worker
    thread: it may query the database)."""
    _translators[family] = translate


class Subscriber:
    """A connection as its table's feed sees it: its player, its outbox, and
    how far its snapshot and the deltas since reach in each lane."""

    __slots__ = ("marks", "on_control", "outbox", "pending", "player_id")

    def __init__(self, player_id: int, outbox: Outbox) -> None:
        self.player_id, self.outbox = player_id, outbox
        # Called with a delta's ``control`` for this player (on the event loop; must not wait).
        self.on_control: Callable[[Any], None] | None = None
        self.marks: dict[str, int] | None = None  # None: no snapshot sent yet
        # While a snapshot is being read, deltas wait here: those it covers are
        # dropped by position when it is sent, the others follow it.
        self.pending: list[Delta] | None = None

    def offer(self, delta: Delta) -> None:
        if self.pending is not None:
            if len(self.pending) >= self.outbox.limit:
                self.outbox.too_slow("too many deltas while its snapshot was read", reason="snapshot_backlog")
                return
            self.pending.append(delta)
        elif self.marks is not None:
            self._send(delta)

    def _send(self, delta: Delta) -> None:
        assert self.marks is not None
        if delta.lane is not None:
            if delta.position <= self.marks.get(delta.lane, -1):
                return  # its snapshot (or an earlier copy) already has it
            self.marks[delta.lane] = delta.position
        own = delta.private.get(self.player_id)
        if own is not None:
            self.outbox.put(own)
        if delta.control and self.on_control is not None:
            control = delta.control.get(self.player_id)
            if control is not None:
                self.on_control(control)
        if own is not None and delta.instead:
            return
        if delta.public is not None:
            self.outbox.put(delta.public)

    def begin_snapshot(self) -> None:
        self.pending = []

    def end_snapshot(self, text: str | None, marks: Mapping[str, int]) -> None:
        """Send the snapshot (``None``: it failed), then what arrived meanwhile
        and it does not cover. Unsequenced deltas that arrived before the first
        snapshot are dropped: the snapshot's ``me`` was read after they came."""
        pending, self.pending = self.pending or [], None
        first = self.marks is None
        if text is not None:
            self.outbox.put(text)
            current = self.marks or {}
            self.marks = {lane: max(current.get(lane, -1), marks.get(lane, -1)) for lane in {*current, *marks}}
        if self.marks is None:
            return
        for delta in pending:
            if not (first and delta.lane is None):
                self._send(delta)


class TableFeed:
    """This process's feed of one table: its subscribers and its snapshot cache."""

    def __init__(self, family: str, table_id: int) -> None:
        self.family, self.table_id = family, table_id
        self.subscribers: dict[Subscriber, None] = {}  # insertion-ordered set
        # The public part of the snapshot, built once per table change (see
        # the families' snapshot functions): key -> value, one entry per kind.
        self.cache: dict[str, tuple[Any, Any]] = {}

    def publish(self, delta: Delta) -> None:
        """Hand a delta to every subscriber; never waits, never raises."""
        for subscriber in list(self.subscribers):
            try:
                subscriber.offer(delta)
            except Exception:
                log.exception("feed: dropping a subscriber of %s %s", self.family, self.table_id)
                self.subscribers.pop(subscriber, None)

    def cached(self, kind: str, key: Any, build: Callable[[], Any]) -> Any:
        """``build()`` unless the cached ``kind`` was built for the same ``key``."""
        entry = self.cache.get(kind)
        if entry is not None and entry[0] == key:
            return entry[1]
        value = build()
        self.cache[kind] = (key, value)
        return value


_feeds: dict[tuple[str, int], TableFeed] = {}


def feed_of(family: str, table_id: int) -> TableFeed | None:
    """The process's feed of a table, if anyone in it watches the table."""
    return _feeds.get((family, table_id))


def join(family: str, table_id: int, subscriber: Subscriber) -> TableFeed:
    global _births
    feed = _feeds.get((family, table_id))
    if feed is None:
        feed = _feeds[(family, table_id)] = TableFeed(family, table_id)
        _births += 1
    feed.subscribers[subscriber] = None
    return feed


def watched() -> dict[str, frozenset[int]]:
    """Family -> the tables someone in this process watches (read on the event loop)."""
    tables: dict[str, set[int]] = {}
    for family, table_id in _feeds:
        tables.setdefault(family, set()).add(table_id)
    return {family: frozenset(ids) for family, ids in tables.items()}


def leave(family: str, table_id: int, subscriber: Subscriber) -> None:
    """Idempotent; the last subscriber gone, the feed (and its cache) goes too."""
    feed = _feeds.get((family, table_id))
    if feed is None:
        return
    feed.subscribers.pop(subscriber, None)
    if not feed.subscribers:
        del _feeds[(family, table_id)]


def route(deltas: Iterable[tuple[str, int, Delta]]) -> None:
    """Hand each delta to its table's feed in this process (if any)."""
    for family, table_id, delta in deltas:
        feed = _feeds.get((family, table_id))
        if feed is not None:
            feed.publish(delta)


# --- the process's one reader of the event store --------------------------------


def new_follower() -> LogFollower:
    """A follower of the global log from its head (a connecting client gets a
    snapshot, history is not replayed), skipping a transaction that holds it
    back past ``CASINO_FEED_GAP_SECONDS``."""
    return LogFollower(after=head_position(), gap_seconds=settings.CASINO_FEED_GAP_SECONDS)


def translate(events: Sequence[RecordedEvent], tables: Mapping[str, frozenset[int]]) -> list[tuple[str, int, Delta]]:
    """``events`` as deltas of the watched ``tables`` (family -> table ids).

    A database error propagates (the reader retries the batch). Any other
    failure of a translator is a bug in presenting one event: that family's
    batch is translated again event by event and the event that fails is
    skipped and logged, so one bad event cannot stall every table's realtime
    (its watchers miss that delta; a gap in their sequence makes clients
    resume with a snapshot, docs/websocket.md)."""
    deltas: list[tuple[str, int, Delta]] = []
    for family, translator in list(_translators.items()):
        if not tables.get(family):
            continue
        try:
            deltas.extend(translator(events, tables[family]))
        except DatabaseError:
            raise
        except Exception:
            log.exception("feed: the %s translator failed on a batch; translating it event by event", family)
            for event in events:
                try:
                    deltas.extend(translator([event], tables[family]))
                except DatabaseError:
                    raise
                except Exception:
                    log.exception("feed: skipping event %s of %s (%s): its translator fails", event.position,
                                  event.stream_id, event.type)  # fmt: skip
    return deltas


def next_batch(
    follower: LogFollower, tables: Mapping[str, frozenset[int]]
) -> tuple[list[RecordedEvent], list[tuple[str, int, Delta]]]:
    """The follower's next committed events, and their deltas for the watched
    ``tables``. Presenting costs far more than reading: a process presents
    only what its own connections watch."""
    mark = follower.mark()
    try:
        events = follower.read(limit=BATCH)
        deltas = in_lane_order(translate(events, tables)) if events else []
    except BaseException:
        follower.rewind(mark)  # the reader retries the batch
        raise
    return events, deltas


def in_lane_order(deltas: list[tuple[str, int, Delta]]) -> list[tuple[str, int, Delta]]:
    """``deltas`` with each table lane's sequenced deltas in position order,
    each kept in the slots its lane had (everything else stays put).

    The log is read in ``(txid, position)`` order, and transaction ids are
    handed out when a transaction first writes, not when it commits: a command
    that took its id early (it locked its wallet first) can append a table's
    next event after a younger transaction appended the one before, and both
    can arrive in one batch, the later one first. Within a lane the positions
    are the commit order (a table's events are appended one transaction after
    the other), so sorting restores it."""
    slots: dict[tuple[str, int, str], list[int]] = {}
    for index, (family, table_id, delta) in enumerate(deltas):
        if delta.lane is not None:
            slots.setdefault((family, table_id, delta.lane), []).append(index)
    ordered = list(deltas)
    for indexes in slots.values():
        if len(indexes) > 1:
            lane = sorted((deltas[i] for i in indexes), key=lambda item: item[2].position)
            for index, item in zip(indexes, lane, strict=True):
                ordered[index] = item
    return ordered


class LogReader:
    """The process's reader task; started by the first websocket connection.

    Its database work (reading the log, translating) runs on a thread of its
    own, never on the thread the consumers' ``database_sync_to_async`` calls
    share: there a batch waited behind every snapshot and command of the
    process's sockets (``bench fanout``: up to 1.8 s behind the snapshots 50
    never-reading clients kept asking for), and every table's deltas with it."""

    def __init__(self) -> None:
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="casino-feed-reader")
        self.task: asyncio.Task[None] | None = None
        self.listener: asyncio.Task[None] | None = None
        self.follower: LogFollower | None = None
        self.ready = asyncio.Event()
        self.wake = asyncio.Event()

    def ensure_running(self) -> None:
        loop = asyncio.get_running_loop()
        if self.task is None or self.task.done():
            self.task = loop.create_task(self.run())
        if connection.vendor == "postgresql" and (self.listener is None or self.listener.done()):
            self.listener = loop.create_task(self.listen())

    async def listen(self) -> None:
        """Wake the reader when a round-stream event commits (PostgreSQL NOTIFY
        sent by the trigger of migration ``games.0006``). Only a hint: what to
        send is still read from the safe global log, and the poll stays as the
        fallback (player streams, poker streams, a bound held back by an older
        transaction, a lost listener connection)."""
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
                log.exception("feed: LISTEN connection lost; polling until it is back")
                await asyncio.sleep(1)

    def in_thread(self, func: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
        """``func`` on the reader's own thread (with Django's connection upkeep around it)."""
        return database_sync_to_async(func, thread_sensitive=False, executor=self.executor)

    async def run(self) -> None:
        """Read and hand out forever, running the collector freezer's due walks
        of everything when quiet (``walks_deferred``, ``walk_if_quiet``)."""
        with walks_deferred():
            await self._read_forever()

    async def _read_forever(self) -> None:
        if self.follower is None:
            self.follower = await self.in_thread(new_follower)()
        self.ready.set()
        poll = settings.CASINO_RELAY_POLL_SECONDS
        while True:
            self.wake.clear()  # a commit from now on wakes the next wait
            births, tables = _births, watched()
            mark = self.follower.mark()
            try:
                events, deltas = await self.in_thread(next_batch)(self.follower, tables)
                if events and _births != births:
                    # Feeds born while the batch was read: their tables' events of
                    # this batch may postdate the snapshots they are taking.
                    now = watched()
                    born = {family: ids - tables.get(family, frozenset()) for family, ids in now.items()}
                    deltas = in_lane_order(deltas + await self.in_thread(translate)(events, born))
            except asyncio.CancelledError:
                raise
            except Exception:  # a database hiccup must not kill realtime for good
                log.exception("feed: reading the log failed; retrying")
                self.follower.rewind(mark)
                await asyncio.sleep(1)
                continue
            # Handing out never waits and never raises: the follower has moved
            # on, so no batch is read (or sent) twice.
            hand_out(deltas)
            if events:
                metrics.feed_batch(
                    oldest=min(e.recorded_at for e in events), count=len(events),
                    position=self.follower.position.position, now=timezone.now(),
                )  # fmt: skip
                continue
            if not self.wake.is_set():  # nothing pending: the moment for a due walk of everything
                walk_if_quiet()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), poll)


def hand_out(deltas: list[tuple[str, int, Delta]]) -> None:
    """``route(deltas)`` with CPython's cyclic garbage collector held off until
    the writers it wakes have written their frames (why: ``games.tables.collector``)."""
    if deltas:
        with collector_held():
            route(deltas)


_readers: dict[int, LogReader] = {}


def reader() -> LogReader:
    """The reader of the running event loop (one per process in practice)."""
    key = id(asyncio.get_running_loop())
    if key not in _readers:
        _readers[key] = LogReader()
    return _readers[key]


# --- the consumers' side ----------------------------------------------------------


class FeedSocket:
    """Mixin for table consumers (put it before ``JSONFrames``): every frame the
    consumer sends goes through its bounded ``Outbox``; ``subscribe`` joins the
    table's feed; ``snapshot_then_live`` sends a snapshot in the feed's order;
    the feed is left however the consumer ends.

    The consumer sets ``feed_family``, ``table_id`` and ``player_id``."""

    feed_family: str
    table_id: int
    player_id: int
    outbox: Outbox | None = None
    subscriber: Subscriber | None = None
    _transport: Any = None
    # When the client's last snapshot was queued: what it had acknowledged, and
    # how many bytes it then had to take to have that snapshot (``delivery_progress``).
    _snapshot_owed: tuple[int, int] | None = None  # (acknowledged, waiting) once the last snapshot was written
    _snapshot_queued = False  # the last snapshot is queued, not written yet
    # The player's language for error frames' messages (casino.i18n), set at the handshake
    # (JSONFrames.admit); None: English, as raised.
    language: str | None = None

    async def _raw_send(self, text: str) -> None:
        await super().send(text_data=text)  # type: ignore[misc]

    async def _raw_close(self, code: int) -> None:
        await super().close(code=code)  # type: ignore[misc]

    def _abort(self) -> None:
        """Drop the TCP connection now (a too-slow client that takes not even
        its close frame): see ``Outbox`` and ``transport_of``."""
        transport = transport_of(getattr(self, "base_send", None))
        if transport is None:
            log.warning("feed: cannot abort a connection: no transport behind the ASGI send")
            return
        transport.abort()

    def _progress(self) -> tuple[int, int] | None:
        """The client's intake (``delivery_progress``), else ``None``."""
        if self._transport is None:
            self._transport = transport_of(getattr(self, "base_send", None))
            if self._transport is None:
                return None
        return delivery_progress(self._transport)

    def _outbox(self) -> Outbox:
        if self.outbox is None:
            self.outbox = Outbox(send=self._raw_send, close=self._raw_close, on_gone=self.leave_feed, abort=self._abort,
                                 progress=self._progress)  # fmt: skip
        return self.outbox

    async def send(self, text_data: str | None = None, bytes_data: bytes | None = None, close: bool = False) -> None:
        """Queue a text frame (binary frames are never sent by these consumers)."""
        if text_data is not None:
            self._outbox().put(text_data)
        if close:
            await self._raw_close(1000)

    async def send_json(self, content: Any, close: bool = False) -> None:
        await self.send(text_data=encode(localized_frame(content, self.language)), close=close)

    def subscribe(self) -> None:
        """Join the table's feed (before the first snapshot: a delta racing the
        snapshot is then either in it or sent after it; never lost)."""
        reader().ensure_running()
        self.subscriber = Subscriber(self.player_id, self._outbox())
        join(self.feed_family, self.table_id, self.subscriber)

    def leave_feed(self) -> None:
        if self.subscriber is not None:
            leave(self.feed_family, self.table_id, self.subscriber)

    async def snapshot_then_live(
        self, read: Callable[[], Awaitable[tuple[dict[str, Any], Mapping[str, int]]]], *, requested: bool = False
    ) -> None:
        """Send the snapshot ``read()`` returns (the frame and its marks per lane);
        deltas that arrive meanwhile follow it unless it covers them.

        ``requested``: the client asked for it. While the client has not taken
        its last snapshot yet (it is still queued; or bytes wait for the client
        and it has acknowledged fewer than waited right after that snapshot was
        written, counted on the wire, ``_snapshot_written``), that
        snapshot is its answer: the deltas
        after it follow it, so it then holds what a new one would show, and a
        client that asks again and again without reading costs no snapshot
        query each time (``bench fanout``'s never-reading clients did, until
        they were closed)."""
        assert self.subscriber is not None
        if requested and self._snapshot_queued:
            return  # not written yet: it answers, the deltas after it follow it
        if requested and self._snapshot_owed is not None:
            found = self._progress()
            if found is not None and found[0] > 0 and found[1] - self._snapshot_owed[0] < self._snapshot_owed[1]:
                return
        self.subscriber.begin_snapshot()
        text: str | None = None
        marks: Mapping[str, int] = {}
        try:
            frame, marks = await read()
            text = encode(frame)
        finally:
            self.subscriber.end_snapshot(text, marks)
            self._snapshot_owed = None
            self._snapshot_queued = text is not None and self._progress() is not None
            if text is not None and self._snapshot_queued:
                self._outbox().when_written(text, self._snapshot_written)

    def _snapshot_written(self) -> None:
        """What the client owes once the snapshot is written: every byte waiting for
        it then, the snapshot's as they went on the wire (compressed, with
        permessage-deflate, as browsers ask: its text's length would overstate
        them, and a request would go unanswered while anything else waited)."""
        self._snapshot_queued = False
        found = self._progress()
        self._snapshot_owed = (found[1], found[0]) if found is not None else None

    async def dispatch(self, message: Any) -> None:
        try:
            await super().dispatch(message)  # type: ignore[misc]
        except BaseException:
            # Died in connect, in a snapshot or in a handler, or stopped: leave
            # the feed here, as websocket.disconnect may never come.
            await self.stop_feed()
            raise

    async def stop_feed(self) -> None:
        self.leave_feed()
        if self.outbox is not None:
            await self.outbox.stop()


@contextlib.contextmanager
def consistent_read() -> Iterator[None]:
    """One transaction whose reads all see the same committed state (REPEATABLE
    READ on PostgreSQL): a snapshot's view and the seq or versions it reports
    agree, so the deltas it covers are exactly those dropped after it."""
    from django.db import transaction

    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield


async def ready() -> None:
    """Wait until the process's reader has its starting position."""
    await reader().ready.wait()
