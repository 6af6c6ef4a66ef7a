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
The seats (``PokerSeat``) are still written by the services beside their
events; their stacks are checked against the ledger (``poker_seat`` check).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db.models import F

from games.poker import event_types as et
from games.poker.engine.events import HandEnded, HandStarted, event_from_dict
from games.poker.engine.hand import HandState, apply
from games.poker.models import PokerHand, PokerHandPlayer, PokerSeat, PokerTable
from ledger.services.events import RecordedEvent, read_stream
from ledger.services.projectors import Projector, apply_events

HAND_PREFIX = et.hand_stream("")


def hand_id_of(event: RecordedEvent) -> str:
    return event.stream_id[len(HAND_PREFIX) :]


def _moment(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def step_time(event: RecordedEvent) -> datetime:
    """When the service's step happened: its ``at`` (metadata), else the append time."""
    return _moment(event.metadata.get("at")) or event.recorded_at


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

    def __init__(self, *, hand: PokerHand | None = None, state: tuple[int, HandState | None] | None = None) -> None:
        """``hand``: the row the service holds (kept current; unsaved for a new
        hand); ``state``: the engine state at that version, if known."""
        self._rows: dict[str, PokerHand] = {hand.hand_id: hand} if hand is not None else {}
        self._states: dict[str, tuple[int, HandState | None]] = {}
        if hand is not None and state is not None:
            self._states[hand.hand_id] = state

    def _row(self, hand_id: str) -> PokerHand | None:
        if hand_id not in self._rows:
            row = PokerHand.objects.filter(hand_id=hand_id).first()
            if row is None:
                return None
            self._rows[hand_id] = row
        return self._rows[hand_id]

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
        for event in events:
            hand_id = hand_id_of(event)
            row = self._row(hand_id)
            if row is not None and row.pk is not None and event.version <= row.stream_version:
                continue  # applied already
            if row is None or row.pk is None:
                if event.type != et.SHUFFLED:
                    raise ValueError(f"{event.stream_id}@{event.version}: {event.type} before the hand's shuffle")
                row = self._create(hand_id, event, row)
            self._apply(row, event)
            row.stream_version = event.version
            changed[hand_id] = row
        for row in changed.values():
            row.save()

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
            engine_event = event_from_dict({"type": kind, **data})
            state = apply(self._state_before(row.hand_id, event.version), engine_event)
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
        hand = PokerHand.objects.only("pk", "hand_id", "table_id", "started_at").get(hand_id=hand_id_of(event))
        if event.type == HandStarted.type:
            have = set(PokerHandPlayer.objects.filter(hand=hand).values_list("player_id", flat=True))
            PokerHandPlayer.objects.bulk_create(
                PokerHandPlayer(hand=hand, player_id=int(player), seat_id=self._seat(hand, seat, int(player)),
                                seat_number=seat, stack_before=stack, started_at=hand.started_at)
                for seat, player, stack in event.data["seats"] if int(player) not in have
            )  # fmt: skip
        elif event.type == HandEnded.type:
            for seat, stack in event.data["stacks"]:
                PokerHandPlayer.objects.filter(hand=hand, seat_number=seat).update(stack_after=stack)
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


POKER_PROJECTORS: tuple[type[Projector], ...] = (PokerHandProjector, PokerHandPlayerProjector, PokerTableProjector)


def project_hand(
    events: Sequence[RecordedEvent],
    *,
    hand: PokerHand,
    state: tuple[int, HandState | None] | None = None,
    table: PokerTable | None = None,
    seats: dict[int, PokerSeat] | None = None,
) -> None:
    """Apply a hand's events just appended with every registered projector, the
    service's own rows (``hand``, ``table``) kept current."""
    apply_events(
        events,
        using=[PokerHandProjector(hand=hand, state=state), PokerHandPlayerProjector(seats=seats),
               PokerTableProjector(table=table)],
    )  # fmt: skip
