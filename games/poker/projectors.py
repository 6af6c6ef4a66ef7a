"""The poker read models written from events (``ledger.services.projectors``;
docs/events.md names the projector of each table).

``PokerHandProjector`` (``PokerHand``), ``PokerHandPlayerProjector``
(``PokerHandPlayer``) and ``PokerTableProjector`` (the table's
``current_hand_id``, ``button_seat``, ``hands_played``) consume the hand
streams ``poker-hand-{hand_id}``: the dealer's ``poker_hand.*`` events, the
engine's ``poker.*`` events and the operator's pause, resume and void. The
services append the events, then apply them with these projectors in the same
transaction (``project_hand``); ``manage.py rebuild_projections`` replays them.

Not projections (pacing state, not compared): the table's ``phase``,
``phase_seq`` and ``deadline`` (the dealer's schedule), and a hand player's
``seat`` link (the seat row the running hand touches: set when the hand is
dealt, emptied when that seat row is freed; a rebuild keeps the live link).
``PokerSeatProjector`` (``PokerSeat``) consumes the table streams, the hand
streams' chip moves and the tournament streams' seating; the seats' stacks are
also checked against the ledger (``poker_seat`` check). The tournaments and
their entries: ``games.poker.tournament.projectors``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import F

from games.poker import event_types as et
from games.poker.engine.events import (
    ActionTaken,
    AntePosted,
    BlindPosted,
    Event,
    HandEnded,
    HandStarted,
    PotAwarded,
    UncalledBetReturned,
    event_from_dict,
)
from games.poker.engine.hand import HandState, apply
from games.poker.models import PokerHand, PokerHandPlayer, PokerSeat, PokerTable
from games.poker.store.act import save_row, save_stacks_after
from games.poker.tournament.models import Tournament, TournamentEntry
from games.poker.tournament.projectors import TournamentEntryProjector, TournamentProjector
from games.tables.projection import held_row
from ledger.services.events import NewEvent, RecordedEvent, read_stream
from ledger.services.projectors import Projector, apply_events, events_of

HAND_PREFIX = et.hand_stream("")


def hand_id_of(event: RecordedEvent) -> str:
    return event.stream_id[len(HAND_PREFIX) :]


def _moment(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def step_time(event: RecordedEvent) -> datetime:
    """When the service's step happened: its ``at`` (metadata), else the append time."""
    return _moment(event.metadata.get("at")) or event.recorded_at


# The hand's columns that events after its start change (``PokerHandProjector._apply``).
_PLAY_COLUMNS = (
    "phase", "actor_seat", "deadline", "in_time_bank", "in_disconnection_bank", "status", "stream_version", "pot",
    "rake", "ended_at",
)  # fmt: skip


class PokerHandProjector(Projector):
    """``PokerHand``: created by ``poker_hand.shuffled``; phase, actor and pot
    from the engine's state after each engine event; the turn's deadline and
    time banks from ``poker_hand.turn``; ``complete`` with its rake at
    ``poker.hand_ended``; paused, resumed, voided. Idempotent by
    ``stream_version``: an event at or below it is skipped."""

    name = "poker_hand"
    model = PokerHand
    stream_prefixes = (HAND_PREFIX,)
    key = ("hand_id",)
    columns = (
        "table_id", "hand_number", "currency", "players", "phase", "actor_seat", "deadline", "in_time_bank",
        "in_disconnection_bank", "status", "stream_version", "pot", "rake", "started_at", "ended_at",
    )  # fmt: skip

    def __init__(
        self,
        *,
        hand: PokerHand | None = None,
        state: tuple[int, HandState | None] | None = None,
        decided: Sequence[tuple[int, Event]] = (),
        after: HandState | None = None,
    ) -> None:
        """``hand``: the row the service holds (kept current; unsaved for a new
        hand); ``state``: the engine state at that version, if known.
        ``decided`` (engine events of ``hand`` by stream version, as the
        service's step decided them) and ``after`` (the engine state after the
        last of them): those events are not decoded and replayed, the row takes
        the phase, actor and pot from ``after`` at the last of them (replaying
        them gives that state: ``apply`` is the engine's own fold of its events)."""
        self._rows: dict[str, PokerHand] = {hand.hand_id: hand} if hand is not None else {}
        self._states: dict[str, tuple[int, HandState | None]] = {}
        if hand is not None and state is not None:
            self._states[hand.hand_id] = state
        self._decided: dict[int, Event] = dict(decided) if hand is not None and after is not None else {}
        self._own = hand.hand_id if hand is not None else ""
        self._last = (decided[-1][0], after) if self._decided and after is not None else None

    def _row(self, hand_id: str) -> PokerHand | None:
        return held_row(self._rows, hand_id, lambda: PokerHand.objects.filter(hand_id=hand_id).first())

    def _state_before(self, hand_id: str, version: int) -> HandState | None:
        known = self._states.get(hand_id)
        if known is not None and known[0] == version - 1:
            return known[1]
        state: HandState | None = None
        for event in read_stream(stream_id=et.hand_stream(hand_id), limit=version - 1):
            if event.type in et.ENGINE_EVENT_TYPES:
                state = apply(state, event_from_dict({"type": event.type, **event.data}))
        return state

    def apply_many(self, events: Sequence[RecordedEvent]) -> None:
        changed: dict[str, PokerHand] = {}
        whole: set[str] = set()  # hands whose every column is saved: new ones, or started in these events
        for event in events:
            hand_id = hand_id_of(event)
            row = self._row(hand_id)
            if row is not None and row.pk is not None and event.version <= row.stream_version:
                continue  # applied already
            if row is None or row.pk is None:
                if event.type != et.SHUFFLED:
                    raise ValueError(f"{event.stream_id}@{event.version}: {event.type} before the hand's shuffle")
                row = self._create(hand_id, event, row)
                whole.add(hand_id)
            if event.type == HandStarted.type:
                whole.add(hand_id)
            self._apply(row, event)
            row.stream_version = event.version
            changed[hand_id] = row
        for hand_id, row in changed.items():
            # A hand's other columns are set once, by its shuffle (``_create``) and its start.
            save_row(row, None if hand_id in whole else _PLAY_COLUMNS)

    def _create(self, hand_id: str, event: RecordedEvent, row: PokerHand | None) -> PokerHand:
        table_id = int(event.data["table_id"])
        currency = event.metadata.get("currency")  # the deal's; before issue #24 the table's (now)
        currency = currency or PokerTable.objects.values_list("currency", flat=True).get(pk=table_id)
        row = row or PokerHand(hand_id=hand_id)
        row.table_id = table_id
        row.hand_number = PokerHand.objects.filter(table_id=table_id).count() + 1
        row.currency = currency
        row.players = {}
        row.started_at = _moment(event.data["at"]) or event.recorded_at
        row.save()  # the hand players refer to it
        self._rows[hand_id] = row
        return row

    def _apply(self, row: PokerHand, event: RecordedEvent) -> None:
        kind, data = event.type, event.data
        if kind in et.ENGINE_EVENT_TYPES:
            decided = self._decided.get(event.version) if row.hand_id == self._own else None
            state: HandState | None
            if decided is not None and self._last is not None and event.version <= self._last[0]:
                engine_event = decided
                # An earlier event of the step: the last one's state sets the columns it would set.
                state = self._last[1] if event.version == self._last[0] else None
            else:
                engine_event = event_from_dict({"type": kind, **data})
                state = apply(self._state_before(row.hand_id, event.version), engine_event)
            if state is not None:
                self._states[row.hand_id] = (event.version, state)
                row.phase, row.actor_seat, row.pot = state.phase.value, state.acting_seat, state.pot_total
            row.deadline, row.in_time_bank, row.in_disconnection_bank = None, False, False
            if isinstance(engine_event, HandStarted):
                row.players = {str(seat): int(player) for seat, player, _ in engine_event.seats}
            elif isinstance(engine_event, HandEnded):
                row.status, row.rake, row.ended_at = "complete", engine_event.rake, step_time(event)
                self._states.pop(row.hand_id, None)
            return
        known = self._states.get(row.hand_id)
        if known is not None and known[0] == event.version - 1:  # the engine state is unchanged by this event
            self._states[row.hand_id] = (event.version, known[1])
        if kind == et.TURN:
            row.actor_seat, row.deadline = data["seat"], _moment(data["deadline"])
            if data["time_bank"]:
                row.in_time_bank = True
                row.in_disconnection_bank = row.in_disconnection_bank or data.get("bank") == "disconnection"
            else:
                row.in_time_bank = row.in_disconnection_bank = False
        elif kind == et.PAUSED:
            row.deadline = None
        elif kind == et.RESUMED:
            row.deadline = _moment(data["deadline"])
        elif kind == et.VOIDED:
            row.status, row.ended_at = "voided", _moment(data["at"]) or event.recorded_at
            row.deadline, row.actor_seat, row.in_time_bank = None, None, False
            self._states.pop(row.hand_id, None)


class PokerHandPlayerProjector(Projector):
    """``PokerHandPlayer``: one row per seat of ``poker.hand_started`` (its
    stack before), ``stack_after`` from ``poker.hand_ended`` (a voided hand:
    the stack before). Idempotent: rows are created once, values set."""

    name = "poker_hand_player"
    model = PokerHandPlayer
    stream_prefixes = (HAND_PREFIX,)
    event_types = frozenset({HandStarted.type, HandEnded.type, et.VOIDED})
    key = ("hand__hand_id", "player_id")
    columns = ("seat_number", "stack_before", "stack_after", "started_at")

    def __init__(self, *, seats: dict[int, PokerSeat] | None = None) -> None:
        """``seats``: the seat rows dealt in (the service knows them)."""
        self._seats = seats
        self._links: dict[tuple[str, int], int | None] = {}

    def reset(self) -> None:
        # The seat link is pacing state, not in the log: a rebuild keeps the live one.
        self._links = {(h, p): s for h, p, s in PokerHandPlayer.objects.values_list("hand__hand_id", "player_id",
                                                                                    "seat_id")}  # fmt: skip
        super().reset()

    def _seat(self, hand: PokerHand, number: int, player_id: int) -> int | None:
        if (hand.hand_id, player_id) in self._links:
            return self._links[(hand.hand_id, player_id)]
        if self._seats is not None:
            seat = self._seats.get(number)
            return seat.pk if seat is not None and seat.player_id == player_id else None
        return (
            PokerSeat.objects.filter(table_id=hand.table_id, seat_number=number, player_id=player_id)
            .values_list("pk", flat=True)
            .first()
        )

    def apply(self, event: RecordedEvent) -> None:
        if event.type == HandEnded.type:
            save_stacks_after(hand_id=hand_id_of(event), stacks=[(seat, stack) for seat, stack in event.data["stacks"]])
            return
        hand = PokerHand.objects.only("pk", "hand_id", "table_id", "started_at").get(hand_id=hand_id_of(event))
        if event.type == HandStarted.type:
            have = set(PokerHandPlayer.objects.filter(hand=hand).values_list("player_id", flat=True))
            PokerHandPlayer.objects.bulk_create(
                PokerHandPlayer(hand=hand, player_id=int(player), seat_id=self._seat(hand, seat, int(player)),
                                seat_number=seat, stack_before=stack, started_at=hand.started_at)
                for seat, player, stack in event.data["seats"] if int(player) not in have
            )  # fmt: skip
        else:
            PokerHandPlayer.objects.filter(hand=hand).update(stack_after=F("stack_before"))


class PokerTableProjector(Projector):
    """The table's hand columns: ``current_hand_id`` and ``hands_played`` (the
    hand's number) at ``poker_hand.shuffled``, ``button_seat`` at
    ``poker.hand_started``. The rest of the row is configuration or pacing."""

    name = "poker_table"
    model = PokerTable
    owns_rows = False
    stream_prefixes = (HAND_PREFIX,)
    event_types = frozenset({et.SHUFFLED, HandStarted.type})
    key = ("id",)
    columns = ("current_hand_id", "button_seat", "hands_played")
    column_defaults = {"current_hand_id": "", "button_seat": None, "hands_played": 0}

    def __init__(self, *, table: PokerTable | None = None) -> None:
        """``table``: the row the service holds (kept current)."""
        self._table = table

    def apply(self, event: RecordedEvent) -> None:
        hand_id = hand_id_of(event)
        table_id, number = PokerHand.objects.values_list("table_id", "hand_number").get(hand_id=hand_id)
        fields: dict[str, Any] = (
            {"current_hand_id": hand_id, "hands_played": number}
            if event.type == et.SHUFFLED
            else {"button_seat": event.data["button"]}
        )
        PokerTable.objects.filter(pk=table_id).update(**fields)
        if self._table is not None and self._table.pk == table_id:
            for name, value in fields.items():
                setattr(self._table, name, value)


TABLE_PREFIX = et.TABLE_STREAM_PREFIX
TOURNAMENT_PREFIX = et.TOURNAMENT_STREAM_PREFIX
Seat = tuple[int, int]  # (table id, player id): a sitting's natural key
# Hand events that move a sitting's chips (relative to the stack, guarded by the hand version).
_CHIPS_OUT = frozenset({AntePosted.type, BlindPosted.type, ActionTaken.type})
_CHIPS_BACK = frozenset({UncalledBetReturned.type})


def _stream_number(event: RecordedEvent, prefix: str) -> int:
    return int(event.stream_id[len(prefix) :])


class PokerSeatProjector(Projector):
    """``PokerSeat``: one row per sitting, keyed by table and player.

    Table stream: ``sat_down`` creates it (``buy_in``); ``topped_up`` sets the
    stack (its ``stack``; an event from before that field: plus ``amount``);
    ``stood_up`` deletes it; ``sat_out`` and ``sat_in`` set the sitting-out
    columns. Hand streams: ``poker.hand_started`` deals the sitting in (its
    ``hand_number``, the stack dealt), the bets, uncalled returns and pots won
    move its stack, ``poker.hand_ended`` sets it, a void's refund ``to`` the
    seat adds to it; each only to the sittings dealt into that hand (issue #20)
    and only once (``hand_version``). Tournament stream: ``started`` and
    ``late_seated`` create sittings with the starting chips, ``player_moved``
    moves one, ``busted`` deletes the players out (``eliminated`` too, for a
    log from before ``busted``: nothing is left to delete since), ``finished``
    and ``tables_closed`` delete every sitting at the tournament's tables.

    Not compared: ``time_bank_left`` (the dealer's timer, pacing state: set by
    the services; a new sitting starts with the table's bank, a rebuild keeps
    the live value); the row ``id`` (a rebuild gives a live sitting its live
    id back, which the hand players' seat links refer to)."""

    name = "poker_seat"
    model = PokerSeat
    stream_prefixes = (TABLE_PREFIX, HAND_PREFIX, TOURNAMENT_PREFIX)
    event_types = frozenset({
        *et.TABLE_EVENT_TYPES, HandStarted.type, *_CHIPS_OUT, *_CHIPS_BACK, PotAwarded.type, HandEnded.type,
        et.VOIDED, et.TOURNAMENT_STARTED, et.TOURNAMENT_LATE_SEATED, et.TOURNAMENT_MOVED, et.TOURNAMENT_BUSTED,
        et.TOURNAMENT_ELIMINATED, et.TOURNAMENT_FINISHED, et.TOURNAMENT_TABLES_CLOSED,
    })  # fmt: skip
    key = ("table_id", "player_id")
    columns = (
        "seat_number", "stack", "sitting_out", "sat_out_reason", "reserved_until", "joined_at", "hand_number",
        "hand_version",
    )  # fmt: skip

    def __init__(
        self,
        *,
        seats: Iterable[PokerSeat] | Mapping[int, PokerSeat] | None = None,
        hand: PokerHand | None = None,
        table: PokerTable | None = None,
    ) -> None:
        """``seats``: the rows the service holds (kept current); with ``hand``,
        they are every sitting dealt into that hand. ``table``: the table the
        service holds (its time bank for a new sitting)."""
        held = list(seats.values() if isinstance(seats, Mapping) else seats or ())
        self._rows: dict[Seat, PokerSeat | None] = {(s.table_id, s.player_id): s for s in held}
        self._dirty: dict[Seat, set[str]] = {}
        self._hand = hand
        self._hands: dict[str, tuple[int, int]] = {}  # hand id -> (table id, hand number)
        self._loaded: set[str] = {hand.hand_id} if hand is not None and seats is not None else set()
        self._banks: dict[int, float] = {table.pk: float(table.time_bank_seconds)} if table is not None else {}
        self._live: dict[Seat, tuple[int, float]] = {}
        self._replaying = False  # after ``reset``: every row is this instance's

    def reset(self) -> None:
        # A rebuild gives a live sitting its id (the hand players' links) and time bank (pacing) back.
        self._live = {(t, p): (pk, bank) for pk, t, p, bank in
                      PokerSeat.objects.values_list("pk", "table_id", "player_id", "time_bank_left")}  # fmt: skip
        super().reset()
        self._rows, self._dirty, self._loaded, self._replaying = {}, {}, set(), True

    # --- rows ---------------------------------------------------------------------------------------

    def _row(self, key: Seat) -> PokerSeat | None:
        if key not in self._rows:
            self._rows[key] = (
                None if self._replaying else PokerSeat.objects.filter(table_id=key[0], player_id=key[1]).first()
            )
        return self._rows[key]

    def _set(self, row: PokerSeat, **values: Any) -> None:
        changed = {name for name, value in values.items() if getattr(row, name) != value}
        for name in changed:
            setattr(row, name, values[name])
        if changed:
            self._dirty.setdefault((row.table_id, row.player_id), set()).update(changed)

    def _create(self, table_id: int, player_id: int, **values: Any) -> None:
        key = (table_id, player_id)
        if self._row(key) is not None:
            return  # applied already
        live = self._live.get(key)
        if live is None and table_id not in self._banks:
            self._banks[table_id] = float(PokerTable.objects.values_list("time_bank_seconds", flat=True)
                                          .get(pk=table_id))  # fmt: skip
        values.setdefault("time_bank_left", live[1] if live is not None else self._banks[table_id])
        row = PokerSeat(pk=live[0] if live is not None else None, table_id=table_id, player_id=player_id, **values)
        row.save(force_insert=True)
        self._rows[key] = row

    def _delete(self, key: Seat) -> None:
        row = self._row(key)
        if row is None:
            return  # applied already
        if self._replaying:  # the hand players' links are the live ones (``PokerHandPlayerProjector.reset``)
            with connection.cursor() as cursor:
                cursor.execute(f"DELETE FROM {connection.ops.quote_name(PokerSeat._meta.db_table)} WHERE id = %s",
                               [row.pk])  # fmt: skip
        else:
            row.delete()  # and the hand players' links to it emptied (``on_delete``)
        self._rows[key] = None
        self._dirty.pop(key, None)

    def _hand_of(self, hand_id: str) -> tuple[int, int]:
        if hand_id not in self._hands:
            if self._hand is not None and self._hand.hand_id == hand_id:
                self._hands[hand_id] = (self._hand.table_id, self._hand.hand_number)
            else:
                self._hands[hand_id] = PokerHand.objects.values_list("table_id", "hand_number").get(hand_id=hand_id)
        return self._hands[hand_id]

    def _dealt(self, hand_id: str) -> dict[int, PokerSeat]:
        """The sittings dealt into the hand, by seat number."""
        table_id, number = self._hand_of(hand_id)
        if hand_id not in self._loaded and not self._replaying:
            for row in PokerSeat.objects.filter(table_id=table_id, hand_number=number):
                self._rows.setdefault((row.table_id, row.player_id), row)
            self._loaded.add(hand_id)
        return {
            row.seat_number: row
            for (table, _), row in self._rows.items()
            if row is not None and table == table_id and row.hand_number == number
        }

    # --- events -------------------------------------------------------------------------------------

    def apply_many(self, events: Sequence[RecordedEvent]) -> None:
        for event in events:
            if event.stream_id.startswith(HAND_PREFIX):
                self._hand_event(event)
            elif event.stream_id.startswith(TABLE_PREFIX):
                self._table_event(_stream_number(event, TABLE_PREFIX), event.type, event.data)
            else:
                self._tournament_event(_stream_number(event, TOURNAMENT_PREFIX), event.type, event.data)
        for key, fields in self._dirty.items():
            row = self._rows.get(key)
            if row is not None and fields:
                save_row(row, sorted(fields))
        self._dirty = {}

    def _table_event(self, table_id: int, kind: str, data: Mapping[str, Any]) -> None:
        key = (table_id, int(data["player_id"]))
        if kind == et.SAT_DOWN:
            self._create(*key, seat_number=data["seat"], stack=data["buy_in"], joined_at=_moment(data["at"]))
            return
        if kind == et.STOOD_UP:
            self._delete(key)
            return
        row = self._row(key)
        if row is None:
            return  # the sitting has ended since: applied already
        if kind == et.TOPPED_UP:
            self._set(row, stack=data["stack"] if "stack" in data else row.stack + data["amount"])
        elif kind == et.SAT_OUT:
            self._set(
                row, sitting_out=True, sat_out_reason=data["reason"], reserved_until=_moment(data["reserved_until"])
            )
        elif kind == et.SAT_IN:
            self._set(row, sitting_out=False, sat_out_reason="", reserved_until=None)

    def _hand_event(self, event: RecordedEvent) -> None:
        hand_id, kind, data, version = hand_id_of(event), event.type, event.data, event.version
        table_id, number = self._hand_of(hand_id)
        if kind == HandStarted.type:
            for _seat, player, stack in data["seats"]:
                row = self._row((table_id, int(player)))
                if row is not None and (row.hand_number, row.hand_version) < (number, version):
                    self._set(row, hand_number=number, hand_version=version, stack=stack)
            self._loaded.add(hand_id)
            return
        dealt = {seat: row for seat, row in self._dealt(hand_id).items() if row.hand_version < version}
        moves: list[tuple[int, int]] = []  # (seat, chips): a change of stack
        if kind in _CHIPS_OUT:
            moves = [(data["seat"], -data["amount"])]
        elif kind in _CHIPS_BACK:
            moves = [(data["seat"], data["amount"])]
        elif kind == PotAwarded.type:
            moves = [(seat, chips) for seat, chips in data["winners"]]
        elif kind == et.VOIDED:
            moves = [(r["seat"], r["amount"]) for r in data["refunds"] if r["to"] == "seat"]
        elif kind == HandEnded.type:
            for seat, stack in data["stacks"]:
                if seat in dealt:
                    self._set(dealt[seat], stack=stack, hand_version=version)
        # Only the sittings an event changes need its version: applied again, it finds them past it.
        for seat, chips in moves:
            if seat in dealt and chips:
                self._set(dealt[seat], stack=dealt[seat].stack + chips, hand_version=version)

    def _tournament_event(self, tournament_id: int, kind: str, data: Mapping[str, Any]) -> None:
        if kind == et.TOURNAMENT_STARTED:
            at = _moment(data["at"])
            for table, seated in data["tables"].items():
                for seat, player in seated.items():
                    self._create(int(table), int(player), seat_number=int(seat), stack=data["starting_chips"],
                                 joined_at=at)  # fmt: skip
        elif kind == et.TOURNAMENT_LATE_SEATED:
            self._create(data["table_id"], int(data["player_id"]), seat_number=data["seat"], stack=data["chips"],
                         joined_at=_moment(data["at"]))  # fmt: skip
        elif kind == et.TOURNAMENT_MOVED:
            source = self._row((data["from_table"], int(data["player_id"])))
            if source is None:
                return  # applied already
            self._create(
                data["to_table"], source.player_id, seat_number=data["to_seat"], stack=data["chips"],
                sitting_out=source.sitting_out, sat_out_reason=source.sat_out_reason,
                reserved_until=source.reserved_until, time_bank_left=source.time_bank_left,
                joined_at=_moment(data["at"]),
            )  # fmt: skip
            self._delete((source.table_id, source.player_id))
        elif kind == et.TOURNAMENT_BUSTED:
            for out in data["players"]:
                self._delete((out["table_id"], int(out["player_id"])))
        elif kind == et.TOURNAMENT_ELIMINATED:  # a log from before ``busted``: the players' seats are freed here
            for key in self._sittings_at(tournament_id, {int(out["player_id"]) for out in data["players"]}):
                self._delete(key)
        else:  # finished, tables closed: every sitting at the tournament's tables
            for key in self._sittings_at(tournament_id):
                self._delete(key)

    def _sittings_at(self, tournament_id: int, players: set[int] | None = None) -> list[Seat]:
        """The sittings at the tournament's tables (of ``players``, if given)."""
        tables = set(PokerTable.objects.filter(tournament_id=tournament_id).values_list("pk", flat=True))
        keys = {key for key, row in self._rows.items() if row is not None and key[0] in tables}
        if not self._replaying:
            found = PokerSeat.objects.filter(table_id__in=tables)
            if players is not None:
                found = found.filter(player_id__in=players)
            keys |= set(found.values_list("table_id", "player_id"))
        return sorted(key for key in keys if players is None or key[1] in players)


# In dependency order: a hand's number (``PokerHand``) before the seats it deals in.
POKER_PROJECTORS: tuple[type[Projector], ...] = (
    PokerHandProjector, PokerHandPlayerProjector, PokerTableProjector, PokerSeatProjector, TournamentProjector,
    TournamentEntryProjector,
)  # fmt: skip


def project_hand(
    events: Sequence[RecordedEvent],
    *,
    hand: PokerHand,
    state: tuple[int, HandState | None] | None = None,
    table: PokerTable | None = None,
    seats: dict[int, PokerSeat] | None = None,
    decided: Sequence[tuple[int, Event]] = (),
    after: HandState | None = None,
) -> None:
    """Apply a hand's events just appended with every registered projector, the
    service's own rows (``hand``, ``table``, ``seats``: every sitting dealt into
    the hand, or ``None``) kept current; ``decided`` and ``after``: the engine's
    events of the step and its state after them (``PokerHandProjector``)."""
    apply_events(
        events,
        using=[PokerHandProjector(hand=hand, state=state, decided=decided, after=after),
               PokerHandPlayerProjector(seats=seats),
               PokerTableProjector(table=table), PokerSeatProjector(seats=seats, hand=hand, table=table)],
    )  # fmt: skip


def project_new(
    stream_id: str,
    events: Sequence[NewEvent],
    metadata: Mapping[str, Any],
    *,
    at: datetime,
    using: Sequence[Projector] = (),
) -> None:
    """Apply events just appended to a table or tournament stream (through a
    transfer's cause, so their versions are not known here: the projectors of
    those streams do not read them) with every registered projector, ``using``
    the service's own rows."""
    apply_events(events_of(stream_id=stream_id, first_version=0, events=events, metadata=metadata, at=at),
                 using=using)  # fmt: skip


def project_tournament(
    events: Sequence[RecordedEvent],
    *,
    tournament: Tournament | None = None,
    entries: Iterable[TournamentEntry] = (),
    seats: Iterable[PokerSeat] = (),
) -> None:
    """Apply a tournament's events just appended with every registered
    projector, the service's own rows (``tournament``, ``entries``, ``seats``)
    kept current."""
    apply_events(
        events,
        using=[TournamentProjector(tournament=tournament), TournamentEntryProjector(entries=entries),
               PokerSeatProjector(seats=seats)],
    )  # fmt: skip
