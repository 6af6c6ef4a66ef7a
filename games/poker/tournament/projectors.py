"""The tournaments' read models written from their streams
``poker-tournament-{id}`` (``ledger.services.projectors``; docs/events.md names
the projector of each table).

``TournamentProjector`` writes the tournament row's state, level, clock,
counts, hand-for-hand flag, final table and bust groups; the rest of the row is
configuration (the operator's or the template's terms), which the admin and
``create_from_template`` write, and ``hand_for_hand_round``, pacing state (the
step's count of hand-for-hand rounds dealt together, written by the step). The
level clock (``clock_elapsed``, ``clock_started_at``) is written by the
projector from ``started``, ``paused``, ``resumed``, ``finished`` and
``cancelled`` but not compared: it is pacing state (what the step and the
lobby time the levels by), like a table's deadline.
``TournamentEntryProjector`` writes the entries: registration, state, the
bust (``bust_stack``, ``bust_hand_id``, ``bust_group``, from which the finish
ranks the players out), places and prizes. The services append the events,
then apply them with these projectors in the same transaction
(``games.poker.projectors.project_tournament``); ``manage.py
rebuild_projections`` replays them.

Idempotent: every event sets values (the counts an event changes are in its
data: ``late_seated``'s ``entrants`` and ``players_left``, ``busted``'s and
``eliminated``'s ``players_left``), so applying it again changes nothing; a
``late_seated`` from before those fields adds one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from games.poker import event_types as et
from games.poker.tournament.models import EntryState, Tournament, TournamentEntry, TournamentState
from ledger.services.events import RecordedEvent
from ledger.services.projectors import Projector

TOURNAMENT_PREFIX = et.TOURNAMENT_STREAM_PREFIX
# The entries that count (as ``tournament_core.ACTIVE``, which imports the services).
_ACTIVE = (EntryState.REGISTERED, EntryState.PLAYING, EntryState.ELIMINATED, EntryState.WINNER)


def _moment(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _at(data: Mapping[str, Any]) -> datetime:
    """The event's ``at`` (every event this projector creates a row from has one)."""
    return datetime.fromisoformat(data["at"])


def tournament_id_of(event: RecordedEvent) -> int:
    return int(event.stream_id[len(TOURNAMENT_PREFIX) :])


class TournamentProjector(Projector):
    """``Tournament``'s projected columns (the row is the operator's): ``started``
    (running, level, entrants), ``late_seated`` (the counts),
    ``level_started``, ``busted`` and ``eliminated`` (players left, bust
    groups), ``final_table``, ``hand_for_hand``, ``paused`` and ``resumed``,
    ``finished`` and ``cancelled``; and the level clock (not compared)."""

    name = "poker_tournament"
    model = Tournament
    owns_rows = False
    stream_prefixes = (TOURNAMENT_PREFIX,)
    event_types = frozenset({
        et.TOURNAMENT_CANCELLED, et.TOURNAMENT_STARTED, et.TOURNAMENT_LATE_SEATED, et.TOURNAMENT_LEVEL,
        et.TOURNAMENT_BUSTED, et.TOURNAMENT_ELIMINATED, et.TOURNAMENT_FINAL_TABLE, et.TOURNAMENT_HAND_FOR_HAND,
        et.TOURNAMENT_FINISHED, et.TOURNAMENT_PAUSED, et.TOURNAMENT_RESUMED,
    })  # fmt: skip
    key = ("id",)
    # The level clock (``clock_elapsed``, ``clock_started_at``) is written from the
    # events too, but not compared: it is pacing state, as a table's deadline.
    columns = (
        "state", "current_level", "started_at", "finished_at", "entrants", "players_left", "hand_for_hand",
        "final_table_id", "bust_groups",
    )  # fmt: skip
    column_defaults = {
        "state": TournamentState.REGISTERING, "current_level": None, "started_at": None, "finished_at": None,
        "clock_elapsed": 0.0, "clock_started_at": None, "entrants": 0, "players_left": 0, "hand_for_hand": False,
        "final_table": None, "bust_groups": 0,
    }  # fmt: skip

    def __init__(self, *, tournament: Tournament | None = None) -> None:
        """``tournament``: the row the service holds (kept current)."""
        self._rows: dict[int, Tournament] = {tournament.pk: tournament} if tournament is not None else {}

    def apply_many(self, events: Sequence[RecordedEvent]) -> None:
        changed: dict[int, set[str]] = {}
        for event in events:
            pk = tournament_id_of(event)
            if pk not in self._rows:
                self._rows[pk] = Tournament.objects.get(pk=pk)
            row = self._rows[pk]
            values = self._values(row, event.type, event.data)
            for name, value in values.items():
                setattr(row, name, value)
            changed.setdefault(pk, set()).update(values)
        for pk, fields in changed.items():
            if fields:
                self._rows[pk].save(update_fields=[*sorted(fields), "updated_at"])

    @staticmethod
    def _values(row: Tournament, kind: str, data: Mapping[str, Any]) -> dict[str, Any]:
        at = _moment(data.get("at"))
        if kind == et.TOURNAMENT_STARTED:
            entrants = data["entrants"]
            return {"state": TournamentState.RUNNING, "started_at": at, "clock_started_at": at, "clock_elapsed": 0.0,
                    "current_level": data["level"], "entrants": entrants, "players_left": entrants}  # fmt: skip
        if kind == et.TOURNAMENT_LATE_SEATED:
            return {"entrants": data.get("entrants", row.entrants + 1),
                    "players_left": data.get("players_left", row.players_left + 1)}  # fmt: skip
        if kind == et.TOURNAMENT_LEVEL:
            return {"current_level": data["level"]}
        if kind == et.TOURNAMENT_BUSTED:
            return {"players_left": data["players_left"]}
        if kind == et.TOURNAMENT_ELIMINATED:
            return {"bust_groups": data["group"], "players_left": data["players_left"]}
        if kind == et.TOURNAMENT_FINAL_TABLE:
            return {"final_table_id": data["table_id"]}
        if kind == et.TOURNAMENT_HAND_FOR_HAND:
            return {"hand_for_hand": data["on"]}
        if kind == et.TOURNAMENT_PAUSED:
            return {"state": TournamentState.PAUSED, "clock_elapsed": float(data["clock_seconds"]),
                    "clock_started_at": None}  # fmt: skip
        if kind == et.TOURNAMENT_RESUMED:
            return {"state": TournamentState.RUNNING, "clock_started_at": at}
        if kind == et.TOURNAMENT_FINISHED:
            values: dict[str, Any] = {"state": TournamentState.FINISHED, "finished_at": at, "players_left": 1,
                                      "hand_for_hand": False, "clock_started_at": None}  # fmt: skip
            if row.clock_started_at is not None and at is not None:  # the clock stops, whole seconds
                values["clock_elapsed"] = float(
                    int(row.clock_elapsed + max(0.0, (at - row.clock_started_at).total_seconds()))
                )
            return values
        # cancelled
        return {"state": TournamentState.CANCELLED, "finished_at": at, "clock_started_at": None}


class TournamentEntryProjector(Projector):
    """``TournamentEntry``: created by ``registered`` (its ``entry_id`` is the
    row's id); ``unregistered`` and a refunding ``cancelled``; ``started`` and
    ``late_seated`` (playing); ``busted`` (out: the stack the hand started
    with, the hand, the time); ``eliminated`` (the bust group, and the place,
    tie and prize once the field is known); ``finished`` (the winner);
    ``paid`` (every place and prize); a ``cancelled`` paying by chip count
    (the prizes, the players left out)."""

    name = "poker_tournament_entry"
    model = TournamentEntry
    stream_prefixes = (TOURNAMENT_PREFIX,)
    event_types = frozenset({
        et.TOURNAMENT_REGISTERED, et.TOURNAMENT_UNREGISTERED, et.TOURNAMENT_CANCELLED, et.TOURNAMENT_STARTED,
        et.TOURNAMENT_LATE_SEATED, et.TOURNAMENT_BUSTED, et.TOURNAMENT_ELIMINATED, et.TOURNAMENT_FINISHED,
        et.TOURNAMENT_PAID,
    })  # fmt: skip
    key = ("tournament_id", "id")
    columns = (
        "player_id", "state", "buy_in", "fee", "place", "tied", "prize", "bust_group", "bust_stack", "bust_hand_id",
        "eliminated_at", "registered_at", "unregistered_at",
    )  # fmt: skip

    def __init__(self, *, entries: Iterable[TournamentEntry] = ()) -> None:
        """``entries``: the rows the service holds (kept current)."""
        self._rows: dict[int, TournamentEntry] = {entry.pk: entry for entry in entries}
        self._dirty: dict[int, set[str]] = {}

    def reset(self) -> None:
        super().reset()
        self._rows, self._dirty = {}, {}

    def _row(self, pk: int) -> TournamentEntry:
        if pk not in self._rows:
            self._rows[pk] = TournamentEntry.objects.get(pk=pk)
        return self._rows[pk]

    def _set(self, row: TournamentEntry, **values: Any) -> None:
        for name, value in values.items():
            setattr(row, name, value)
        self._dirty.setdefault(row.pk, set()).update(values)

    def _of_tournament(self, tournament_id: int, states: Iterable[str]) -> list[TournamentEntry]:
        self._flush()  # the query below sees this instance's changes
        wanted = set(states)
        found = TournamentEntry.objects.filter(tournament_id=tournament_id, state__in=wanted).order_by("pk")
        rows = [self._rows.setdefault(entry.pk, entry) for entry in found]
        return [row for row in rows if row.state in wanted]

    def _flush(self) -> None:
        for pk, fields in self._dirty.items():
            if fields:
                self._rows[pk].save(update_fields=sorted(fields))
        self._dirty = {}

    def apply_many(self, events: Sequence[RecordedEvent]) -> None:
        for event in events:
            self._apply(tournament_id_of(event), event.type, event.data)
        self._flush()

    def _apply(self, tournament_id: int, kind: str, data: Mapping[str, Any]) -> None:
        at = _moment(data.get("at"))
        if kind == et.TOURNAMENT_REGISTERED:
            pk = int(data["entry_id"])
            self._flush()  # an entry unregistered before is saved so (``tournament_one_active_entry``)
            if pk not in self._rows and not TournamentEntry.objects.filter(pk=pk).exists():
                entry = TournamentEntry(pk=pk, tournament_id=tournament_id, player_id=int(data["player_id"]),
                                        buy_in=data["buy_in"], fee=data["fee"], registered_at=_at(data))  # fmt: skip
                entry.save(force_insert=True)
                self._rows[pk] = entry
        elif kind == et.TOURNAMENT_UNREGISTERED:
            self._set(self._row(int(data["entry_id"])), state=EntryState.UNREGISTERED, unregistered_at=at)
        elif kind == et.TOURNAMENT_STARTED:
            for row in self._of_tournament(tournament_id, [EntryState.REGISTERED]):
                self._set(row, state=EntryState.PLAYING)
        elif kind == et.TOURNAMENT_LATE_SEATED:
            row = self._row(int(data["entry_id"]))
            if row.state == EntryState.REGISTERED:
                self._set(row, state=EntryState.PLAYING)
        elif kind == et.TOURNAMENT_BUSTED:
            for out in data["players"]:
                self._set(self._row(int(out["entry_id"])), state=EntryState.ELIMINATED,
                          bust_stack=out["stack_at_start"], bust_hand_id=out["hand_id"], eliminated_at=at)  # fmt: skip
        elif kind == et.TOURNAMENT_ELIMINATED:
            for out in data["players"]:
                row = self._row(int(out["entry_id"]))
                if row.state == EntryState.PLAYING:  # a log from before ``busted``: this is the bust
                    self._set(row, state=EntryState.ELIMINATED, bust_stack=out["stack_at_start"],
                              bust_hand_id=out["hand_id"], eliminated_at=at)  # fmt: skip
                self._set(row, bust_group=data["group"])
                if out["place"] is not None:  # the field is known: the place and its prize (paid at the finish)
                    self._set(row, place=out["place"], tied=out["tied"], prize=out.get("prize", row.prize))
        elif kind == et.TOURNAMENT_FINISHED:
            self._set(self._row(int(data["entry_id"])), state=EntryState.WINNER)
        elif kind == et.TOURNAMENT_PAID:
            for finish in data["standings"]:
                self._set(self._row(int(finish["entry_id"])), place=finish["place"], tied=finish["tied"],
                          prize=finish["prize"])  # fmt: skip
        elif "refunds" in data:  # cancelled, refunding every entry
            for refund in data["refunds"]:
                self._set(self._row(int(refund["entry_id"])), state=EntryState.UNREGISTERED, unregistered_at=at)
        else:  # cancelled while running, paying by chip count: the players left are out
            prizes = {int(row["entry_id"]): row["prize"] for row in data["paid"]}
            for row in self._of_tournament(tournament_id, _ACTIVE):
                self._set(row, prize=prizes.get(row.pk, 0))
                if row.state == EntryState.PLAYING:
                    self._set(row, state=EntryState.ELIMINATED, eliminated_at=at)
