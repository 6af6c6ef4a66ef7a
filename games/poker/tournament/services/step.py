"""The tournament's step between hands (docs/poker.md, "Tournaments: play").

A tournament table that finishes a hand does not deal the next one itself: it
waits (``WAITING``, ``games.poker.services.tournament_tables``) and the step,
``advance_tournament``, runs in its own transaction.

Lock order (issue #39, the tables played by several processes). The step
locks, in this order: 1. the tournament row, ``FOR NO KEY UPDATE``
(``lock_tournament``), and never in a stronger mode by any later statement (no
``FOR UPDATE`` of a query that joins it: ``lock_entries``); 2. the tables that
wait for it, in id order (the tables still playing a hand are read, not
locked: the step does not wait for their transactions); 3. the entries it
changes, ``FOR NO KEY UPDATE``, in id order; 4. a balancing move's
destinations, in id order, before a player is seated there (the one wait for
a hand in flight). A table's transaction locks its one table row first, and
the tournament row only in its commit's deferred foreign-key check (``FOR KEY
SHARE``, as PostgreSQL reported it in the deadlock below): that mode does not
conflict with ``FOR NO KEY UPDATE``, so a table's transaction never waits for
the step, and the step's wait for a destination ends. (The crossing, before:
the busts' entries were locked ``FOR UPDATE`` with the tournament row joined
for their default ordering, so the row was held ``FOR UPDATE`` while the step
waited for a destination whose transaction waited, at its commit, for the
tournament row: a deadlock.) Two steps run one after the
other. The step records the
busts of every waiting table, finishes the tournament when one player holds
every chip (``games.poker.tournament.services.finish``), changes the level when
the clock says so, turns hand-for-hand play on and off, applies the balancing
moves whose table is between hands, breaks tables, and lets the waiting tables
deal again (in hand-for-hand play, only once every table waits). It runs as
the ``games.poker.tournament_advance`` task (``schedule_tournament``) and from
the beat's sweep.

The lean path (issue #39; docs/poker.md, "Tournaments: play"): the step reads
what it needs once (``_read``: ``games.poker.store.step.read_step`` on
PostgreSQL, one round trip; ``read_step_orm`` elsewhere), decides in memory
(``_Step``), and commits its events once, with their ledger legs, except where
what follows reads a projection (the finish, a new level, a hand-for-hand
round's bust group).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import QuerySet

from games.cards.shuffle import RandomSource, SecureRandomSource
from games.poker import event_types as et
from games.poker.errors import TournamentNotFound
from games.poker.models import PokerHandPlayer, PokerSeat, PokerTable
from games.poker.services.tables import BETWEEN, IDLE, WAITING, iso, seat_account, set_table
from games.poker.store import act as store_act
from games.poker.store import step as store
from games.poker.store.step import StepRead
from games.poker.tournament.clock import level_now, next_level_at, schedule_tournament
from games.poker.tournament.models import EntryState, Tournament, TournamentEntry, TournamentState
from games.poker.tournament.rules.balancing import Move, TableSnapshot, hand_for_hand, rebalance
from games.poker.tournament.rules.eliminations import Bust, rank_bust
from games.poker.tournament.services.core import ACTIVE, SYSTEM, lock_tournament, registration_open
from games.poker.tournament.services.finish import collected_pool, current_payouts, finish_tournament, paid_places
from games.poker.tournament.services.stream import Batch, commit_batch
from ledger.currencies import CHIPS


@dataclass(frozen=True)
class StepResult:
    tournament_id: int
    state: str
    players_left: int
    busted: int
    moves: int
    released: int
    level: int | None


@dataclass
class _Step:
    """What one step read (``StepRead``) and what it has decided so far, in memory:
    the events wait in ``batch`` and are committed (and projected) only where what
    comes next reads their projection (the finish, the hand-for-hand round's bust
    group, a new level) and once at the end, so that a step commits once in the
    common case instead of once per bust group and per move."""

    tournament: Tournament
    tables: list[PokerTable]  # every open table, by id
    waiting: list[PokerTable]  # the tables waiting for the step, locked, by id
    seated: dict[int, dict[int, PokerSeat]]  # table id -> seat number -> seat, as the step leaves it so far
    held: list[PokerSeat]  # the seat rows read at the waiting tables (the projectors' to change)
    busts: dict[int, TournamentEntry]  # player id -> entry still playing with no chips at a waiting table, locked
    starts: dict[tuple[int, int], int]  # (table, player) -> the stack the table's current hand started with
    collected: int  # the pool so far: the buy-ins of the entries that count
    batch: Batch
    players_left: int  # ``tournament.players_left`` with the batch's events applied
    bust_groups: int  # ``tournament.bust_groups`` with the batch's events applied

    @classmethod
    def of(cls, read: StepRead) -> _Step:
        assert read.tournament is not None
        seated: dict[int, dict[int, PokerSeat]] = {table.pk: {} for table in read.tables}
        for seat in read.seats:
            seated.setdefault(seat.table_id, {})[seat.seat_number] = seat
        waiting_ids = {table.pk for table in read.waiting}
        return cls(
            tournament=read.tournament, tables=read.tables, waiting=read.waiting, seated=seated,
            held=[seat for seat in read.seats if seat.table_id in waiting_ids],
            busts={entry.player_id: entry for entry in read.busts}, starts=read.starts, collected=read.collected,
            batch=Batch(CHIPS), players_left=read.tournament.players_left, bust_groups=read.tournament.bust_groups,
        )  # fmt: skip

    def commit(self, now: datetime, entries: Sequence[TournamentEntry] = ()) -> None:
        """The batch's events appended and projected (the tournament row, ``entries``
        and the seats held kept current)."""
        commit_batch(self.tournament, self.batch, actor=SYSTEM, now=now, entries=entries, seats=self.held)
        # The rows the projectors deleted (``Model.delete`` empties their pk) are held no more:
        # a later commit's projectors would take them for live sittings.
        self.held = [seat for seat in self.held if seat.pk is not None]


def _from_button(seat_number: int, button: int | None, max_seats: int) -> int:
    return (seat_number - (button or 0) - 1) % max_seats


def _bust_group(step: _Step, group: Sequence[tuple[TournamentEntry, int, str]], players_left_before: int,
                now: datetime) -> None:  # fmt: skip
    """Close one elimination group (``poker_tournament.eliminated``): its number,
    and its places and prizes when the field is known (registration closed;
    otherwise ``standings`` places them at the finish), ranked from the stacks
    the busted players started their last hand with. ``group``: (entry, that
    stack, that hand), in bust order."""
    tournament = step.tournament
    places = {}
    if not registration_open(tournament):
        by_place = current_payouts(tournament, collected=step.collected).by_place
        busts = [Bust(str(entry.pk), stack) for entry, stack, _ in group]
        places = {int(f.player): f for f in rank_bust(busts, players_left_before, by_place)}
    rows = []
    for entry, stack, hand_id in group:
        finish = places.get(entry.pk)
        place, tied, prize = (finish.place, finish.tied, finish.prize) if finish else (entry.place, entry.tied, None)
        rows.append({"entry_id": entry.pk, "player_id": entry.player_id, "stack_at_start": stack,
                     "hand_id": hand_id, "place": place, "tied": tied, "prize": prize})  # fmt: skip
    step.bust_groups += 1
    data = {"group": step.bust_groups, "players": rows, "players_left": players_left_before - len(group),
            "at": iso(now)}  # fmt: skip
    step.batch.event(et.TOURNAMENT_ELIMINATED, data)


def _record_busts(step: _Step, now: datetime) -> list[tuple[TournamentEntry, int, str]]:
    """The players of the waiting tables' last hands left with no chips: eliminated,
    their seats freed (``poker_tournament.busted``, applied by the projectors at the
    commit), in seat order from the button, table by table. Returns each with the
    stack they started that hand with and the hand."""
    busted: list[tuple[TournamentEntry, int, str]] = []
    rows: list[dict[str, Any]] = []
    for table in step.waiting:
        seats = step.seated[table.pk]
        empty = sorted((seat for seat in seats.values() if seat.stack == 0),
                       key=lambda s: _from_button(s.seat_number, table.button_seat, table.max_seats))  # fmt: skip
        for seat in empty:
            entry = step.busts[seat.player_id]
            stack = step.starts.get((table.pk, seat.player_id), 0)
            busted.append((entry, stack, table.current_hand_id))
            rows.append({"entry_id": entry.pk, "player_id": seat.player_id, "table_id": table.pk,
                         "seat": seat.seat_number, "hand_id": table.current_hand_id,
                         "stack_at_start": stack})  # fmt: skip
            del seats[seat.seat_number]
    if rows:
        step.players_left -= len(rows)
        step.batch.event(et.TOURNAMENT_BUSTED, {"players": rows, "players_left": step.players_left, "at": iso(now)})
    return busted


def _move(step: _Step, src: PokerTable, dst: PokerTable, player: int, to_seat: int, reason: str,
          now: datetime) -> None:  # fmt: skip
    """Move the player's seat (``poker_tournament.player_moved``, the projectors
    move the row at the commit) with their chips."""
    seats = step.seated[src.pk]
    seat = next(seat for seat in seats.values() if seat.player_id == player)
    moved = step.batch.event(et.TOURNAMENT_MOVED, {
        "player_id": player, "from_table": src.pk, "from_seat": seat.seat_number, "to_table": dst.pk,
        "to_seat": to_seat, "chips": seat.stack, "reason": reason, "at": iso(now),
    })  # fmt: skip
    step.batch.leg(
        seat_account(table_id=src.pk, player_id=player, currency=CHIPS),
        seat_account(table_id=dst.pk, player_id=player, currency=CHIPS),
        seat.stack, "tourney_move", moved,
    )  # fmt: skip
    del seats[seat.seat_number]
    # In memory only (the step's count of who is where): the projector creates the row.
    step.seated[dst.pk][to_seat] = PokerSeat(table_id=dst.pk, player_id=player, seat_number=to_seat, stack=seat.stack)


def _rebalance(step: _Step, waiting_ids: set[int], now: datetime, rng: RandomSource) -> int:
    """Apply the balancing plan's moves in order while they start from a table
    between hands (the rest wait for that table's hand to end); close the broken
    tables that are empty. Returns the moves applied."""
    tournament, tables = step.tournament, step.tables
    seats = {table.pk: {number: seat.player_id for number, seat in step.seated[table.pk].items()} for table in tables}
    snapshot = {table.pk: TableSnapshot(seats[table.pk], table.button_seat) for table in tables}
    replay = _Replay(rng)
    plan = rebalance(snapshot, tournament.table_seats, replay)
    by_id = {table.pk: table for table in tables}
    # A move to a table mid-hand seats its player by that table's button: that table is
    # locked now (its hand's transaction done), and the plan made again if its button moved.
    targets = sorted({move.to_table for move in _applicable(plan.moves, waiting_ids)} - waiting_ids)
    if targets:
        locked = _lock_tables(targets)
        if any(locked[pk].button_seat != by_id[pk].button_seat for pk in targets):
            for pk in targets:
                by_id[pk].button_seat = locked[pk].button_seat
                snapshot[pk] = TableSnapshot(seats[pk], locked[pk].button_seat)
            plan = rebalance(snapshot, tournament.table_seats, replay.again())
    applied = 0
    for move in _applicable(plan.moves, waiting_ids):
        _move(step, by_id[move.from_table], by_id[move.to_table], int(move.player), move.to_seat, move.reason, now)
        applied += 1
    for table_id in plan.broken:
        table = by_id[table_id]
        if table_id in waiting_ids and not step.seated[table_id]:
            table.is_open = False
            set_table(table, phase=IDLE, deadline=None, is_open=False)
            step.batch.event(et.TOURNAMENT_TABLE_BROKEN, {"table_id": table_id, "at": iso(now)})
    open_tables = [t for t in tables if t.is_open]
    if len(open_tables) == 1 and tournament.final_table_id is None and step.players_left > 1:
        step.batch.event(et.TOURNAMENT_FINAL_TABLE, {"table_id": open_tables[0].pk, "players": step.players_left,
                                                     "at": iso(now)})  # fmt: skip
    return applied


def _applicable(moves: Sequence[Move], ready_ids: set[int]) -> list[Move]:
    """The plan's moves applied now: in order, while they start from a table between hands."""
    applied = []
    for move in moves:
        if move.from_table not in ready_ids:
            break
        applied.append(move)
    return applied


class _Replay:
    """The step's random source for the balancing plan, recording what it drew so that
    the plan made again (``again``) draws the same: breaking a table, the only part of
    the plan that draws, reads no button, so both plans break the same tables the same
    way, and the source is drawn from once whatever happens."""

    def __init__(self, rng: RandomSource, drawn: list[int] | None = None) -> None:
        self.rng = rng
        self.drawn: list[int] = [] if drawn is None else drawn
        self.replaying = drawn is not None
        self.at = 0

    def randbelow(self, n: int) -> int:
        if self.replaying and self.at < len(self.drawn):
            value = self.drawn[self.at]
            self.at += 1
            return value
        value = self.rng.randbelow(n)
        self.drawn.append(value)
        self.at = len(self.drawn)
        return value

    def again(self) -> _Replay:
        return _Replay(self.rng, list(self.drawn))


def lock_entries(entries: QuerySet[TournamentEntry]) -> QuerySet[TournamentEntry]:
    """``entries`` locked ``FOR NO KEY UPDATE`` and nothing else: ``of=("self",)``, so
    that no row the query joins (the tournament's, joined by the entries' default
    ordering) is locked ``FOR UPDATE``. The step's lock order (module docstring)
    leaves the tournament row to a table transaction's foreign-key check."""
    return entries.select_for_update(no_key=True, of=("self",))


_WAITING_PHASES = (WAITING, IDLE)


def _read(tournament_id: int) -> StepRead:
    """The step's reads, in its lock order (module docstring): on PostgreSQL in one
    round trip (``games.poker.store.step.read_step``); elsewhere the same through
    the ORM. ``tournament_not_found``."""
    if connection.vendor == "postgresql":
        read = store.read_step(tournament_id=tournament_id, phases=_WAITING_PHASES, counted=ACTIVE)
        if read.tournament is None:
            raise TournamentNotFound(tournament_id=tournament_id)
        return read
    return read_step_orm(tournament_id)


def read_step_orm(tournament_id: int) -> StepRead:
    """``read_step`` through the ORM (SQLite's path; PostgreSQL's tests compare the
    two): the same rows, read and locked in the same order, in several round trips."""
    tournament = lock_tournament(tournament_id)
    tables = list(PokerTable.objects.filter(tournament=tournament, is_open=True).order_by("pk"))
    waiting = list(
        PokerTable.objects.select_for_update()
        .filter(tournament=tournament, is_open=True, phase__in=_WAITING_PHASES)
        .order_by("pk")
    )
    locked = {table.pk: table for table in waiting}
    seats = list(PokerSeat.objects.filter(table_id__in=[table.pk for table in tables]))
    empty = [(seat.table_id, seat.player_id) for seat in seats if seat.table_id in locked and seat.stack == 0]
    busts = lock_entries(
        TournamentEntry.objects.filter(
            tournament=tournament, state=EntryState.PLAYING, player_id__in=[player for _, player in empty]
        ).order_by("pk")
    )
    hands = {locked[table_id].current_hand_id: table_id for table_id, _ in empty if locked[table_id].current_hand_id}
    out = set(empty)
    starts = {
        (hands[hand_id], player_id): stack
        for hand_id, player_id, stack in PokerHandPlayer.objects.filter(
            hand__hand_id__in=list(hands), player_id__in=[player for _, player in empty]
        ).values_list("hand__hand_id", "player_id", "stack_before")
        if (hands[hand_id], player_id) in out
    }
    return StepRead(tournament, [locked.get(table.pk, table) for table in tables], waiting, seats, list(busts),
                    starts, collected_pool(tournament))  # fmt: skip


def _lock_tables(table_ids: Sequence[int]) -> dict[int, PokerTable]:
    """The tables ``table_ids`` locked ``FOR UPDATE``, in id order (a balancing move's destinations)."""
    if connection.vendor == "postgresql":
        return {table.pk: table for table in store.lock_tables(table_ids=table_ids)}
    return {table.pk: table for table in PokerTable.objects.select_for_update().filter(pk__in=table_ids)
            .order_by("pk")}  # fmt: skip


def _lock_all(tournament: Tournament) -> list[PokerTable]:
    """Every open table locked, in id order."""
    return list(PokerTable.objects.select_for_update().filter(tournament=tournament, is_open=True).order_by("pk"))


def advance_tournament(*, tournament_id: int, now: datetime, rng: RandomSource | None = None) -> StepResult | None:
    """The tournament's step (see the module docstring); ``None`` when it is not
    running. Idempotent: a step with nothing waiting changes nothing but the level."""
    rng = rng or SecureRandomSource()
    with transaction.atomic():
        read = _read(tournament_id)
        step = _Step.of(read)
        tournament = step.tournament
        if tournament.state != TournamentState.RUNNING:
            return None
        busted = _record_busts(step, now)
        all_ready = len(step.waiting) == len(step.tables)
        if tournament.hand_for_hand and not all_ready:
            # Mid-round: the busts wait for the round's end (one group); nothing else moves.
            step.commit(now, [entry for entry, _, _ in busted])
            return StepResult(tournament.pk, tournament.state, tournament.players_left, len(busted), 0, 0,
                              tournament.current_level)  # fmt: skip
        if tournament.hand_for_hand:
            # The round is over: everyone busted in it is one group (read once the busts are projected).
            step.commit(now, [entry for entry, _, _ in busted])
            pending = list(
                lock_entries(
                    TournamentEntry.objects.filter(
                        tournament=tournament, state=EntryState.ELIMINATED, bust_group=None
                    ).order_by("eliminated_at", "id")
                )
            )
            if pending:  # counted out of the players left by their ``busted`` already
                group = [(entry, int(entry.bust_stack or 0), entry.bust_hand_id) for entry in pending]
                _bust_group(step, group, step.players_left + len(pending), now)
                step.commit(now, pending)
        else:
            by_hand: dict[str, list[tuple[TournamentEntry, int, str]]] = {}
            for bust in busted:
                by_hand.setdefault(bust[2], []).append(bust)
            left = step.players_left + len(busted)  # each group is counted out from the players before it
            for group in by_hand.values():
                _bust_group(step, group, left, now)
                left -= len(group)
        if step.players_left <= 1:
            step.commit(now, [entry for entry, _, _ in busted])
            finish_tournament(tournament, _lock_all(tournament), now)  # the finish closes every open table
            return StepResult(tournament.pk, tournament.state, tournament.players_left, len(busted), 0, 0, None)
        number, _ = level_now(tournament, now)
        if number != tournament.current_level:
            level = tournament.schedule().level(number)
            blinds = {"small_blind": level.small_blind, "big_blind": level.big_blind, "ante": level.ante}
            step.batch.event(et.TOURNAMENT_LEVEL, {"level": number, **blinds, "at": iso(now)})
            step.commit(now, [entry for entry, _, _ in busted])  # the level in force: the projector's
            at = next_level_at(tournament, now)
            if at is not None:
                schedule_tournament(tournament.pk, at=at)
        waiting_ids = {table.pk for table in step.waiting}
        moves = _rebalance(step, waiting_ids, now, rng)
        open_tables = [table for table in step.tables if table.is_open]
        h4h = False
        if not registration_open(tournament):
            h4h = hand_for_hand(step.players_left, paid_places(tournament, collected=step.collected),
                                len(open_tables), tournament.hand_for_hand_margin)  # fmt: skip
        if h4h != tournament.hand_for_hand:
            step.batch.event(et.TOURNAMENT_HAND_FOR_HAND, {"on": h4h, "players_left": step.players_left,
                                                           "at": iso(now)})  # fmt: skip
        step.commit(now, [entry for entry, _, _ in busted])  # the busts, groups, moves and flags: the projectors'
        released = 0
        if not h4h or all_ready:  # hand-for-hand: the next round starts at every table together
            if h4h:  # pacing state, not a projection: written here
                tournament.hand_for_hand_round += 1
                tournament.save(update_fields=["hand_for_hand_round", "updated_at"])
            with store_act.deferred_writes():  # the released tables' phases in one round trip
                for table in open_tables:
                    if table.pk in waiting_ids:
                        with_chips = sum(1 for seat in step.seated[table.pk].values() if seat.stack > 0)
                        released += _release(table, tournament, now, with_chips)
        return StepResult(tournament.pk, tournament.state, tournament.players_left, len(busted), moves, released,
                          tournament.current_level)  # fmt: skip


def _release(table: PokerTable, tournament: Tournament, now: datetime, players: int) -> int:
    """A ready table with ``players`` with chips deals again after the pause between
    hands (two players or more); else it idles."""
    if players >= 2:
        set_table(table, phase=BETWEEN, deadline=now + timedelta(seconds=tournament.between_hands_seconds))
        return 1
    if table.phase != IDLE:
        set_table(table, phase=IDLE, deadline=None)
    return 0
