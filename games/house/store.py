"""Loading and committing round aggregates: events, money and projections in one transaction.

Shared by the dealer-side (``games.house.services.rounds``) and player-side
(``games.house.services.bets``) services. Streams: ``round-{round_id}`` and
``round-{round_id}-player-{player_id}``. The only module with SQL or
``connection.vendor`` branches for house rounds: the player commands' read side
(``read_command``) and last write (``save_player``) are here too. The round
and player rows are projections of the events (``games.house.projectors``):
``commit`` applies the events it appends with the projectors, whose player
rows are derived in one place, ``project_player``, and written here only
(``save_rows`` for the dealer's steps and the rebuild, ``save_player`` and
``saving_commands`` for player commands, with the command's result).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from django.db import connection, transaction
from django.db.models import F

from casino.errors import DomainError
from casino.responsible_gaming import ROW_COLUMNS as RG_COLUMNS
from casino.responsible_gaming import ROW_TABLE as RG_TABLE
from casino.responsible_gaming import UNREAD_SETTINGS, settings_row
from games.house.models import HouseRound, HouseTable, PlayerRound, TableSeat
from games.house.projectors import HouseRoundProjector, PlayerRoundProjector
from games.house.round.events import ROUND_EVENT_TYPES, Event
from games.house.round.state import Chip, PlayerState, RoundState, apply_round, replay_round
from games.house.rules.definitions import DecisionTaken
from games.house.rules.registry import game as game_definition
from ledger.errors import IdempotencyKeyReused
from ledger.services import (
    EventRef,
    HoldOpening,
    HoldSettlement,
    NewEvent,
    PreparedBatch,
    StreamAppend,
    TransferSpec,
    append_events,
    house_account,
    open_hold,
    player_accounts,
    prepare_batch,
    read_stream,
    settle_prepared,
)
from ledger.services.events import RecordedEvent
from ledger.services.events import now as ledger_now
from ledger.services.money import account_key
from ledger.services.postings import MAX_KEY, bulk_cursor, claim, pipelined, record_result, request_hash
from ledger.services.projectors import events_of
from ledger.upcasting import CURRENT_VERSIONS


def round_stream(round_id: str) -> str:
    return f"round-{round_id}"


def player_stream(round_id: str, player_id: int) -> str:
    return f"{player_stream_prefix(round_id)}{player_id}"


def player_stream_prefix(round_id: str) -> str:
    """What every player stream of the round starts with (the player id follows)."""
    return f"round-{round_id}-player-"


def iso(moment: datetime) -> str:
    return moment.isoformat()


def load_round(round_id: str) -> RoundState:
    """Replay the round stream (a dozen events at most)."""
    return replay_round(read_stream(stream_id=round_stream(round_id)))


# Round states by (round id, stream version, database incarnation): events
# never change, so a state replayed at a version is that version's state for
# good. The bet and decision paths read the version from the (share-locked)
# round row and replay only when this process has not seen it yet: once per
# round phase, not per bet. The incarnation (PostgreSQL's
# ``pg_postmaster_start_time()``, read by the same query) guards against a
# database that lost commits this process saw: a failover to a replica behind,
# a restore or a crash both start another server, where a remembered version
# could be written again with other content.
_ROUND_CACHE: dict[tuple[str, int, object], RoundState] = {}
_ROUND_CACHE_SIZE = 64
# Both caches are shared by the HTTP pool's threads (casino.http): evicting and
# adding happen under this lock; reads need none.
_CACHES_LOCK = threading.Lock()


def _put(cache: dict[Any, Any], key: Any, value: Any, size: int) -> None:
    with _CACHES_LOCK:
        if key not in cache and len(cache) >= size:
            cache.pop(next(iter(cache)))
        cache[key] = value


def load_round_at(round_id: str, version: int, incarnation: object = None) -> RoundState:
    """The round's state at ``version`` (the round row's ``stream_version``), from
    this process's cache or replayed. A replay that finds another version (the row
    and the stream disagree) is returned as read and not cached. ``incarnation``:
    the database server's start time when the caller read it (see above)."""
    key = (round_id, version, incarnation)
    state = _ROUND_CACHE.get(key)
    if state is None:
        state = load_round(round_id)
        if state.version == version:
            _put(_ROUND_CACHE, key, state, _ROUND_CACHE_SIZE)
    return state


@dataclass(frozen=True)
class KnownPlayer:
    """A player's state as this process last committed it at a table."""

    round_id: str
    version: int
    incarnation: object  # the database server's start time (see ``_ROUND_CACHE``)
    state: PlayerState


# Player states by (table id, player id), as committed. ``remember_player``
# stores on commit only, so a rolled-back state is never served, and a
# version's state never changes once committed (in the same incarnation). The
# bet and decision paths skip reading and parsing the player's projected state
# when this process has its current version: a player who clicks 25 chips onto
# a spot no longer has each chip re-read every chip before it.
_PLAYER_CACHE: dict[tuple[int, int], KnownPlayer] = {}
_PLAYER_CACHE_SIZE = 4096


def known_player(table_id: int, player_id: int) -> KnownPlayer | None:
    """This process's last committed state of the player at the table."""
    return _PLAYER_CACHE.get((table_id, player_id))


def remember_player(table_id: int, round_id: str, state: PlayerState, incarnation: object) -> None:
    """Remember ``state`` (at ``state.version``) once the current transaction commits."""
    known = KnownPlayer(round_id, state.version, incarnation, state)

    def remember() -> None:
        _put(_PLAYER_CACHE, (table_id, state.player_id), known, _PLAYER_CACHE_SIZE)

    transaction.on_commit(remember)


def remember_players(table_id: int, round_id: str, states: Sequence[tuple[PlayerState, object]]) -> None:
    """``remember_player`` for many ``(state, incarnation)``: one commit hook, not one per player."""
    known = [KnownPlayer(round_id, state.version, incarnation, state) for state, incarnation in states]

    def remember() -> None:
        for entry in known:
            _put(_PLAYER_CACHE, (table_id, entry.state.player_id), entry, _PLAYER_CACHE_SIZE)

    if known:
        transaction.on_commit(remember)


def state_to_json(state: PlayerState) -> dict[str, Any]:
    return {
        "chips": [[c.spot, c.amount, c.hold_id, dict(c.automatic)] for c in state.chips],
        "doubled": state.doubled,
        "decisions": [[d.street, d.option, d.auto] for d in state.decisions],
        "call_amount": state.call_amount,
        "call_hold_id": state.call_hold_id,
        "folded": state.folded,
        "settled": state.settled,
        "voided": state.voided,
        "returned": state.returned,
        "version": state.version,
        "declined": state.declined,
    }


def state_from_json(player_id: int, data: Mapping[str, Any]) -> PlayerState:
    if not data:
        return PlayerState(player_id)
    return PlayerState(
        player_id=player_id,
        chips=tuple(Chip(s, a, h, dict(auto)) for s, a, h, auto in data["chips"]),
        doubled=data["doubled"],
        decisions=tuple(DecisionTaken(s, o, a) for s, o, a in data["decisions"]),
        call_amount=data["call_amount"],
        call_hold_id=data["call_hold_id"],
        folded=data["folded"],
        settled=data["settled"],
        voided=data["voided"],
        returned=data["returned"],
        version=data["version"],
        declined=data.get("declined", False),
    )


@dataclass(slots=True)
class PlayerRow:
    """A round's player-projection row as the dealer's steps read and write it:
    plain values, not an ORM instance (a showdown loads thousands). ``loaded_state``
    is ``state`` as read, so a bulk write sends only what changed in it; ``totals``
    is not read (empty) until ``project_player`` derives it from the state."""

    pk: int
    player_id: int
    game: str
    stream_version: int
    state: dict[str, Any]
    totals: dict[str, Any]
    staked: int
    last_street: str
    done_deciding: bool
    returned: int
    net: int
    status: str
    settled_at: datetime | None
    balance_before: int | None
    balance_after: int | None
    loaded_state: dict[str, Any]


Row = PlayerRound | PlayerRow

# Not ``totals``: ``project_player`` recomputes them from the state before any write.
_ROW_COLUMNS = (
    "id, player_id, game, stream_version, state, staked, last_street, done_deciding, returned, net, "
    "status, settled_at, balance_before, balance_after"
)


def load_players(round_row: HouseRound) -> dict[int, PlayerRow]:
    """Every player row of the round, by player id, in one query."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {_ROW_COLUMNS} FROM games_playerround WHERE round_id = %s", [round_row.pk])
        return _player_rows(cursor.fetchall())


def load_player_rows(round_row: HouseRound, player_ids: Sequence[int]) -> dict[int, PlayerRow]:
    """The rows of ``player_ids`` in the round (those that exist), by player id, in one query."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"SELECT {_ROW_COLUMNS} FROM games_playerround WHERE round_id = %s AND player_id = ANY(%s)",
                           [round_row.pk, list(player_ids)])  # fmt: skip
        else:
            marks = ", ".join(["%s"] * len(player_ids))
            cursor.execute(f"SELECT {_ROW_COLUMNS} FROM games_playerround WHERE round_id = %s "
                           f"AND player_id IN ({marks})", [round_row.pk, *player_ids])  # fmt: skip
        return _player_rows(cursor.fetchall())


def _player_rows(fetched: Sequence[Sequence[Any]]) -> dict[int, PlayerRow]:
    rows = {}
    for pk, player, game, version, state, *scalars in fetched:
        # PostgreSQL's jsonb arrives decoded; SQLite's JSON as text.
        state = state if isinstance(state, dict) else json.loads(state)
        staked, street, done, returned, net, status, settled_at, before, after = scalars
        rows[player] = PlayerRow(pk, player, game, version, state, {}, staked, street, done, returned, net,
                                 status, settled_at, before, after, loaded_state=state)  # fmt: skip
    return rows


# Each player row's stream head: the event at the row's stream version.
_PLAYER_HEADS = (
    "SELECT p.player_id, e.version, e.hash FROM games_playerround p JOIN ledger_event e "
    "ON e.stream_id = %s::text || p.player_id::text AND e.version = p.stream_version "
    "WHERE p.round_id = %s AND p.stream_version > 0"
)


@contextmanager
def player_heads_read_meanwhile(round_row: HouseRound) -> Iterator[dict[int, tuple[int, str]]]:
    """Each player stream's head of the round, ``{player: (version, hash)}``,
    read on the server while the block runs (PostgreSQL pipeline mode: the
    block must not query) and filled in when it ends, so a settlement appends
    without reading 10,000 heads after it (``StreamAppend.head_hash``). A head
    stands only for a row still at that version. Elsewhere it stays empty
    (heads are then read when appending)."""
    heads: dict[int, tuple[int, str]] = {}
    if connection.vendor != "postgresql":
        yield heads
        return
    with pipelined(), connection.cursor() as cursor:
        cursor.execute(_PLAYER_HEADS, [player_stream_prefix(round_row.round_id), round_row.pk])
        yield heads
        heads.update({int(player): (int(version), digest) for player, version, digest in cursor.fetchall()})


@dataclass
class Money:
    """Ledger legs for one commit (see ``ledger.services.batch``)."""

    open_holds: list[tuple[str, int, int, int, int, Event]] = field(default_factory=list)  # hold, src, esc, dst, amt
    settle_holds: list[tuple[str, int, Event]] = field(default_factory=list)  # hold, post amount, cause
    transfers: list[tuple[int, int, int, str, Event]] = field(default_factory=list)  # debit, credit, amt, kind

    def empty(self) -> bool:
        return not (self.open_holds or self.settle_holds or self.transfers)


def commit(
    *,
    round_row: HouseRound,
    state: RoundState,
    players: Mapping[int, Row],
    events: Sequence[Event],
    money: Money,
    idempotency_key: str,
    actor: str,
    now: datetime,
    project_players: bool = True,
    states: Mapping[int, PlayerState] | None = None,
    head_hashes: Mapping[int, str] | None = None,
) -> tuple[RoundState, dict[int, PlayerState]]:
    """Append ``events`` to their streams with the money legs (one ``settle_batch``)
    and update the projections (the caller writes the player rows itself when
    ``project_players`` is false). ``states``: the players' current states when
    the caller has them already (the same as their rows' ``state``), so thousands
    of rows are not parsed again. ``head_hashes``: player streams' head hashes
    (at their rows' ``stream_version``) read in this transaction, so the ledger
    does not read them again. Returns the new round and touched player states."""
    new_state = state
    round_events: list[Event] = []
    by_player: dict[int, list[Event]] = {}
    for event in events:
        if event.stream == "round":
            round_events.append(event)
            new_state = apply_round(new_state, event)
        else:
            by_player.setdefault(int(event.stream), []).append(event)
    refs: dict[int, EventRef] = {}
    metadata = {"actor": actor, "correlation_id": round_row.round_id, "idempotency_key": idempotency_key,
                "at": iso(now)}  # fmt: skip
    appends: list[StreamAppend] = []
    if round_events:
        stream = round_stream(round_row.round_id)
        appends.append(StreamAppend(stream, state.version, [_new_event(e) for e in round_events], metadata))
        for i, event in enumerate(round_events):
            refs[id(event)] = EventRef(stream, state.version + 1 + i)
    recorded: list[RecordedEvent] = []
    for pid, player_events in by_player.items():
        row = players[pid]
        stream = player_stream(round_row.round_id, pid)
        head_hash = head_hashes.get(pid) if head_hashes is not None else None
        append = StreamAppend(stream, row.stream_version, [_new_event(e) for e in player_events], metadata, head_hash)
        appends.append(append)
        recorded += events_of(stream_id=stream, first_version=row.stream_version + 1, events=append.events,
                              metadata=metadata, at=now)  # fmt: skip
        for i, event in enumerate(player_events):
            refs[id(event)] = EventRef(stream, row.stream_version + 1 + i)
    # The player rows are projected here (the projector's fold, in memory) and
    # written with the append: below, or by the caller (``project_players`` false).
    projector = PlayerRoundProjector(round_row=round_row, rows=players, states=states)
    folded = projector.fold(recorded) if recorded else {}
    new_players = {player.player_id: player for _, player in folded.values()}
    rows = [row for row, _ in folded.values()]
    if not appends and money.empty():
        return new_state, new_players
    single = len(appends) == 1 and not (money.settle_holds or money.transfers)
    if single and len(money.open_holds) == 1:
        # One stake: the ledger's one-statement bet path (event, hold and transfer together).
        hold, source, escrow, destination, amount, _ = money.open_holds[0]
        open_hold(source=source, escrow=escrow, destination=destination, amount=amount,
                  currency=round_row.currency, idempotency_key=f"{idempotency_key}:ledger", cause=appends[0],
                  hold_id=UUID(hold))  # fmt: skip
    elif single and not money.open_holds:
        append_events(stream_id=appends[0].stream_id, expected_version=appends[0].expected_version,
                      events=appends[0].events, metadata=appends[0].metadata)  # fmt: skip
    elif project_players:
        # The projection's UPDATE runs on the server while Python encodes the
        # batch (same transaction: a refused batch rolls both back).
        with pipelined():
            projector.write(rows)
            batch = _prepare(round_row, appends, money, refs, idempotency_key)
        settle_prepared(batch)
        project_players = False  # the rows are written
    else:
        settle_prepared(_prepare(round_row, appends, money, refs, idempotency_key))
    if project_players:
        projector.write(rows)
    if round_events:
        stream = round_stream(round_row.round_id)
        HouseRoundProjector(row=round_row, state=state).apply_many(
            events_of(stream_id=stream, first_version=state.version + 1, events=appends[0].events,
                      metadata=metadata, at=now)
        )  # fmt: skip
        # Realtime ordering (not a projection): the table's count of public round events.
        public = sum(1 for e in round_events if e.type in ROUND_EVENT_TYPES)
        HouseTable.objects.filter(pk=round_row.table_id).update(public_seq=F("public_seq") + public)
    return new_state, new_players


def _new_event(event: Event) -> NewEvent:
    """The ledger's event for a domain event, at its type's current schema version."""
    return NewEvent(event.type, event.data, CURRENT_VERSIONS.get(event.type, 1))


def _prepare(
    round_row: HouseRound,
    appends: list[StreamAppend],
    money: Money,
    refs: Mapping[int, EventRef],
    idempotency_key: str,
) -> PreparedBatch:
    return prepare_batch(
        idempotency_key=f"{idempotency_key}:ledger",
        currency=round_row.currency,
        appends=appends,
        open_holds=[
            HoldOpening(UUID(h), src, esc, dst, amt, refs[id(cause)])
            for h, src, esc, dst, amt, cause in money.open_holds
        ],
        holds=[HoldSettlement(UUID(h), amt, refs[id(cause)]) for h, amt, cause in money.settle_holds],
        transfers=[TransferSpec(d, c, amt, refs[id(cause)], kind) for d, c, amt, kind, cause in money.transfers],
    )


PROJECTED_FIELDS = [
    "state",
    "stream_version",
    "totals",
    "staked",
    "last_street",
    "done_deciding",
    "returned",
    "net",
    "status",
    "settled_at",
    "balance_before",
    "balance_after",
]


def project_player(row: Row, player: PlayerState, now: datetime) -> Row:
    row.state = state_to_json(player)
    row.stream_version = player.version
    totals = player.totals()
    if player.call_amount:
        totals[game_definition(row.game).decision_wager] = player.call_amount
    row.totals = totals
    row.staked = player.staked
    row.last_street = player.decisions[-1].street if player.decisions else ""
    row.done_deciding = player.done_deciding
    if player.declined:
        row.status = "declined"
        row.settled_at = now
    if player.settled or player.voided:
        row.returned = player.returned
        row.net = player.returned - player.staked
        row.status = "voided" if player.voided else "settled"
        row.settled_at = now
    return row


_JSON_FIELDS = {"state", "totals"}


def save_rows(rows: Sequence[Row]) -> None:
    """Write the projected fields of ``rows``: one pipelined ``executemany``
    (Django's ``bulk_update`` builds a CASE per field and row, far slower)."""
    if not rows:
        return
    if connection.vendor == "postgresql" and len(rows) > 1:
        _save_rows_recordset(rows)
        return
    cast = "::jsonb" if connection.vendor == "postgresql" else ""
    assignments = ", ".join(f"{name} = %s{cast if name in _JSON_FIELDS else ''}" for name in PROJECTED_FIELDS)
    params = [
        [
            *(
                json.dumps(getattr(row, name)) if name in _JSON_FIELDS else _adapt(getattr(row, name))
                for name in PROJECTED_FIELDS
            ),
            row.pk,
        ]
        for row in rows
    ]
    with connection.cursor() as cursor:
        cursor.executemany(f"UPDATE games_playerround SET {assignments} WHERE id = %s", params)


_PG_TYPES = {
    "state": "jsonb",
    "stream_version": "int",
    "totals": "jsonb",
    "staked": "bigint",
    "last_street": "text",
    "done_deciding": "bool",
    "returned": "bigint",
    "net": "bigint",
    "status": "text",
    "settled_at": "timestamptz",
    "balance_before": "bigint",
    "balance_after": "bigint",
}


def _save_rows_recordset(rows: Sequence[Row]) -> None:
    """PostgreSQL: every row in one ``UPDATE ... FROM jsonb_to_recordset(...)``: the
    rows travel as one JSON document (Python's C encoder, PostgreSQL's C parser),
    far cheaper for thousands of rows than per-row statements or text arrays.
    ``state`` travels as the keys that changed since the row was loaded, merged
    into the stored document (``state_to_json`` always writes the same keys)."""
    assignments = ", ".join(
        "state = p.state || v.state" if name == "state" else f"{name} = v.{name}" for name in PROJECTED_FIELDS
    )
    columns = ", ".join(f"{name} {_PG_TYPES[name]}" for name in PROJECTED_FIELDS)
    document = json.dumps(
        [
            {
                "id": row.pk,
                **{name: getattr(row, name) for name in PROJECTED_FIELDS if name not in ("settled_at", "state")},
                "state": _changed(row),
                "settled_at": row.settled_at.isoformat() if row.settled_at else None,
            }
            for row in rows
        ]
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE games_playerround p SET {assignments} "
            f"FROM jsonb_to_recordset(%s::jsonb) AS v(id bigint, {columns}) WHERE p.id = v.id",
            [document],
        )


def _changed(row: Row) -> dict[str, Any]:
    """The top-level keys of ``row.state`` that differ from the state as loaded
    (all of them for an ORM row, which keeps no copy)."""
    if not isinstance(row, PlayerRow):
        return row.state
    loaded = row.loaded_state
    return {key: value for key, value in row.state.items() if loaded.get(key) != value}


def _adapt(value: Any) -> Any:
    return connection.ops.adapt_datetimefield_value(value) if isinstance(value, datetime) else value


def wallets(player_ids: Sequence[int], currency: str) -> dict[int, tuple[int, int]]:
    """Each player's wallet account id and balance, in one query (accounts exist once they bet)."""
    keys = {f"wallet:player:{pid}:{currency}": pid for pid in player_ids}
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # One array parameter: an IN list of 10,000 placeholders costs more to parse and plan than to run.
            cursor.execute("SELECT key, id, balance FROM ledger_account WHERE key = ANY(%s)", [list(keys)])
        else:
            cursor.execute(
                "SELECT key, id, balance FROM ledger_account WHERE key IN (%s)" % ", ".join(["%s"] * len(keys)),  # noqa: UP031
                list(keys),
            )
        return {keys[key]: (int(account), int(balance)) for key, account, balance in cursor.fetchall()}


# --- player commands: the read side and the last write of the bet and decision paths -----------


@dataclass
class CommandContext:
    """Everything a player command reads before the domain decides (``read_command``)."""

    round_row: HouseRound
    state: RoundState
    row: PlayerRound
    accounts: Accounts
    # The player stream's head hash (at ``row.stream_version``) and the
    # responsible-gaming settings, when the context query read them already.
    head_hash: str | None = None
    settings: Any = UNREAD_SETTINGS
    # The player's state at ``row.stream_version`` when this process had it
    # (``store.known_player``): ``row.state`` was then not read.
    player: PlayerState | None = None
    # The database server's start time (``store.KnownPlayer.incarnation``); None on SQLite.
    incarnation: object = None

    def player_state(self, player_id: int) -> PlayerState:
        return self.player if self.player is not None else state_from_json(player_id, self.row.state)


@dataclass(frozen=True)
class Accounts:
    wallet: int
    held: int
    house: int
    balance: int


def _account_keys(player_id: int, table_id: int, currency: str) -> list[str]:
    return [
        account_key("wallet", f"player:{player_id}", currency),
        account_key("held", f"player:{player_id}", currency),
        account_key("house", f"table:{table_id}", currency),
    ]


def _open_accounts(player_id: int, table_id: int, currency: str) -> None:
    player_accounts(player_id=player_id, currency=currency)
    house_account(table_id=table_id, currency=currency)


def _new_row(round_row: HouseRound, table_id: int, player_id: int, now: datetime) -> PlayerRound:
    return PlayerRound(
        round=round_row,
        table_id=table_id,
        player_id=player_id,
        game_number=round_row.game_number,
        game=round_row.game,
        currency=round_row.currency,
        created_at=now,
    )


# PostgreSQL: the whole read side of a player command in one round trip. The
# idempotency key is claimed first (a data-modifying CTE runs whatever the rest
# finds; a refusal rolls it back), the round is share-locked through its table
# (bettors never block each other; the dealer's close waits), the player's own
# row is locked, and the seat and the three accounts come along.
_PG_CONTEXT = f"""
WITH idem AS (
    INSERT INTO ledger_idempotency (key, command, request_hash, result, created_at)
    SELECT %(key)s::text, %(command)s::text, %(digest)s::text, NULL, %(at)s::timestamptz
    WHERE %(key)s::text IS NOT NULL
    ON CONFLICT (key) DO NOTHING RETURNING 1
)
SELECT (SELECT count(*) FROM idem) + (%(key)s::text IS NULL)::int,
       r.id, r.round_id, r.stream_version, r.currency, r.game, r.game_number,
       EXISTS (SELECT 1 FROM games_tableseat s WHERE s.table_id = t.id AND s.player_id = %(player)s::bigint),
       p.id, CASE WHEN r.round_id = %(known_round)s::text AND p.stream_version = %(known_version)s::int
                       AND pg_postmaster_start_time() = %(known_incarnation)s::timestamptz
                  THEN NULL ELSE p.state END,
       p.stream_version, p.created_at, w.id, w.balance, h.id, hs.id,
       e.hash, rg.user_id IS NOT NULL, {", ".join(f"rg.{c}" for c in RG_COLUMNS)}, pg_postmaster_start_time()
FROM games_housetable t
JOIN games_houseround r ON r.table_id = t.id AND r.round_id = t.current_round_id
LEFT JOIN LATERAL (
    SELECT id, state, stream_version, created_at FROM games_playerround
    WHERE round_id = r.id AND player_id = %(player)s::bigint FOR UPDATE
) p ON true
LEFT JOIN ledger_account w ON w.key = 'wallet:player:' || %(player)s::bigint::text || ':' || r.currency
LEFT JOIN ledger_account h ON h.key = 'held:player:' || %(player)s::bigint::text || ':' || r.currency
LEFT JOIN ledger_account hs ON hs.key = 'house:table:' || t.id::text || ':' || r.currency
-- store.player_stream's id: the head the player's next events chain onto
LEFT JOIN ledger_event e ON e.stream_id = 'round-' || r.round_id || '-player-' || %(player)s::bigint::text
                        AND e.version = p.stream_version
LEFT JOIN {RG_TABLE} rg ON rg.user_id = %(player)s::bigint
WHERE t.id = %(table)s::bigint
FOR SHARE OF r
"""


def _pg_context(
    *, command: str, table_id: int, player_id: int, key: str, digest: str, now: datetime
) -> tuple[bool, CommandContext | None, bool]:
    """(claimed, context or ``None`` when the table has no round, seated)."""
    known = known_player(table_id, player_id)
    params: dict[str, Any] = {"key": key, "command": command, "digest": digest, "at": ledger_now(), "player": player_id,
              "table": table_id, "known_round": known.round_id if known else None,
              "known_version": known.version if known else None,
              "known_incarnation": known.incarnation if known else None}  # fmt: skip
    with bulk_cursor() as cursor:
        for _ in range(2):
            # Prepared once per connection: parsing and planning the joins cost
            # PostgreSQL more than running them.
            with pipelined():
                # The transaction's BEGIN travels with the query: one round trip.
                cursor.execute(_PG_CONTEXT, params, prepare=True)
            found = cursor.fetchone()
            if found is None:
                return True, None, False
            claimed, seated = found[0], found[7]
            wallet, held, house = found[12], found[14], found[15]
            if not claimed:
                return False, None, bool(seated)
            if wallet is not None and held is not None and house is not None:
                break
            # First bet of this player (or table) in this currency: open the
            # accounts, then read again (the claim is ours already).
            _open_accounts(player_id, table_id, found[4])
            params["key"] = None  # ON CONFLICT cannot fire on NULL: re-reading claims nothing
    context = _context_of(found[1:], table_id, player_id, now, known)
    return True, context, bool(seated)


def _accounts(player_id: int, table_id: int, currency: str) -> Accounts:
    """Wallet, held and house account ids and the wallet balance in one query
    (opened first when missing)."""
    keys = _account_keys(player_id, table_id, currency)
    with connection.cursor() as cursor:
        cursor.execute("SELECT key, id, balance FROM ledger_account WHERE key IN (%s, %s, %s)", keys)
        found = {key: (int(account), int(balance)) for key, account, balance in cursor.fetchall()}
    if len(found) < 3:
        _open_accounts(player_id, table_id, currency)
        return _accounts(player_id, table_id, currency)
    return Accounts(found[keys[0]][0], found[keys[1]][0], found[keys[2]][0], found[keys[0]][1])


def accounts_of(*, player_id: int, table_id: int, currency: str) -> Accounts:
    """The player's wallet and held accounts and the table's house account in
    ``currency``, opened when missing, with the wallet's balance."""
    return _accounts(player_id, table_id, currency)


def _claim_lookup(key: str, command: str, digest: str) -> Any:
    """The first result stored under ``key`` (``IdempotencyKeyReused`` for another request)."""
    with connection.cursor() as cursor:
        return claim(cursor, key=key, command=command, digest=digest, at=ledger_now())


def read_command(
    *, command: str, table_id: int, player_id: int, key: str, request: dict[str, Any], now: datetime
) -> tuple[bool, Any, CommandContext | None, bool]:
    """Claim ``key`` and read a player command's context, in one round trip on
    PostgreSQL: ``(retry, first result, context, seated)``. A retry of the key
    gives ``(True, first result, None, ...)``; otherwise ``context`` is ``None``
    when the table has no round. The caller refuses (no round, no seat)."""
    digest = request_hash(command, {"table": table_id, "player": player_id, **request})
    if connection.vendor == "postgresql":
        claimed, context, has_seat = _pg_context(
            command=command, table_id=table_id, player_id=player_id, key=key, digest=digest, now=now
        )
        if not claimed:
            return True, _claim_lookup(key, command, digest), None, has_seat
        return False, None, context, has_seat
    first = _claim_lookup(key, command, digest)
    if first is not None:
        return True, first, None, False
    context = _portable_context(table_id, player_id, now)
    has_seat = TableSeat.objects.filter(table_id=table_id, player_id=player_id).exists()
    return False, None, context, has_seat


def _current_round(table_id: int) -> HouseRound | None:
    """The table's current round row (no lock), ``None`` without one."""
    found = list(
        HouseRound.objects.raw(
            "SELECT r.* FROM games_houseround r JOIN games_housetable t "
            "ON t.id = r.table_id AND t.current_round_id = r.round_id WHERE t.id = %s",
            [table_id],
        )
    )
    return found[0] if found else None


def _portable_context(table_id: int, player_id: int, now: datetime) -> CommandContext | None:
    """``_pg_context`` in several statements, for SQLite (the embedded default)."""
    round_row = _current_round(table_id)
    if round_row is None:
        return None
    row = PlayerRound.objects.select_for_update().filter(round=round_row, player_id=player_id).first()
    return CommandContext(
        round_row,
        load_round_at(round_row.round_id, round_row.stream_version),
        row or _new_row(round_row, table_id, player_id, now),
        _accounts(player_id, table_id, round_row.currency),
    )


# The write side's last round trip on PostgreSQL: the player's projection row
# (inserted with the first chip) and the command's result under its key.
_PG_SAVE = """
WITH pr AS (
    INSERT INTO games_playerround (round_id, table_id, player_id, game_number, game, currency, stream_version, state,
                                   totals, staked, returned, net, status, last_street, done_deciding, created_at)
    VALUES (%(round)s::bigint, %(table)s::bigint, %(player)s::bigint, %(number)s::text, %(game)s::text,
            %(currency)s::text, %(version)s::int, %(state)s::jsonb, %(totals)s::jsonb, %(staked)s::bigint, 0, 0,
            'betting', %(street)s::text, %(done)s::bool, %(created)s::timestamptz)
    ON CONFLICT ON CONSTRAINT one_player_round DO UPDATE SET
        stream_version = EXCLUDED.stream_version, state = EXCLUDED.state, totals = EXCLUDED.totals,
        staked = EXCLUDED.staked, last_street = EXCLUDED.last_street, done_deciding = EXCLUDED.done_deciding
    RETURNING 1
)
UPDATE ledger_idempotency SET result = %(result)s::jsonb WHERE key = %(key)s::text AND (SELECT count(*) FROM pr) = 1
"""


def save_player(row: PlayerRound, player: PlayerState | None, key: str, result: dict[str, Any], now: datetime) -> None:
    """A player command's last write: the player's row (when ``player``, its new
    state, changed: the row ``commit`` projected with ``PlayerRoundProjector.fold``)
    and ``result`` under the idempotency key; one statement on PostgreSQL."""
    if player is None or connection.vendor != "postgresql":
        if player is not None:
            if row.pk is None:
                row.save()
            save_rows([row])
        with connection.cursor() as cursor:
            record_result(cursor, key=key, result=result)
        return
    params: dict[str, Any] = {
        "round": row.round_id, "table": row.table_id, "player": row.player_id, "number": row.game_number,
        "game": row.game, "currency": row.currency, "version": row.stream_version, "state": json.dumps(row.state),
        "totals": json.dumps(row.totals), "staked": row.staked, "street": row.last_street, "done": row.done_deciding,
        "created": row.created_at, "result": json.dumps(result), "key": key,
    }  # fmt: skip
    with bulk_cursor() as cursor:
        cursor.execute(_PG_SAVE, params, prepare=True)


# Is anyone but this player still to decide on ``street``? Two probes of the
# partial index ``playerround_undecided`` (round, last_street) over the players
# with a stake who have not called or folded: a row whose last street sorts
# before or after ``street`` has not decided on it. O(log n) per decision, so
# 10,000 players deciding cost 10,000 probes, not 10,000 scans of the round.
_PG_TICK_AND_WAITING = """
SELECT t.current_round_id, t.phase, t.phase_seq, t.deadline,
       EXISTS (SELECT 1 FROM games_playerround p WHERE p.round_id = %(round)s AND p.staked > 0
               AND NOT p.done_deciding AND p.last_street < %(street)s AND p.player_id <> %(player)s)
       OR EXISTS (SELECT 1 FROM games_playerround p WHERE p.round_id = %(round)s AND p.staked > 0
               AND NOT p.done_deciding AND p.last_street > %(street)s AND p.player_id <> %(player)s)
FROM games_housetable t WHERE t.id = %(table)s
"""


def tick_and_waiting(
    *, table_id: int, round_row: HouseRound, player_id: int, street: str
) -> tuple[tuple[str, str, int, datetime | None], bool]:
    """The table's (current round, phase, phase sequence, deadline) and whether
    another participant still has to decide on ``street``."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                _PG_TICK_AND_WAITING, {"round": round_row.pk, "street": street, "player": player_id, "table": table_id}
            )
            round_id, phase, phase_seq, deadline, waiting = cursor.fetchone()
        return (round_id, phase, phase_seq, deadline), bool(waiting)
    waiting = (
        PlayerRound.objects.filter(round=round_row, staked__gt=0, done_deciding=False)
        .exclude(last_street=street)
        .exclude(player_id=player_id)
        .exists()
    )
    table = HouseTable.objects.get(pk=table_id)
    return (table.current_round_id, table.phase, table.phase_seq, table.deadline), waiting


# --- seats in a per-seat round: who may still join it, who leaves it ---------------------------


def seat_and_bettors(*, table_id: int, round_row: HouseRound, player_id: int) -> tuple[bool, int]:
    """(whether the player still holds a seat at the table, how many other
    players hold bets in the round), for a chip that would make the player a
    participant of a per-seat round. Read by statements of their own, after the
    command's context took its locks, so a leave that committed meanwhile is
    seen; the seat row stays locked until the command commits, so a leave
    (which deletes it) waits for the chip and then returns it
    (``games.house.services.seats.leave_table``)."""
    seat = (
        TableSeat.objects.select_for_update(no_key=True)
        .filter(table_id=table_id, player_id=player_id)
        .values_list("pk", flat=True)
        .first()
    )
    others = PlayerRound.objects.filter(round_id=round_row.pk, staked__gt=0).exclude(player_id=player_id).count()
    return seat is not None, others


# Locks in the bet path's order (``_PG_CONTEXT``): the player's row of the
# current round, then that round shared.
_PG_LEAVING = """
SELECT r.id, p.id FROM games_housetable t
JOIN games_houseround r ON r.table_id = t.id AND r.round_id = t.current_round_id
LEFT JOIN LATERAL (
    SELECT id FROM games_playerround WHERE round_id = r.id AND player_id = %(player)s::bigint FOR UPDATE
) p ON true
WHERE t.id = %(table)s::bigint
FOR SHARE OF r
"""


def lock_leaving_player(*, table_id: int, player_id: int) -> tuple[HouseRound, PlayerRound | None] | None:
    """The table's current round and the player's row of it (``None`` without
    one), or ``None`` when the table has no round. PostgreSQL: the player's row
    is locked for update and the round row shared, in the bet path's order, so
    a leave waits for the player's bets in flight and the dealer's close (which
    locks the round for update) waits for the leave. SQLite's ``IMMEDIATE``
    transactions serialise writers anyway."""
    if connection.vendor != "postgresql":
        round_row = _current_round(table_id)
        if round_row is None:
            return None
        return round_row, PlayerRound.objects.filter(round=round_row, player_id=player_id).first()
    with connection.cursor() as cursor:
        cursor.execute(_PG_LEAVING, {"table": table_id, "player": player_id})
        locked = cursor.fetchone()
    if locked is None:
        return None
    round_id, row_id = locked
    row = PlayerRound.objects.filter(pk=row_id).first() if row_id is not None else None
    return HouseRound.objects.get(pk=round_id), row


# verify_ledger's check of the wagers in play (games.house.services.verify): the
# player rounds not yet settled or voided and the pending holds opened in a
# round's player stream, in one statement, so one snapshot (a bet committing
# meanwhile cannot show its hold without its chip).
_WAGERS_AND_HOLDS = (
    "SELECT 'wager', p.id, r.round_id, p.player_id, CAST(p.state AS TEXT), NULL FROM games_playerround p "
    "JOIN games_houseround r ON r.id = p.round_id WHERE p.status = %s "
    "UNION ALL "
    "SELECT 'hold', h.opened_event_id, e.stream_id, NULL, CAST(h.id AS TEXT), h.amount FROM ledger_hold h "
    "JOIN ledger_event e ON e.id = h.opened_event_id WHERE h.status = %s AND e.stream_id LIKE %s"
)


@dataclass(frozen=True)
class WagerRow:
    """A player round whose wagers are in play (``PlayerRound`` status ``betting``)."""

    player_round_id: int
    round_id: str
    player: PlayerState


@dataclass(frozen=True)
class PendingHold:
    """A pending ledger hold opened by an event of a round's player stream."""

    hold_id: UUID
    amount: int
    stream_id: str
    opened_event_id: int


def wagers_and_pending_holds() -> tuple[list[WagerRow], list[PendingHold]]:
    """Every player round in play and every pending hold of a player stream, read
    in one snapshot; wagers in player round id order, holds in stream and id order."""
    with connection.cursor() as cursor:
        cursor.execute(_WAGERS_AND_HOLDS, ["betting", "pending", player_stream_prefix("%") + "%"])
        rows = cursor.fetchall()
    wagers = [
        WagerRow(row_id, round_id, state_from_json(player_id, json.loads(state)))
        for kind, row_id, round_id, player_id, state, _ in rows
        if kind == "wager"
    ]
    holds = [
        PendingHold(UUID(hold_id), int(amount), stream_id, event_id)
        for kind, event_id, stream_id, _, hold_id, amount in rows
        if kind == "hold"
    ]
    wagers.sort(key=lambda wager: wager.player_round_id)
    holds.sort(key=lambda hold: (hold.stream_id, hold.hold_id))
    return wagers, holds


# --- player commands in batches (``games.house.services.group``) ------------------------------


@dataclass(frozen=True)
class CommandRead:
    """One command of a batch as ``read_commands`` found it: a retry
    (``retry``, its ``first`` result), a refusal before anything was claimed
    (``error``: a reused or invalid key), or the command's ``context``
    (``None``: the table has no round) and whether the player holds a seat."""

    retry: bool = False
    first: Any = None
    error: DomainError | None = None
    context: CommandContext | None = None
    seated: bool = False


@dataclass(frozen=True)
class CommandRequest:
    """What ``read_commands`` needs of one command: the same command name and
    request body as the single path (``read_command``), so a retry is
    recognised whichever path answered first."""

    command: str
    player_id: int
    key: str
    request: Mapping[str, Any]


# ``_PG_CONTEXT`` for many commands at one table, still one round trip: the
# commands travel as arrays, every key is claimed (in the commands' order), the
# round is share-locked and each command's player row locked (the commands of
# one batch belong to distinct players, see ``services.group``).
_PG_CONTEXTS = f"""
WITH c AS (
    SELECT * FROM unnest(%(idx)s::int[], %(player)s::bigint[], %(key)s::text[], %(command)s::text[],
                         %(digest)s::text[], %(known_round)s::text[], %(known_version)s::int[],
                         %(known_incarnation)s::timestamptz[])
        AS c(idx, player, key, command, digest, known_round, known_version, known_incarnation)
), idem AS (
    INSERT INTO ledger_idempotency (key, command, request_hash, result, created_at)
    SELECT key, command, digest, NULL, %(at)s::timestamptz FROM c WHERE key IS NOT NULL ORDER BY idx
    ON CONFLICT (key) DO NOTHING RETURNING key
)
SELECT c.idx, c.key IS NULL OR c.key IN (SELECT key FROM idem),
       r.id, r.round_id, r.stream_version, r.currency, r.game, r.game_number,
       EXISTS (SELECT 1 FROM games_tableseat s WHERE s.table_id = t.id AND s.player_id = c.player),
       p.id, CASE WHEN r.round_id = c.known_round AND p.stream_version = c.known_version
                       AND pg_postmaster_start_time() = c.known_incarnation
                  THEN NULL ELSE p.state END,
       p.stream_version, p.created_at, w.id, w.balance, h.id, hs.id,
       e.hash, rg.user_id IS NOT NULL, {", ".join(f"rg.{c}" for c in RG_COLUMNS)}, pg_postmaster_start_time()
FROM c
JOIN games_housetable t ON t.id = %(table)s::bigint
JOIN games_houseround r ON r.table_id = t.id AND r.round_id = t.current_round_id
LEFT JOIN LATERAL (
    SELECT id, state, stream_version, created_at FROM games_playerround
    WHERE round_id = r.id AND player_id = c.player FOR UPDATE
) p ON true
LEFT JOIN ledger_account w ON w.key = 'wallet:player:' || c.player::text || ':' || r.currency
LEFT JOIN ledger_account h ON h.key = 'held:player:' || c.player::text || ':' || r.currency
LEFT JOIN ledger_account hs ON hs.key = 'house:table:' || t.id::text || ':' || r.currency
LEFT JOIN ledger_event e ON e.stream_id = 'round-' || r.round_id || '-player-' || c.player::text
                        AND e.version = p.stream_version
LEFT JOIN {RG_TABLE} rg ON rg.user_id = c.player
ORDER BY c.idx
FOR SHARE OF r
"""


def read_commands(*, table_id: int, requests: Sequence[CommandRequest], now: datetime) -> list[CommandRead]:
    """``read_command`` for many commands of distinct players at one table, in
    the requests' order: on PostgreSQL one round trip claims every key and reads
    every context (plus one to look up the first results of retried keys). A
    claimed key stays claimed until the transaction ends: the caller releases
    the keys of the commands it refuses (``saving_commands``). Accounts not yet
    opened are not opened here (a refused command must leave none behind): their
    ids are 0 in the context's ``Accounts`` (balance 0 without a wallet), and
    the caller opens them for a command it accepts (``accounts_of``).
    Elsewhere: ``read_command`` one by one."""
    if connection.vendor != "postgresql":
        portable: list[CommandRead] = []
        for r in requests:
            try:
                retry, first, context, seated = read_command(command=r.command, table_id=table_id,
                                                             player_id=r.player_id, key=r.key,
                                                             request=dict(r.request), now=now)  # fmt: skip
            except DomainError as refusal:
                portable.append(CommandRead(error=refusal))
                continue
            portable.append(CommandRead(retry=retry, first=first, context=context, seated=seated))
        return portable
    digests = [request_hash(r.command, {"table": table_id, "player": r.player_id, **r.request}) for r in requests]
    errors: dict[int, DomainError] = {}
    for i, r in enumerate(requests):
        if not r.key or len(r.key) > MAX_KEY:
            # ``claim``'s refusal, before the statement (which would fail on the column's length).
            errors[i] = IdempotencyKeyReused(f"idempotency key must be 1..{MAX_KEY} characters",
                                             code="invalid_idempotency_key")  # fmt: skip
    asked = [i for i in range(len(requests)) if i not in errors]
    knowns = [known_player(table_id, requests[i].player_id) for i in asked]
    known_of = dict(zip(asked, knowns, strict=True))
    params: dict[str, Any] = {
        "idx": asked, "player": [requests[i].player_id for i in asked], "key": [requests[i].key for i in asked],
        "command": [requests[i].command for i in asked], "digest": [digests[i] for i in asked],
        "known_round": [k.round_id if k else None for k in knowns],
        "known_version": [k.version if k else None for k in knowns],
        "known_incarnation": [k.incarnation if k else None for k in knowns],
        "at": ledger_now(), "table": table_id,
    }  # fmt: skip
    with bulk_cursor() as cursor:
        with pipelined():
            # The transaction's BEGIN travels with the query: one round trip.
            cursor.execute(_PG_CONTEXTS, params, prepare=True)
        found = {int(row[0]): row for row in cursor.fetchall()}
        claimed = {idx: bool(row[1]) for idx, row in found.items()}
        unclaimed = [requests[i].key for i in asked if i in found and not claimed[i]]
        firsts: dict[str, tuple[str, str, Any]] = {}
        if unclaimed:
            cursor.execute("SELECT key, command, request_hash, result FROM ledger_idempotency WHERE key = ANY(%s)",
                           [unclaimed])  # fmt: skip
            firsts = {key: (command, digest, result) for key, command, digest, result in cursor.fetchall()}
    reads: list[CommandRead] = []
    round_row: HouseRound | None = None
    for i, r in enumerate(requests):
        if i in errors:
            reads.append(CommandRead(error=errors[i]))
        elif i not in found:
            reads.append(CommandRead())  # no round at the table (the key's claim is released by the caller)
        elif not claimed[i]:
            command, digest, result = firsts[r.key]
            if (command, digest) != (r.command, digests[i]):
                error = IdempotencyKeyReused(f"idempotency key {r.key!r} was used for another {command} request",
                                             key=r.key, command=command)  # fmt: skip
                reads.append(CommandRead(error=error))
            else:
                reads.append(CommandRead(retry=True, first=json.loads(result) if isinstance(result, str) else result))
        else:
            row = found[i]
            context = _context_of(row[2:], table_id, r.player_id, now, known_of[i], round_row)
            round_row = context.round_row
            reads.append(CommandRead(context=context, seated=bool(row[8])))
    return reads


def _context_of(
    found: Sequence[Any],
    table_id: int,
    player_id: int,
    now: datetime,
    known: KnownPlayer | None,
    round_row: HouseRound | None = None,
) -> CommandContext:
    """A ``CommandContext`` from one row of ``_PG_CONTEXT``/``_PG_CONTEXTS`` (from the round's id on).
    ``round_row``: the round as read for another command of the batch (one model instance, not one each)."""
    rid, round_id, version, currency, game, number, _seated, *player = found[:11]
    wallet, balance, held, house, head_hash, has_settings = found[11:17]
    if round_row is None or round_row.pk != rid:
        round_row = HouseRound(id=rid, round_id=round_id, table_id=table_id, stream_version=version,
                               currency=currency, game=game, game_number=number)  # fmt: skip
    incarnation = found[-1]
    row_id, state_json, stream_version, created_at = player
    cached = None
    if row_id is None:
        row = _new_row(round_row, table_id, player_id, now)
    else:
        if state_json is None:  # not read: this process has the state at this version
            assert known is not None
            assert (known.round_id, known.version, known.incarnation) == (round_id, stream_version, incarnation)
            cached = known.state
        state_data = json.loads(state_json) if isinstance(state_json, str | bytes) else state_json or {}
        row = PlayerRound(id=row_id, round=round_row, table_id=table_id, player_id=player_id, game_number=number,
                          game=game, currency=currency, state=state_data, stream_version=stream_version,
                          created_at=created_at)  # fmt: skip
    settings = settings_row(found[17:-1]) if has_settings else None
    # Ids 0: accounts not opened yet (``read_commands``); ``_pg_context`` opens them first.
    accounts = Accounts(wallet or 0, held or 0, house or 0, int(balance or 0))
    state = load_round_at(round_id, version, incarnation)
    return CommandContext(round_row, state, row, accounts, head_hash, settings, cached, incarnation)


# The write side's last round trip for a batch: every changed player's
# projection row, every accepted command's result under its key, and the
# claims of the refused commands released (their keys stay usable, as a
# refused single command's rolled-back claim does).
_PG_SAVE_MANY = """
WITH pr AS (
    INSERT INTO games_playerround (round_id, table_id, player_id, game_number, game, currency, stream_version, state,
                                   totals, staked, returned, net, status, last_street, done_deciding, created_at)
    SELECT v.round, v.table_id, v.player, v.number, v.game, v.currency, v.version, v.state, v.totals, v.staked, 0, 0,
           'betting', v.street, v.done, v.created
    FROM jsonb_to_recordset(%(rows)s::jsonb) AS v(round bigint, table_id bigint, player bigint, number text,
         game text, currency text, version int, state jsonb, totals jsonb, staked bigint, street text, done bool,
         created timestamptz)
    ON CONFLICT ON CONSTRAINT one_player_round DO UPDATE SET
        stream_version = EXCLUDED.stream_version, state = EXCLUDED.state, totals = EXCLUDED.totals,
        staked = EXCLUDED.staked, last_street = EXCLUDED.last_street, done_deciding = EXCLUDED.done_deciding
    RETURNING 1
), res AS (
    UPDATE ledger_idempotency i SET result = v.result
    FROM jsonb_to_recordset(%(results)s::jsonb) AS v(key text, result jsonb) WHERE i.key = v.key
    RETURNING 1
), gone AS (
    DELETE FROM ledger_idempotency WHERE key = ANY(%(released)s::text[]) AND result IS NULL RETURNING 1
)
SELECT (SELECT count(*) FROM pr), (SELECT count(*) FROM res), (SELECT count(*) FROM gone)
"""


@contextmanager
def saving_commands(
    *,
    rows: Sequence[tuple[PlayerRound, PlayerState]],
    results: Sequence[tuple[str, dict[str, Any]]],
    released: Sequence[str],
    now: datetime,
) -> Iterator[None]:
    """A batch's last write (``save_player`` for many): each ``(row, new state)``
    saved (the row as ``PlayerRoundProjector.fold`` projected it), each ``(key, result)`` stored, and the claims of
    ``released`` keys (refused commands) removed. One statement on PostgreSQL,
    sent in pipeline mode when the block starts: the server runs it while the
    block runs (which must not query), and its counts are checked when the
    block ends (same transaction: a later refusal rolls it back). Elsewhere the
    single path's statements, before the block (a refused command there rolled
    back its own savepoint, claim included)."""
    if connection.vendor != "postgresql":
        for row, _ in rows:
            if row.pk is None:
                row.save()
            save_rows([row])
        with connection.cursor() as cursor:
            for key, result in results:
                record_result(cursor, key=key, result=result)
            for key in released:
                cursor.execute("DELETE FROM ledger_idempotency WHERE key = %s AND result IS NULL", [key])
        yield
        return
    document = []
    for row, _ in rows:
        document.append({
            "round": row.round_id, "table_id": row.table_id, "player": row.player_id, "number": row.game_number,
            "game": row.game, "currency": row.currency, "version": row.stream_version, "state": row.state,
            "totals": row.totals, "staked": row.staked, "street": row.last_street, "done": row.done_deciding,
            "created": row.created_at.isoformat() if row.created_at else iso(now),
        })  # fmt: skip
    params = {
        "rows": json.dumps(document),
        "results": json.dumps([{"key": key, "result": result} for key, result in results]),
        "released": list(released),
    }
    with pipelined(), bulk_cursor() as cursor:
        cursor.execute(_PG_SAVE_MANY, params, prepare=True)
        yield
        saved, stored, _ = cursor.fetchone()
    if (saved, stored) != (len(rows), len(results)):
        raise RuntimeError(f"a batch saved {saved}/{len(rows)} rows and {stored}/{len(results)} results")


# ``_PG_TICK_AND_WAITING`` for many decisions: each decision's street and the
# players not to count (its own and those of the batch's earlier decisions,
# whose rows are written after this read).
_PG_TICKS_AND_WAITING = """
SELECT d.idx, t.current_round_id, t.phase, t.phase_seq, t.deadline,
       EXISTS (SELECT 1 FROM games_playerround p WHERE p.round_id = %(round)s AND p.staked > 0
               AND NOT p.done_deciding AND p.last_street < d.street
               AND p.player_id <> ALL(string_to_array(d.excluded, ',')::bigint[]))
       OR EXISTS (SELECT 1 FROM games_playerround p WHERE p.round_id = %(round)s AND p.staked > 0
               AND NOT p.done_deciding AND p.last_street > d.street
               AND p.player_id <> ALL(string_to_array(d.excluded, ',')::bigint[]))
FROM jsonb_to_recordset(%(decisions)s::jsonb) AS d(idx int, street text, excluded text)
CROSS JOIN games_housetable t WHERE t.id = %(table)s
"""


def ticks_and_waiting(
    *, table_id: int, round_row: HouseRound, decisions: Sequence[tuple[str, Sequence[int]]]
) -> list[tuple[tuple[str, str, int, datetime | None], bool]]:
    """``tick_and_waiting`` for several decisions in one query: for each
    ``(street, players not to count)``, the table's tick and whether anyone
    else still has to decide on that street."""
    if connection.vendor != "postgresql":
        answers = []
        for street, excluded in decisions:
            waiting = (
                PlayerRound.objects.filter(round=round_row, staked__gt=0, done_deciding=False)
                .exclude(last_street=street)
                .exclude(player_id__in=list(excluded))
                .exists()
            )
            table = HouseTable.objects.get(pk=table_id)
            answers.append(((table.current_round_id, table.phase, table.phase_seq, table.deadline), waiting))
        return answers
    document = json.dumps(
        [{"idx": i, "street": street, "excluded": ",".join(map(str, excluded))} for i, (street, excluded) in
         enumerate(decisions)]
    )  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(_PG_TICKS_AND_WAITING, {"round": round_row.pk, "decisions": document, "table": table_id})
        found = {int(row[0]): row[1:] for row in cursor.fetchall()}
    return [((found[i][0], found[i][1], found[i][2], found[i][3]), bool(found[i][4])) for i in range(len(decisions))]


def seats_and_bettors(*, table_id: int, round_row: HouseRound, player_ids: Sequence[int]) -> tuple[set[int], set[int]]:
    """``seat_and_bettors`` for a batch: which of ``player_ids`` still hold a
    seat (those seat rows locked until the transaction ends, as the single
    path locks its one) and which players hold bets in the round."""
    seated = set(
        TableSeat.objects.select_for_update(no_key=True)
        .filter(table_id=table_id, player_id__in=list(player_ids))
        .values_list("player_id", flat=True)
    )
    bettors = set(PlayerRound.objects.filter(round_id=round_row.pk, staked__gt=0).values_list("player_id", flat=True))
    return seated, bettors
