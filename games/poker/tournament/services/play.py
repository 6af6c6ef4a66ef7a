"""Tournament play (docs/poker.md, "Tournaments: play"): the start, the tables,
the level clock, eliminations, balancing, hand-for-hand, the finish and the
payouts, pause and resume.

The tables of a tournament are ``PokerTable`` rows with ``tournament`` set,
played by the ring game's own hand services (``games.poker.services.hands``):
the same engine, the same events, the same ledger legs, in the tournament
chip unit (``ledger.currencies.CHIPS``): the tournament's chip bank
(``tournament_chips``) issues every entry's starting chips to their seat, chips
move from seat to seat when a player changes table, and the winner's chips go
back to the bank, which ends at zero. Money moves only at registration, at
the finish (the prize pool, with the house's overlay for a guarantee, to the
winners' wallets) and at a cancel.

A table that finishes a hand does not deal the next one itself: it waits
(``WAITING``) and the tournament's step (``advance_tournament``) runs in its
own transaction, which locks the tournament row and then the tables it
touches, in id order. Table transactions never lock the tournament row, so
the two orders never cross. The step records the busts of every waiting
table, finishes the tournament when one player holds every chip, changes the
level when the clock says so, turns hand-for-hand play on and off, applies
the balancing moves whose table is between hands, breaks tables, and lets
the waiting tables deal again (in hand-for-hand play, only once every table
waits).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction

from casino.audit import operator_actor, record_operator_action
from casino.errors import required_reason
from games.cards.shuffle import RandomSource, SecureRandomSource
from games.poker import event_types as et
from games.poker.errors import TournamentNotPaused, TournamentNotRunning
from games.poker.models import PokerHandPlayer, PokerSeat, PokerTable, PokerVariant, RakeMode
from games.poker.projectors import project_tournament
from games.poker.services.operator import pause_hand, resume_hand, void_hand
from games.poker.services.tables import (
    BETWEEN,
    HAND,
    IDLE,
    PAUSED,
    WAITING,
    current_hand,
    iso,
    seat_account,
    set_table,
)
from games.poker.tournament.clock import clock_seconds, level_now, next_level_at, schedule_tournament
from games.poker.tournament.models import CancelPolicy, EntryState, Tournament, TournamentEntry, TournamentState
from games.poker.tournament.rules.balancing import TableSnapshot, hand_for_hand, rebalance, seat_for_newcomer
from games.poker.tournament.rules.eliminations import Bust, rank_bust, standings
from games.poker.tournament.rules.levels import Level
from games.poker.tournament.rules.payouts import Payouts, split_by_weights
from games.poker.tournament.rules.seating import draw_seating
from games.poker.tournament.services.core import (
    ACTIVE,
    fee_account,
    lock_tournament,
    pool_account,
    registration_open,
    tournament_owner,
)
from ledger.currencies import CHIPS
from ledger.models import AccountKind
from ledger.services import (
    EventRef,
    NewEvent,
    StreamAppend,
    TransferSpec,
    balance_of,
    ensure_account,
    player_accounts,
    settle_batch,
)
from ledger.services.events import stream_head
from ledger.services.projectors import events_of

SYSTEM = "system"
# A tournament seat is never freed for absence (seed 001: "unlimited time to re-join").
NEVER_FREED_SECONDS = 2**31 - 1


# --- accounts and the tournament stream -------------------------------------------------------------


def chip_bank(*, tournament_id: int) -> int:
    """The tournament's chip bank (``tournament_chips``, unit ``CHIPS``): minus the chips in play."""
    return ensure_account(kind=AccountKind.TOURNAMENT_CHIPS, owner=tournament_owner(tournament_id), currency=CHIPS)


def overlay_account(*, tournament_id: int, currency: str) -> int:
    """The house's account that covers a guarantee's overlay (``house``, may go negative)."""
    return ensure_account(kind=AccountKind.HOUSE, owner=tournament_owner(tournament_id), currency=currency)


@dataclass
class _Batch:
    """Tournament events and the ledger legs they cause, in one unit (chips or one currency)."""

    unit: str
    events: list[NewEvent] = field(default_factory=list)
    legs: list[tuple[int, int, int, str, int]] = field(default_factory=list)  # debit, credit, amount, kind, event

    def event(self, event_type: str, data: dict[str, Any]) -> int:
        self.events.append(NewEvent(event_type, data))
        return len(self.events) - 1

    def leg(self, debit: int, credit: int, amount: int, kind: str, event: int) -> None:
        if amount > 0:
            self.legs.append((debit, credit, amount, kind, event))


def _commit(
    tournament: Tournament,
    batch: _Batch,
    *,
    key: str | None = None,
    actor: str,
    now: datetime,
    entries: Iterable[TournamentEntry] = (),
) -> None:
    """Append the batch's events to ``poker-tournament-{id}`` and make its transfers,
    all or nothing, then apply the events with the projectors (the tournament,
    its entries and seats: ``entries`` and ``tournament`` are the rows held, kept
    current); the batch is empty again. ``key``: the idempotency key (default:
    the stream's version). Call with the tournament row locked (that serialises
    the stream)."""
    if not batch.events:
        return
    stream = et.tournament_stream(tournament.pk)
    with connection.cursor() as cursor:
        version, head = stream_head(cursor, stream)
    metadata = {"actor": actor}
    settle_batch(
        idempotency_key=key or f"poker:tournament:{tournament.pk}:at:{version}",
        currency=batch.unit,
        appends=[StreamAppend(stream, version, batch.events, metadata, head_hash=head if version else None)],
        transfers=[
            TransferSpec(debit, credit, amount, EventRef(stream, version + 1 + index), kind)
            for debit, credit, amount, kind, index in batch.legs
        ],
    )
    recorded = events_of(stream_id=stream, first_version=version + 1, events=batch.events, metadata=metadata, at=now)
    batch.events, batch.legs = [], []
    project_tournament(recorded, tournament=tournament, entries=entries)


# --- the start ------------------------------------------------------------------------------------


def _table_code(tournament: Tournament, number: int) -> str:
    return f"T{tournament.pk}-{number}"


def _open_table(tournament: Tournament, number: int, level: Level) -> PokerTable:
    return PokerTable.objects.create(
        code=_table_code(tournament, number), name=f"{tournament.name[:60]} table {number}",
        variant=PokerVariant.NO_LIMIT, max_seats=tournament.table_seats, currency=CHIPS,
        small_blind=level.small_blind, big_blind=level.big_blind, ante=level.ante,
        buy_in_min=tournament.starting_chips, buy_in_max=tournament.starting_chips,
        turn_seconds=tournament.turn_seconds, time_bank_seconds=tournament.time_bank_seconds,
        disconnection_bank_seconds=0, reservation_seconds=NEVER_FREED_SECONDS,
        between_hands_seconds=tournament.between_hands_seconds, rake_mode=RakeMode.NONE,
        is_open=True, tournament=tournament, table_number=number,
    )  # fmt: skip


def start_tournament(tournament: Tournament, *, now: datetime, rng: RandomSource | None = None) -> None:
    """Start (the tournament locked, registering, two or more entries): seats drawn
    at random round the fewest tables, every entry's starting chips issued from
    the chip bank to their seat (``poker_tournament.started``), the level clock
    started at level 1, every table dealing after the pause between hands."""
    rng = rng or SecureRandomSource()
    entries = list(
        TournamentEntry.objects.select_for_update()
        .filter(tournament=tournament, state=EntryState.REGISTERED)
        .order_by("registered_at", "id")
    )
    by_player = {entry.player_id: entry for entry in entries}
    seating = draw_seating(list(by_player), tournament.table_seats, rng)
    level = tournament.schedule().level(1)
    bank = chip_bank(tournament_id=tournament.pk)
    batch = _Batch(CHIPS)
    tables: dict[int, PokerTable] = {}
    for number in seating:
        tables[number] = _open_table(tournament, number, level)
    started = batch.event(et.TOURNAMENT_STARTED, {
        "at": iso(now), "entrants": len(entries), "starting_chips": tournament.starting_chips, "level": 1,
        "tables": {str(tables[n].pk): {str(s): int(p) for s, p in seated.items()} for n, seated in seating.items()},
    })  # fmt: skip
    for number, seated in seating.items():
        for player in seated.values():
            account = seat_account(table_id=tables[number].pk, player_id=int(player), currency=CHIPS)
            batch.leg(bank, account, tournament.starting_chips, "tourney_chips", started)
    # The seats, the entries playing, the tournament running and its clock: the projectors'.
    _commit(tournament, batch, key=f"poker:tournament:{tournament.pk}:start", actor=SYSTEM, now=now, entries=entries)
    for table in tables.values():
        set_table(table, phase=BETWEEN, deadline=now + timedelta(seconds=tournament.between_hands_seconds))
    at = next_level_at(tournament, now)
    if at is not None:
        schedule_tournament(tournament.pk, at=at)


def seat_late_entry(tournament: Tournament, entry: TournamentEntry, *, now: datetime) -> int:
    """A late registration (the tournament locked, running): the player takes the
    seat where they post the big blind soonest at the table with the fewest
    players (a new table when every seat is taken), with the starting chips.
    Returns the table id."""
    tables = list(PokerTable.objects.select_for_update().filter(tournament=tournament, is_open=True).order_by("pk"))
    occupied = {table.pk: set(table.seats.values_list("seat_number", flat=True)) for table in tables}
    free = [table for table in tables if len(occupied[table.pk]) < table.max_seats]
    if free:
        table = min(free, key=lambda t: (len(occupied[t.pk]), t.pk))
        seat_number = seat_for_newcomer(occupied[table.pk], table.button_seat, table.max_seats)
    else:
        number = 1 + max((t.table_number or 0 for t in PokerTable.objects.filter(tournament=tournament)), default=0)
        table = _open_table(tournament, number, level_now(tournament, now)[1])
        seat_number = 1
    batch = _Batch(CHIPS)
    seated = batch.event(et.TOURNAMENT_LATE_SEATED, {
        "entry_id": entry.pk, "player_id": entry.player_id, "table_id": table.pk, "seat": seat_number,
        "chips": tournament.starting_chips, "entrants": tournament.entrants + 1,
        "players_left": tournament.players_left + 1, "at": iso(now),
    })  # fmt: skip
    account = seat_account(table_id=table.pk, player_id=entry.player_id, currency=CHIPS)
    batch.leg(chip_bank(tournament_id=tournament.pk), account, tournament.starting_chips, "tourney_chips", seated)
    # The seat, the entry playing and the counts: the projectors'.
    _commit(tournament, batch, key=f"poker:tournament:{tournament.pk}:late:{entry.pk}", actor=f"user:{entry.player_id}",
            now=now, entries=[entry])  # fmt: skip
    if table.phase == IDLE and table.seats.count() >= 2:
        set_table(table, phase=BETWEEN, deadline=now + timedelta(seconds=tournament.between_hands_seconds))
    return table.pk


# --- the step ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StepResult:
    tournament_id: int
    state: str
    players_left: int
    busted: int
    moves: int
    released: int
    level: int | None


def _payouts(tournament: Tournament) -> Payouts:
    """The payouts with the entrants so far: the pool collected is the buy-ins of the
    entries that count (what the pool account holds until the finish pays it out)."""
    collected = sum(
        TournamentEntry.objects.filter(tournament=tournament, state__in=ACTIVE).values_list("buy_in", flat=True)
    )
    return tournament.payout_structure().payouts(
        entrants=max(tournament.entrants, 1), collected=collected, guarantee=tournament.guarantee
    )


def paid_places(tournament: Tournament) -> int:
    return _payouts(tournament).paid_places


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
        by_place = _payouts(tournament).by_place
        places = {int(f.player): f for f in rank_bust(group, players_left_before, by_place)}
    rows = []
    for entry in entries:
        finish = places.get(entry.pk)
        place, tied, prize = (finish.place, finish.tied, finish.prize) if finish else (entry.place, entry.tied, None)
        rows.append({"entry_id": entry.pk, "player_id": entry.player_id, "stack_at_start": entry.bust_stack,
                     "hand_id": entry.bust_hand_id, "place": place, "tied": tied, "prize": prize})  # fmt: skip
    left = players_left_before - len(entries)
    data = {"group": tournament.bust_groups + 1, "players": rows, "players_left": left, "at": iso(now)}
    batch = _Batch(CHIPS)
    batch.event(et.TOURNAMENT_ELIMINATED, data)
    _commit(tournament, batch, actor=SYSTEM, now=now, entries=entries)


def _record_busts(tournament: Tournament, ready: Sequence[PokerTable], now: datetime) -> list[TournamentEntry]:
    """The players of the ready tables' last hands left with no chips: eliminated,
    their seats freed (``poker_tournament.busted``, applied by the projectors),
    in seat order from the button. Returns them by table."""
    busted: list[TournamentEntry] = []
    rows: list[dict[str, Any]] = []
    for table in ready:
        empty = list(table.seats.filter(stack=0))
        if not empty:
            continue
        empty.sort(key=lambda s: _from_button(s.seat_number, table.button_seat, table.max_seats))
        starts = dict(
            PokerHandPlayer.objects.filter(hand__hand_id=table.current_hand_id).values_list("player_id", "stack_before")
        )
        entries = {
            e.player_id: e
            for e in TournamentEntry.objects.select_for_update().filter(
                tournament=tournament, state=EntryState.PLAYING, player_id__in=[s.player_id for s in empty]
            )
        }
        for seat in empty:
            entry = entries[seat.player_id]
            busted.append(entry)
            rows.append({"entry_id": entry.pk, "player_id": seat.player_id, "table_id": table.pk,
                         "seat": seat.seat_number, "hand_id": table.current_hand_id,
                         "stack_at_start": starts.get(seat.player_id, 0)})  # fmt: skip
    if rows:
        batch = _Batch(CHIPS)
        batch.event(et.TOURNAMENT_BUSTED, {"players": rows, "players_left": tournament.players_left - len(rows),
                                           "at": iso(now)})  # fmt: skip
        _commit(tournament, batch, actor=SYSTEM, now=now, entries=busted)
    return busted


def _move(tournament: Tournament, src: PokerTable, dst: PokerTable, player: int, to_seat: int, reason: str,
          now: datetime, batch: _Batch) -> None:  # fmt: skip
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
    _commit(tournament, batch, actor=SYSTEM, now=now)


def _rebalance(tournament: Tournament, tables: list[PokerTable], ready_ids: set[int], now: datetime,
               rng: RandomSource, batch: _Batch) -> int:  # fmt: skip
    """Apply the balancing plan's moves in order while they start from a table
    between hands (the rest wait for that table's hand to end); close the broken
    tables that are empty. Returns the moves applied."""
    snapshot = {
        table.pk: TableSnapshot(dict(table.seats.values_list("seat_number", "player_id")), table.button_seat)
        for table in tables
    }
    plan = rebalance(snapshot, tournament.table_seats, rng)
    by_id = {table.pk: table for table in tables}
    applied = 0
    for move in plan.moves:
        if move.from_table not in ready_ids:
            break
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
    _commit(tournament, batch, actor=SYSTEM, now=now)  # the final table: the projector's
    return applied


def advance_tournament(*, tournament_id: int, now: datetime, rng: RandomSource | None = None) -> StepResult | None:
    """The tournament's step (see the module docstring); ``None`` when it is not
    running. Idempotent: a step with nothing waiting changes nothing but the level."""
    rng = rng or SecureRandomSource()
    with transaction.atomic():
        tournament = lock_tournament(tournament_id)
        if tournament.state != TournamentState.RUNNING:
            return None
        tables = list(PokerTable.objects.select_for_update().filter(tournament=tournament, is_open=True).order_by("pk"))
        ready = [table for table in tables if table.phase in (WAITING, IDLE)]
        batch = _Batch(CHIPS)
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
                TournamentEntry.objects.select_for_update()
                .filter(tournament=tournament, state=EntryState.ELIMINATED, bust_group=None)
                .order_by("eliminated_at", "id")
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
            _finish(tournament, tables, now)
            return StepResult(tournament.pk, tournament.state, tournament.players_left, len(busted), 0, 0, None)
        number, _ = level_now(tournament, now)
        if number != tournament.current_level:
            level = tournament.schedule().level(number)
            blinds = {"small_blind": level.small_blind, "big_blind": level.big_blind, "ante": level.ante}
            batch.event(et.TOURNAMENT_LEVEL, {"level": number, **blinds, "at": iso(now)})
            _commit(tournament, batch, actor=SYSTEM, now=now)  # the level in force: the projector's
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
            _commit(tournament, batch, actor=SYSTEM, now=now)  # the flag: the projector's
        released = 0
        if not h4h or all_ready:  # hand-for-hand: the next round starts at every table together
            if h4h:  # pacing state, not a projection: written here
                tournament.hand_for_hand_round += 1
                tournament.save(update_fields=["hand_for_hand_round", "updated_at"])
            for table in open_tables:
                if table.pk in ready_ids:
                    released += _release(table, tournament, now)
        return StepResult(tournament.pk, tournament.state, tournament.players_left, len(busted), moves, released,
                          tournament.current_level)  # fmt: skip


def _release(table: PokerTable, tournament: Tournament, now: datetime) -> int:
    """A ready table deals again after the pause between hands (two players or more); else it idles."""
    if table.seats.filter(stack__gt=0).count() >= 2:
        set_table(table, phase=BETWEEN, deadline=now + timedelta(seconds=tournament.between_hands_seconds))
        return 1
    if table.phase != IDLE:
        set_table(table, phase=IDLE, deadline=None)
    return 0


# --- the finish -------------------------------------------------------------------------------------


def _groups(tournament: Tournament) -> list[list[Bust]]:
    rows = (
        TournamentEntry.objects.filter(tournament=tournament, bust_group__isnull=False)
        .order_by("bust_group", "eliminated_at", "id")
        .values_list("pk", "bust_group", "bust_stack")
    )
    groups: dict[int, list[Bust]] = {}
    for pk, group, stack in rows:
        assert group is not None
        groups.setdefault(group, []).append(Bust(str(pk), int(stack or 0)))
    return [groups[number] for number in sorted(groups)]


def _prizes_of_the_busted(tournament: Tournament, payouts: Payouts) -> dict[int, int]:
    """Entry id -> prize of every player already out, by the eliminations rule over
    the bust groups in order (as ``standings`` does at the finish, without a winner)."""
    groups = _groups(tournament)
    pending = [  # busted in a hand-for-hand round that has not ended: the last group out
        Bust(str(pk), int(stack or 0))
        for pk, stack in TournamentEntry.objects.filter(
            tournament=tournament, state=EntryState.ELIMINATED, bust_group__isnull=True
        )
        .order_by("eliminated_at", "id")
        .values_list("pk", "bust_stack")
    ]
    if pending:
        groups.append(pending)
    remaining = TournamentEntry.objects.filter(tournament=tournament, state=EntryState.PLAYING).count()
    prizes: dict[int, int] = {}
    for group in reversed(groups):  # the last group out was ranked just below the players left
        before = remaining + len(group)
        prizes.update({int(f.player): f.prize for f in rank_bust(group, before, payouts.by_place)})
        remaining = before
    return prizes


def _close_tables(tables: Iterable[PokerTable], bank: int, batch: _Batch, cause: int) -> None:
    """Every chip left on the tables back to the bank, caused by ``cause`` (whose
    projector frees the seats); the tables closed."""
    for table in tables:
        for seat in table.seats.all():
            batch.leg(seat_account(table_id=table.pk, player_id=seat.player_id, currency=CHIPS), bank, seat.stack,
                      "tourney_chips", cause)  # fmt: skip
        table.is_open = False
        set_table(table, phase=IDLE, deadline=None, is_open=False)


def _finish(tournament: Tournament, tables: list[PokerTable], now: datetime) -> None:
    """One player holds every chip: places and prizes by ``standings`` (over the
    entries' projected bust groups and stacks), the
    winner's chips back to the bank (which ends at zero), the prize pool (with
    the house's overlay for a guarantee) paid to the wallets; the pool ends at zero."""
    winner = TournamentEntry.objects.select_for_update().get(tournament=tournament, state=EntryState.PLAYING)
    payouts = _payouts(tournament)
    finishes = {int(f.player): f for f in standings(_groups(tournament), str(winner.pk), payouts)}
    bank = chip_bank(tournament_id=tournament.pk)
    chips = _Batch(CHIPS)
    done = chips.event(et.TOURNAMENT_FINISHED, {"winner": winner.player_id, "entry_id": winner.pk, "at": iso(now),
                                                "entrants": tournament.entrants})  # fmt: skip
    _close_tables(tables, bank, chips, done)
    # The winner, the tournament finished, the seats freed: the projectors'.
    _commit(tournament, chips, key=f"poker:tournament:{tournament.pk}:finish:chips", actor=SYSTEM, now=now,
            entries=[winner])  # fmt: skip
    if balance_of(account_id=bank) != 0:
        raise AssertionError(f"tournament {tournament.pk}: the chip bank is not zero at the finish")
    money = _Batch(tournament.currency)
    entries = {e.pk: e for e in TournamentEntry.objects.filter(tournament=tournament, pk__in=list(finishes))}
    results = [{"entry_id": pk, "player_id": entries[pk].player_id, "place": f.place, "tied": f.tied,
                "prize": f.prize} for pk, f in sorted(finishes.items(), key=lambda item: item[1].place)]  # fmt: skip
    paid = money.event(et.TOURNAMENT_PAID, {
        "pool": payouts.pool.amount, "collected": payouts.pool.collected, "overlay": payouts.pool.overlay,
        "standings": results, "at": iso(now),
    })  # fmt: skip
    pool = pool_account(tournament_id=tournament.pk, currency=tournament.currency)
    money.leg(overlay_account(tournament_id=tournament.pk, currency=tournament.currency), pool,
              payouts.pool.overlay, "tourney_overlay", paid)  # fmt: skip
    for row in results:
        wallet = player_accounts(player_id=row["player_id"], currency=tournament.currency).wallet
        money.leg(pool, wallet, row["prize"], "tourney_prize", paid)
    # The places and prizes: the projector's.
    _commit(tournament, money, key=f"poker:tournament:{tournament.pk}:finish:prizes", actor=SYSTEM, now=now,
            entries=entries.values())  # fmt: skip
    if balance_of(account_id=pool) != 0:
        raise AssertionError(f"tournament {tournament.pk}: the prize pool is not zero after the payouts")


# --- pause, resume, cancel while running ------------------------------------------------------------


@dataclass(frozen=True)
class TournamentControlResult:
    tournament_id: int
    state: str
    tables: int  # tables paused or resumed


def _recorded_control(tournament: Tournament, event_type: str, data: dict[str, Any], *, action: str,
                      operator: Any, tables: int, now: datetime) -> TournamentControlResult:  # fmt: skip
    """Record a pause or resume: the tournament's event (with the level clock's
    seconds, ``clock_seconds``), the tournament row (its projector's), and the
    ``operator.action`` (``tournament.pause`` or ``tournament.resume``) with
    the actor and the reason."""
    batch = _Batch(CHIPS)
    batch.event(event_type, data)
    _commit(tournament, batch, key=f"poker:tournament:{tournament.pk}:{action}:{data['at']}", actor=data["actor"],
            now=now)  # fmt: skip
    record_operator_action(
        operator=operator, action=f"tournament.{action}", target=f"poker-tournament:{tournament.pk}",
        reason=data["reason"], details={"tournament": tournament.name, "tables": tables},
        metadata={"tournament_id": tournament.pk},
    )  # fmt: skip
    return TournamentControlResult(tournament.pk, tournament.state, tables)


def pause_tournament(*, tournament_id: int, operator: Any, reason: str, now: datetime) -> TournamentControlResult:
    """Operator pause (malfunction): the level clock stops, every hand in play is
    paused (``pause_hand``: the actor's clock stops) and every table between
    hands waits; no table deals until ``resume_tournament``. Recorded as
    ``poker_tournament.paused`` and ``operator.action`` ``tournament.pause``.
    Refusals (nothing changes): ``reason_required``, ``tournament_not_found``,
    ``tournament_not_running``."""
    reason = required_reason(reason)
    actor = operator_actor(operator)
    with transaction.atomic():
        tournament = lock_tournament(tournament_id)
        if tournament.state != TournamentState.RUNNING:
            raise TournamentNotRunning(tournament_id=tournament_id, state=tournament.state)
        seconds = clock_seconds(tournament, now)  # the clock stops there (the projector)
        tables = list(PokerTable.objects.select_for_update().filter(tournament=tournament, is_open=True).order_by("pk"))
        paused = 0
        for table in tables:
            if table.phase == HAND:
                pause_hand(table_id=table.pk, actor=actor, reason=reason, now=now)
                paused += 1
            elif table.phase == BETWEEN:
                set_table(table, phase=PAUSED, deadline=None)
                paused += 1
        data = {"reason": reason, "actor": actor, "at": iso(now), "level": tournament.current_level,
                "clock_seconds": seconds}  # fmt: skip
        return _recorded_control(tournament, et.TOURNAMENT_PAUSED, data, action="pause", operator=operator,
                                 tables=paused, now=now)  # fmt: skip


def resume_tournament(*, tournament_id: int, operator: Any, reason: str = "", now: datetime) -> TournamentControlResult:
    """Resume a paused tournament: the level clock runs again from where it
    stopped, paused hands resume with the time their actor had left, the other
    tables deal after the pause between hands, and the step runs for the tables
    that were waiting. Refusals: ``tournament_not_found``, ``tournament_not_paused``."""
    actor = operator_actor(operator)
    with transaction.atomic():
        tournament = lock_tournament(tournament_id)
        if tournament.state != TournamentState.PAUSED:
            raise TournamentNotPaused(tournament_id=tournament_id, state=tournament.state)
        tables = list(PokerTable.objects.select_for_update().filter(tournament=tournament, is_open=True).order_by("pk"))
        resumed = 0
        for table in tables:
            if table.phase != PAUSED:
                continue
            if current_hand(table) is not None:
                resume_hand(table_id=table.pk, actor=actor, now=now)
            else:
                set_table(table, phase=BETWEEN, deadline=now + timedelta(seconds=tournament.between_hands_seconds))
            resumed += 1
        data = {"actor": actor, "reason": reason, "at": iso(now), "clock_seconds": int(tournament.clock_elapsed)}
        # Running again, the clock from now: the projector's.
        result = _recorded_control(tournament, et.TOURNAMENT_RESUMED, data, action="resume", operator=operator,
                                   tables=resumed, now=now)  # fmt: skip
        schedule_tournament(tournament.pk)
        at = next_level_at(tournament, now)
        if at is not None:
            schedule_tournament(tournament.pk, at=at)
        return result


@dataclass(frozen=True)
class RunningCancel:
    policy: str
    refunded: int
    buy_ins: int
    fees: int
    paid: list[dict[str, int]]


def cancel_running(tournament: Tournament, *, actor: str, reason: str, now: datetime) -> RunningCancel:
    """Cancel a running or paused tournament (the tournament locked) under its
    ``cancel_policy``: every hand in play voided (chips back to the seats), every
    chip back to the bank, the tables closed; then ``refund``: every entry's
    buy-in and fee back to the wallet; ``chip_count``: players already out in a
    paid place get that place's prize, the rest of the pool (with the
    guarantee's overlay) goes to the players left in proportion to their chips,
    rounded down, the remainder to the biggest stack; fees are kept. The pool
    and the chip bank end at zero."""
    tables = list(PokerTable.objects.select_for_update().filter(tournament=tournament, is_open=True).order_by("pk"))
    for table in tables:
        if current_hand(table) is not None:
            void_hand(table_id=table.pk, actor=actor, reason=reason, now=now)
    tables = list(PokerTable.objects.select_for_update().filter(tournament=tournament, is_open=True).order_by("pk"))
    stacks = {seat.player_id: seat.stack for table in tables for seat in table.seats.all()}
    bank = chip_bank(tournament_id=tournament.pk)
    chips = _Batch(CHIPS)
    data = {"reason": reason, "actor": actor, "at": iso(now), "stacks": {str(p): s for p, s in stacks.items()}}
    closed = chips.event(et.TOURNAMENT_TABLES_CLOSED, data)
    _close_tables(tables, bank, chips, closed)
    _commit(tournament, chips, key=f"poker:tournament:{tournament.pk}:cancel:chips", actor=actor, now=now)
    currency = tournament.currency
    pool = pool_account(tournament_id=tournament.pk, currency=currency)
    fees = fee_account(tournament_id=tournament.pk, currency=currency)
    entries = list(
        TournamentEntry.objects.select_for_update().filter(tournament=tournament, state__in=ACTIVE).order_by("id")
    )
    money = _Batch(currency)
    paid: list[dict[str, int]] = []
    policy = tournament.cancel_policy
    if policy == CancelPolicy.REFUND:
        refunds = [{"entry_id": e.pk, "player_id": e.player_id, "buy_in": e.buy_in, "fee": e.fee} for e in entries]
        cancelled = money.event(et.TOURNAMENT_CANCELLED, {
            "reason": reason, "actor": actor, "at": iso(now), "policy": policy, "refunds": refunds,
            "buy_ins": sum(e.buy_in for e in entries), "fees": sum(e.fee for e in entries),
        })  # fmt: skip
        for entry in entries:
            wallet = player_accounts(player_id=entry.player_id, currency=currency).wallet
            money.leg(pool, wallet, entry.buy_in, "tourney_refund", cancelled)
            money.leg(fees, wallet, entry.fee, "tourney_refund", cancelled)
        result = RunningCancel(policy, len(entries), sum(e.buy_in for e in entries), sum(e.fee for e in entries), [])
    else:
        payouts = _payouts(tournament)
        # Out in a paid place: that place's prize (ties shared as at the finish),
        # ranked again from the bust groups, not read from the entries' rows.
        prizes = {pk: prize for pk, prize in _prizes_of_the_busted(tournament, payouts).items() if prize}
        rest = payouts.pool.amount - sum(prizes.values())
        players = sorted((e for e in entries if e.player_id in stacks and stacks[e.player_id] > 0),
                         key=lambda e: (-stacks[e.player_id], e.pk))  # fmt: skip
        if players and rest > 0:
            for entry, share in zip(players, split_by_weights(rest, [stacks[e.player_id] for e in players]),
                                    strict=True):  # fmt: skip
                prizes[entry.pk] = prizes.get(entry.pk, 0) + share
        by_pk = {e.pk: e for e in entries}
        paid = [{"entry_id": pk, "player_id": by_pk[pk].player_id, "prize": amount} for pk, amount in prizes.items()]
        cancelled = money.event(et.TOURNAMENT_CANCELLED, {
            "reason": reason, "actor": actor, "at": iso(now), "policy": policy, "paid": paid,
            "pool": payouts.pool.amount, "overlay": payouts.pool.overlay,
        })  # fmt: skip
        money.leg(overlay_account(tournament_id=tournament.pk, currency=currency), pool, payouts.pool.overlay,
                  "tourney_overlay", cancelled)  # fmt: skip
        for row in paid:
            wallet = player_accounts(player_id=row["player_id"], currency=currency).wallet
            money.leg(pool, wallet, row["prize"], "tourney_prize", cancelled)
        result = RunningCancel(policy, 0, 0, 0, paid)
    # The entries refunded or paid, the tournament cancelled: the projectors'.
    _commit(tournament, money, key=f"poker:tournament:{tournament.pk}:cancel:money", actor=actor, now=now,
            entries=entries)  # fmt: skip
    if balance_of(account_id=pool) != 0 or balance_of(account_id=bank) != 0:
        raise AssertionError(f"tournament {tournament.pk}: the pool or the chip bank is not zero after the cancel")
    return result
