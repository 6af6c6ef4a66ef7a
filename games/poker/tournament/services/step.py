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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Count, QuerySet

from games.cards.shuffle import RandomSource, SecureRandomSource
from games.poker import event_types as et
from games.poker.models import PokerHandPlayer, PokerSeat, PokerTable
from games.poker.services.tables import BETWEEN, IDLE, WAITING, iso, seat_account, set_table
from games.poker.tournament.clock import level_now, next_level_at, schedule_tournament
from games.poker.tournament.models import EntryState, Tournament, TournamentEntry, TournamentState
from games.poker.tournament.rules.balancing import Move, TableSnapshot, hand_for_hand, rebalance
from games.poker.tournament.rules.eliminations import Bust, rank_bust
from games.poker.tournament.services.core import SYSTEM, lock_tournament, registration_open
from games.poker.tournament.services.finish import current_payouts, finish_tournament, paid_places
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


def _from_button(seat_number: int, button: int | None, max_seats: int) -> int:
    return (seat_number - (button or 0) - 1) % max_seats


def _bust_group(tournament: Tournament, entries: Sequence[TournamentEntry], players_left_before: int,
                now: datetime) -> None:  # fmt: skip
    """Close one elimination group (``poker_tournament.eliminated``): its number,
    and its places and prizes when the field is known (registration closed;
    otherwise ``standings`` places them at the finish), ranked from the
    entries' projected busts (``bust_stack``)."""
    group = [Bust(str(entry.pk), int(entry.bust_stack or 0)) for entry in entries]
    places = {}
    if not registration_open(tournament):
        by_place = current_payouts(tournament).by_place
        places = {int(f.player): f for f in rank_bust(group, players_left_before, by_place)}
    rows = []
    for entry in entries:
        finish = places.get(entry.pk)
        place, tied, prize = (finish.place, finish.tied, finish.prize) if finish else (entry.place, entry.tied, None)
        rows.append({"entry_id": entry.pk, "player_id": entry.player_id, "stack_at_start": entry.bust_stack,
                     "hand_id": entry.bust_hand_id, "place": place, "tied": tied, "prize": prize})  # fmt: skip
    left = players_left_before - len(entries)
    data = {"group": tournament.bust_groups + 1, "players": rows, "players_left": left, "at": iso(now)}
    batch = Batch(CHIPS)
    batch.event(et.TOURNAMENT_ELIMINATED, data)
    commit_batch(tournament, batch, actor=SYSTEM, now=now, entries=entries)


def _record_busts(tournament: Tournament, ready: Sequence[PokerTable], now: datetime) -> list[TournamentEntry]:
    """The players of the ready tables' last hands left with no chips: eliminated,
    their seats freed (``poker_tournament.busted``, applied by the projectors),
    in seat order from the button. Returns them by table. (One query finds the
    empty seats of every ready table: a step runs after every hand.)"""
    busted: list[TournamentEntry] = []
    rows: list[dict[str, Any]] = []
    empty_at: dict[int, list[PokerSeat]] = {}
    for seat in PokerSeat.objects.filter(table_id__in=[table.pk for table in ready], stack=0):
        empty_at.setdefault(seat.table_id, []).append(seat)
    for table in ready:
        empty = empty_at.get(table.pk)
        if not empty:
            continue
        empty.sort(key=lambda s: _from_button(s.seat_number, table.button_seat, table.max_seats))
        starts = dict(
            PokerHandPlayer.objects.filter(hand__hand_id=table.current_hand_id).values_list("player_id", "stack_before")
        )
        entries = {
            e.player_id: e
            for e in lock_entries(
                TournamentEntry.objects.filter(
                    tournament=tournament, state=EntryState.PLAYING, player_id__in=[s.player_id for s in empty]
                ).order_by("pk")
            )
        }
        for seat in empty:
            entry = entries[seat.player_id]
            busted.append(entry)
            rows.append({"entry_id": entry.pk, "player_id": seat.player_id, "table_id": table.pk,
                         "seat": seat.seat_number, "hand_id": table.current_hand_id,
                         "stack_at_start": starts.get(seat.player_id, 0)})  # fmt: skip
    if rows:
        batch = Batch(CHIPS)
        batch.event(et.TOURNAMENT_BUSTED, {"players": rows, "players_left": tournament.players_left - len(rows),
                                           "at": iso(now)})  # fmt: skip
        commit_batch(tournament, batch, actor=SYSTEM, now=now, entries=busted)
    return busted


def _move(tournament: Tournament, src: PokerTable, dst: PokerTable, player: int, to_seat: int, reason: str,
          now: datetime, batch: Batch) -> None:  # fmt: skip
    """Move the player's seat (``poker_tournament.player_moved``, the projectors
    move the row) with their chips."""
    seat = PokerSeat.objects.get(table=src, player_id=player)
    moved = batch.event(et.TOURNAMENT_MOVED, {
        "player_id": player, "from_table": src.pk, "from_seat": seat.seat_number, "to_table": dst.pk,
        "to_seat": to_seat, "chips": seat.stack, "reason": reason, "at": iso(now),
    })  # fmt: skip
    batch.leg(
        seat_account(table_id=src.pk, player_id=player, currency=CHIPS),
        seat_account(table_id=dst.pk, player_id=player, currency=CHIPS),
        seat.stack, "tourney_move", moved,
    )  # fmt: skip
    commit_batch(tournament, batch, actor=SYSTEM, now=now)


def _rebalance(tournament: Tournament, tables: list[PokerTable], ready_ids: set[int], now: datetime,
               rng: RandomSource, batch: Batch) -> int:  # fmt: skip
    """Apply the balancing plan's moves in order while they start from a table
    between hands (the rest wait for that table's hand to end); close the broken
    tables that are empty. Returns the moves applied."""
    seats: dict[int, dict[int, int]] = {table.pk: {} for table in tables}
    for table_id, seat_number, player_id in PokerSeat.objects.filter(table_id__in=list(seats)).values_list(
        "table_id", "seat_number", "player_id"
    ):  # every table's seats in one query, not one per table
        seats[table_id][seat_number] = player_id
    snapshot = {table.pk: TableSnapshot(seats[table.pk], table.button_seat) for table in tables}
    replay = _Replay(rng)
    plan = rebalance(snapshot, tournament.table_seats, replay)
    by_id = {table.pk: table for table in tables}
    # A move to a table mid-hand seats its player by that table's button: that table is
    # locked now (its hand's transaction done), and the plan made again if its button moved.
    targets = sorted({move.to_table for move in _applicable(plan.moves, ready_ids)} - ready_ids)
    if targets:
        locked = {table.pk: table for table in PokerTable.objects.select_for_update().filter(pk__in=targets)
                  .order_by("pk")}  # fmt: skip
        if any(locked[pk].button_seat != by_id[pk].button_seat for pk in targets):
            for pk in targets:
                by_id[pk].button_seat = locked[pk].button_seat
                snapshot[pk] = TableSnapshot(seats[pk], locked[pk].button_seat)
            plan = rebalance(snapshot, tournament.table_seats, replay.again())
    applied = 0
    for move in _applicable(plan.moves, ready_ids):
        _move(tournament, by_id[move.from_table], by_id[move.to_table], int(move.player), move.to_seat, move.reason,
              now, batch)  # fmt: skip
        applied += 1
    for table_id in plan.broken:
        table = by_id[table_id]
        if table_id in ready_ids and not table.seats.exists():
            table.is_open = False
            set_table(table, phase=IDLE, deadline=None, is_open=False)
            batch.event(et.TOURNAMENT_TABLE_BROKEN, {"table_id": table_id, "at": iso(now)})
    open_tables = [t for t in tables if t.is_open]
    if len(open_tables) == 1 and tournament.final_table_id is None and tournament.players_left > 1:
        batch.event(et.TOURNAMENT_FINAL_TABLE, {"table_id": open_tables[0].pk, "players": tournament.players_left,
                                                "at": iso(now)})  # fmt: skip
    commit_batch(tournament, batch, actor=SYSTEM, now=now)  # the final table: the projector's
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


def _lock_ready(tournament: Tournament) -> tuple[list[PokerTable], list[PokerTable]]:
    """(every open table, the ready ones): the tables waiting for the step (``WAITING``,
    ``IDLE``) locked, in id order; the others read, not locked, so the step does not
    wait for their hands' transactions (issue #39: the tables played by several
    processes). Which tables are open and what seats they have changes only in a
    step (under the tournament's row lock), and a ready table deals again only once a
    step releases it: what the step reads of the others is what it needs of them (a
    move's destination is locked before its player is seated, ``_rebalance``)."""
    tables = list(PokerTable.objects.filter(tournament=tournament, is_open=True).order_by("pk"))
    ready = list(
        PokerTable.objects.select_for_update()
        .filter(tournament=tournament, is_open=True, phase__in=(WAITING, IDLE))
        .order_by("pk")
    )
    locked = {table.pk: table for table in ready}
    return [locked.get(table.pk, table) for table in tables], ready


def _lock_all(tournament: Tournament) -> list[PokerTable]:
    """Every open table locked, in id order."""
    return list(PokerTable.objects.select_for_update().filter(tournament=tournament, is_open=True).order_by("pk"))


def advance_tournament(*, tournament_id: int, now: datetime, rng: RandomSource | None = None) -> StepResult | None:
    """The tournament's step (see the module docstring); ``None`` when it is not
    running. Idempotent: a step with nothing waiting changes nothing but the level."""
    rng = rng or SecureRandomSource()
    with transaction.atomic():
        tournament = lock_tournament(tournament_id)
        if tournament.state != TournamentState.RUNNING:
            return None
        tables, ready = _lock_ready(tournament)
        batch = Batch(CHIPS)
        left_before = tournament.players_left
        busted = _record_busts(tournament, ready, now)  # the players left: the projector's
        all_ready = len(ready) == len(tables)
        if tournament.hand_for_hand and not all_ready:
            # Mid-round: the busts wait for the round's end (one group); nothing else moves.
            return StepResult(tournament.pk, tournament.state, tournament.players_left, len(busted), 0, 0,
                              tournament.current_level)  # fmt: skip
        if tournament.hand_for_hand:
            # The round is over: everyone busted in it is one group.
            pending = list(
                lock_entries(
                    TournamentEntry.objects.filter(
                        tournament=tournament, state=EntryState.ELIMINATED, bust_group=None
                    ).order_by("eliminated_at", "id")
                )
            )
            if pending:
                _bust_group(tournament, pending, tournament.players_left + len(pending), now)
        else:
            by_hand: dict[str, list[TournamentEntry]] = {}
            for entry in busted:
                by_hand.setdefault(entry.bust_hand_id, []).append(entry)
            left = left_before
            for group in by_hand.values():
                _bust_group(tournament, group, left, now)
                left -= len(group)
        if tournament.players_left <= 1:
            tables = _lock_all(tournament)  # the finish closes every open table
            finish_tournament(tournament, tables, now)
            return StepResult(tournament.pk, tournament.state, tournament.players_left, len(busted), 0, 0, None)
        number, _ = level_now(tournament, now)
        if number != tournament.current_level:
            level = tournament.schedule().level(number)
            blinds = {"small_blind": level.small_blind, "big_blind": level.big_blind, "ante": level.ante}
            batch.event(et.TOURNAMENT_LEVEL, {"level": number, **blinds, "at": iso(now)})
            commit_batch(tournament, batch, actor=SYSTEM, now=now)  # the level in force: the projector's
            at = next_level_at(tournament, now)
            if at is not None:
                schedule_tournament(tournament.pk, at=at)
        ready_ids = {table.pk for table in ready}
        moves = _rebalance(tournament, tables, ready_ids, now, rng, batch)
        open_tables = [table for table in tables if table.is_open]
        h4h = False
        if not registration_open(tournament):
            h4h = hand_for_hand(tournament.players_left, paid_places(tournament), len(open_tables),
                                tournament.hand_for_hand_margin)  # fmt: skip
        if h4h != tournament.hand_for_hand:
            batch.event(et.TOURNAMENT_HAND_FOR_HAND, {"on": h4h, "players_left": tournament.players_left,
                                                      "at": iso(now)})  # fmt: skip
            commit_batch(tournament, batch, actor=SYSTEM, now=now)  # the flag: the projector's
        released = 0
        if not h4h or all_ready:  # hand-for-hand: the next round starts at every table together
            if h4h:  # pacing state, not a projection: written here
                tournament.hand_for_hand_round += 1
                tournament.save(update_fields=["hand_for_hand_round", "updated_at"])
            dealt = _players_with_chips([table.pk for table in open_tables if table.pk in ready_ids])
            for table in open_tables:
                if table.pk in ready_ids:
                    released += _release(table, tournament, now, dealt.get(table.pk, 0))
        return StepResult(tournament.pk, tournament.state, tournament.players_left, len(busted), moves, released,
                          tournament.current_level)  # fmt: skip


def _players_with_chips(table_ids: Sequence[int]) -> dict[int, int]:
    """The seats with chips at each of ``table_ids`` (one query)."""
    rows = (
        PokerSeat.objects.filter(table_id__in=table_ids, stack__gt=0)
        .values_list("table_id")
        .annotate(players=Count("id"))
        .order_by()
    )
    return dict(rows)


def _release(table: PokerTable, tournament: Tournament, now: datetime, players: int) -> int:
    """A ready table with ``players`` with chips deals again after the pause between
    hands (two players or more); else it idles."""
    if players >= 2:
        set_table(table, phase=BETWEEN, deadline=now + timedelta(seconds=tournament.between_hands_seconds))
        return 1
    if table.phase != IDLE:
        set_table(table, phase=IDLE, deadline=None)
    return 0
