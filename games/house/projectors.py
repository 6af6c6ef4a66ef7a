"""The house read models written from events (``ledger.services.projectors``;
docs/events.md, "Read tables and their projectors", names the projector of each table).

``HouseRoundProjector`` (``HouseRound``) consumes the round streams
``round-{round_id}`` (``house_round.*``): the row is created by
``house_round.opened`` and follows the round's state (``apply_round``) after
each event. ``PlayerRoundProjector`` (``PlayerRound``, the account-history
row) consumes the player streams ``round-{round_id}-player-{player_id}``
(``house_bet.*``, ``house_decision.made``, ``house_player.*``): the row is
created by the player's first event and is the player's state
(``apply_player``) projected by ``project_player`` after each event.
``TableSeatProjector`` (``TableSeat``) consumes the seat streams
``house-seat-{table}-{player}``: ``house_seat.taken`` creates the row,
``house_seat.left`` deletes it.

The services append the events, then apply them with these projectors in the
same transaction, passing the rows and states they hold
(``games.house.store.commit`` does it for every round step). The player
commands' last write is one statement with the command's stored result
(``games.house.store.commands.save_player``,
``games.house.store.batches.saving_commands``): the row it writes is the one
this projector's ``fold`` projected. The player rows' state document, their
derivation and their bulk SQL are ``games.house.store.rows``, which these
projectors use and which uses nothing of them. Times come from the events: a step's ``at`` (the
metadata's, which every house append carries), else the append time.

Not projections (links, not compared): a player round's ``balance_before``
and ``balance_after``, the wallet's balance read from the ledger when the
settlement posted (the ledger's accounts, not the round's events, hold it); a
rebuild keeps the live values. Everything else on these three tables is
compared, the round's ``phase``, ``phase_seq`` and ``deadline`` included:
they are its state after its events (the dealer's schedule itself is on
``HouseTable``, not a projection).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from django.db import connection

from games.house.event_types import SEAT_LEFT, SEAT_STREAM_PREFIX, SEAT_TAKEN
from games.house.models import HouseRound, PlayerRound, TableSeat
from games.house.round.events import (
    OPENED,
    PLAYER_EVENT_TYPES,
    ROUND_CLOSED,
    ROUND_EVENT_TYPES,
    SETTLED,
    VOIDED_EVENT,
    RoundSettled,
)
from games.house.round.state import PlayerState, RoundState, apply_player, apply_round
from games.house.store.rows import load_player_rows, project_player, save_rows, state_from_json
from games.tables.projection import held_row
from ledger.services.events import RecordedEvent, read_stream
from ledger.services.projectors import Projector

ROUND_PREFIX = "round-"
PLAYER_MARK = "-player-"


def _moment(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


# The last ``at`` parsed (a step's thousands of events share it); one tuple,
# replaced whole, so threads sharing it never see a text with another's time.
_last_step: tuple[str, datetime] = ("", datetime.min)


def step_time(event: RecordedEvent) -> datetime:
    """When the service's step happened: its ``at`` (metadata), else the append time."""
    global _last_step
    at = event.metadata.get("at")
    if not at:
        return event.recorded_at
    last = _last_step
    if last[0] != at:
        last = _last_step = (at, datetime.fromisoformat(at))
    return last[1]


def round_of(stream_id: str) -> str:
    """The round id of a round stream."""
    return stream_id[len(ROUND_PREFIX) :]


def player_of(stream_id: str) -> tuple[str, int]:
    """(round id, player id) of a player stream."""
    round_id, _, player = stream_id[len(ROUND_PREFIX) :].rpartition(PLAYER_MARK)
    return round_id, int(player)


class HouseRoundProjector(Projector):
    """``HouseRound``: created by ``house_round.opened`` (the configuration it
    records), then the round's state after each event: phase (``paused`` while
    paused), sequence, deadline, participants; staked, returned and the dealer's
    hand at ``settled``; the void at ``voided``; ``closed_at`` at ``closed``
    (``empty`` if nobody played). Idempotent by ``stream_version``."""

    name = "house_round"
    model = HouseRound
    stream_prefixes = (ROUND_PREFIX,)
    event_types = frozenset(ROUND_EVENT_TYPES)
    key = ("round_id",)
    columns = (
        "table_id", "game_number", "game", "hand_mode", "currency", "rules_version", "config_version", "pay_tables",
        "phase", "phase_seq", "deadline", "stream_version", "participants", "staked", "returned", "status",
        "summary", "opened_at", "closed_at",
    )  # fmt: skip

    def __init__(self, *, row: HouseRound | None = None, state: RoundState | None = None) -> None:
        """``row``: the round row the service holds (kept current; unsaved for a
        round being opened); ``state``: the round's state at the row's version."""
        self._rows: dict[str, HouseRound] = {row.round_id: row} if row is not None else {}
        self._states: dict[str, RoundState] = {}
        if row is not None and state is not None:
            self._states[row.round_id] = state

    def wants(self, event: RecordedEvent) -> bool:
        return super().wants(event) and PLAYER_MARK not in event.stream_id

    def _row(self, round_id: str) -> HouseRound | None:
        return held_row(self._rows, round_id, lambda: HouseRound.objects.filter(round_id=round_id).first())

    def _state_before(self, round_id: str, version: int) -> RoundState:
        known = self._states.get(round_id)
        if known is not None and known.version == version - 1:
            return known
        state = RoundState()
        for event in read_stream(stream_id=ROUND_PREFIX + round_id, limit=version - 1):
            state = apply_round(state, event)
        return state

    def apply_many(self, events: Sequence[RecordedEvent]) -> None:
        changed: dict[str, HouseRound] = {}
        for event in events:
            round_id = round_of(event.stream_id)
            row = self._row(round_id)
            if row is not None and row.pk is not None and event.version <= row.stream_version:
                continue  # applied already
            if event.type == OPENED:
                row = self._opened(round_id, event, row)
            elif row is None:
                raise ValueError(f"{event.stream_id}@{event.version}: {event.type} before the round opened")
            state = apply_round(self._state_before(round_id, event.version), event)
            self._apply(row, state, event)
            changed[round_id] = row
            self._states[round_id] = state
        for round_id, row in changed.items():
            row.save()
            if self._states[round_id].closed:  # nothing follows a close: a replay keeps memory flat
                del self._states[round_id], self._rows[round_id]

    def _opened(self, round_id: str, event: RecordedEvent, row: HouseRound | None) -> HouseRound:
        data = event.data
        row = row or HouseRound(round_id=round_id)
        self._rows[round_id] = row
        row.table_id = int(data["table_id"])
        row.game_number = data["game_number"]
        row.game = data["game"]
        row.hand_mode = data["hand_mode"]
        row.currency = data["currency"]
        row.rules_version = str(data["rules_version"])
        row.config_version = data.get("config_version") or 0
        row.pay_tables = {wager: int(table["number"]) for wager, table in data["pay_tables"].items()}
        row.opened_at = datetime.fromisoformat(data["opened_at"])
        return row

    @staticmethod
    def _apply(row: HouseRound, state: RoundState, event: RecordedEvent) -> None:
        row.phase = "paused" if state.paused else state.phase
        row.phase_seq = state.phase_seq
        row.deadline = _moment(state.deadline)
        row.stream_version = state.version
        row.participants = len(state.participants)
        if event.type == SETTLED:
            settled = RoundSettled.from_data(event.data)
            row.staked, row.returned, row.status = settled.staked, settled.returned, "settled"
            row.summary = {**row.summary, "dealer": settled.dealer, "board": list(settled.board)}
        elif event.type == VOIDED_EVENT:
            row.status = "voided"
            row.summary = {**row.summary, "void": dict(event.data)}
        elif event.type == ROUND_CLOSED:
            row.closed_at = _moment(event.data.get("at")) or step_time(event)
            if row.status == "open":
                row.status = "empty"


class PlayerRoundProjector(Projector):
    """``PlayerRound``: created by the player's first event in the round (its
    ``created_at`` that event's time; round, table, game and currency the
    round row's), then ``project_player`` of the player's state after each
    event (``settled_at``: the time of the event that settled, voided or
    declined the player). Idempotent by ``stream_version``.

    ``fold`` projects the rows in memory (the service's or loaded), ``write``
    writes them in bulk (new rows ``bulk_create``, the others one statement,
    ``store.rows.save_rows``); ``apply_many`` is both."""

    name = "house_player_round"
    model = PlayerRound
    stream_prefixes = (ROUND_PREFIX,)
    event_types = frozenset(PLAYER_EVENT_TYPES)
    key = ("round__round_id", "player_id")
    columns = (
        "table_id", "game_number", "game", "currency", "stream_version", "state", "totals", "staked", "returned",
        "net", "status", "last_street", "done_deciding", "created_at", "settled_at",
    )  # fmt: skip

    def __init__(
        self,
        *,
        round_row: HouseRound | None = None,
        rows: Mapping[int, Any] | None = None,
        states: Mapping[int, PlayerState] | None = None,
    ) -> None:
        """``round_row`` and its player ``rows`` (by player id: ``PlayerRound`` or
        ``store.rows.PlayerRow``) as the service holds them, kept current;
        ``states``: those players' states at their rows' versions, when known
        (a row's ``state`` is then not parsed again)."""
        self._round = round_row
        self._rows: dict[int, Any] = dict(rows or {})
        self._states: dict[int, PlayerState] = dict(states or {})
        self._rounds: dict[str, HouseRound] = {}
        self._links: dict[tuple[str, int], tuple[int | None, int | None]] = {}

    def wants(self, event: RecordedEvent) -> bool:
        return super().wants(event) and PLAYER_MARK in event.stream_id

    def reset(self) -> None:
        # The balances are ledger links, not in the player's events: a rebuild keeps the live ones.
        self._links = {
            (round_id, player): (before, after)
            for round_id, player, before, after in PlayerRound.objects.filter(balance_before__isnull=False)
            .values_list("round__round_id", "player_id", "balance_before", "balance_after")
            .iterator()
        }
        super().reset()

    def _round_row(self, round_id: str) -> HouseRound:
        if self._round is not None and self._round.round_id == round_id:
            return self._round
        if round_id not in self._rounds:
            if len(self._rounds) > 64:
                self._rounds.clear()
            found = HouseRound.objects.only("id", "round_id", "table_id", "game_number", "game", "currency")
            row = found.filter(round_id=round_id).first()
            if row is None:
                raise ValueError(f"player events of round {round_id!r}, which never opened (no house_round.opened)")
            self._rounds[round_id] = row
        return self._rounds[round_id]

    def _loaded(self, round_row: HouseRound, players: Sequence[int]) -> dict[int, Any]:
        """Rows of ``players`` in the round (the service's, else read in one query)."""
        held = self._round is not None and self._round.round_id == round_row.round_id
        found = {pid: self._rows[pid] for pid in players if held and pid in self._rows}
        missing = [pid for pid in players if pid not in found]
        if missing:
            found |= load_player_rows(round_row, missing)
        return found

    def fold(self, events: Sequence[RecordedEvent]) -> dict[str, tuple[Any, PlayerState]]:
        """Apply ``events`` (player streams, log order) to the rows in memory,
        nothing written: ``{stream id: (row, new state)}`` of the rows changed."""
        by_round: dict[str, dict[int, list[RecordedEvent]]] = {}
        for event in events:
            round_id, player = player_of(event.stream_id)
            by_round.setdefault(round_id, {}).setdefault(player, []).append(event)
        changed: dict[str, tuple[Any, PlayerState]] = {}
        for round_id, players in by_round.items():
            round_row = self._round_row(round_id)
            held = round_row is self._round
            rows = self._loaded(round_row, list(players))
            for player, stream_events in players.items():
                row = rows.get(player)
                if row is None:
                    row = self._new_row(round_row, player, step_time(stream_events[0]))
                state = self._states.get(player) if held else None
                if state is None or state.version != row.stream_version:
                    state = state_from_json(player, row.state)
                before = state.version
                for event in stream_events:
                    if event.version <= state.version:
                        continue  # applied already
                    state = apply_player(state, event)
                    project_player(row, state, step_time(event))
                if state.version != before:
                    changed[stream_events[0].stream_id] = (row, state)
                    if held:
                        self._rows[player], self._states[player] = row, state
        return changed

    def _new_row(self, round_row: HouseRound, player: int, at: datetime) -> PlayerRound:
        before, after = self._links.get((round_row.round_id, player), (None, None))
        return PlayerRound(
            round=round_row, table_id=round_row.table_id, player_id=player, game_number=round_row.game_number,
            game=round_row.game, currency=round_row.currency, created_at=at, balance_before=before,
            balance_after=after,
        )  # fmt: skip

    @staticmethod
    def write(rows: Sequence[Any]) -> None:
        """Write projected rows: new ones in one ``bulk_create``, the others in one statement."""
        new = [row for row in rows if row.pk is None]
        existing = [row for row in rows if row.pk is not None] if new else rows
        if new:
            PlayerRound.objects.bulk_create(new)
        save_rows(existing)

    def apply_many(self, events: Sequence[RecordedEvent]) -> None:
        self.write([row for row, _ in self.fold(events).values()])


class TableSeatProjector(Projector):
    """``TableSeat``: a seat stream's row is what its last event says:
    ``house_seat.taken`` (seat number, ``joined_at`` its ``at``) or none after
    ``house_seat.left``. An event older than its stream's head changes nothing
    (idempotent, whatever was applied before); within a batch the rows freed
    are deleted before the rows taken are written (a seat number freed and
    taken again in one batch)."""

    name = "house_table_seat"
    model = TableSeat
    stream_prefixes = (SEAT_STREAM_PREFIX,)
    event_types = frozenset({SEAT_TAKEN, SEAT_LEFT})
    key = ("table_id", "player_id")
    columns = ("seat_number", "joined_at")

    def __init__(self, *, heads: Mapping[str, int] | None = None) -> None:
        """``heads``: stream -> head version, when the caller knows them (it just appended)."""
        self._heads = dict(heads or {})

    def _heads_of(self, streams: Sequence[str]) -> dict[str, int]:
        heads = {s: self._heads[s] for s in streams if s in self._heads}
        missing = [s for s in streams if s not in heads]
        if missing:
            with connection.cursor() as cursor:
                marks = ", ".join(["%s"] * len(missing))
                cursor.execute(
                    f"SELECT stream_id, MAX(version) FROM ledger_event WHERE stream_id IN ({marks}) GROUP BY stream_id",
                    missing,
                )
                heads |= {stream: int(version) for stream, version in cursor.fetchall()}
        return heads

    def apply_many(self, events: Sequence[RecordedEvent]) -> None:
        last: dict[str, RecordedEvent] = {}
        for event in events:
            last[event.stream_id] = event
        heads = self._heads_of(list(last))
        current = [event for stream, event in last.items() if event.version >= heads.get(stream, 0)]
        freed = [event for event in current if event.type == SEAT_LEFT]
        taken = [event for event in current if event.type == SEAT_TAKEN]
        for event in freed:
            TableSeat.objects.filter(table_id=event.data["table_id"], player_id=event.data["player_id"]).delete()
        for event in taken:
            data = event.data
            fields = {"seat_number": data["seat_number"], "joined_at": _moment(data["at"]) or step_time(event)}
            row = TableSeat.objects.filter(table_id=data["table_id"], player_id=data["player_id"]).first()
            if row is None:
                TableSeat.objects.create(table_id=data["table_id"], player_id=data["player_id"], **fields)
            elif any(getattr(row, name) != value for name, value in fields.items()):
                TableSeat.objects.filter(pk=row.pk).update(**fields)


HOUSE_PROJECTORS: tuple[type[Projector], ...] = (HouseRoundProjector, PlayerRoundProjector, TableSeatProjector)
