"""A tournament's start and its seats (docs/poker.md, "Tournaments: play"):
``start_tournament`` draws the seats round the fewest tables and issues every
entry's starting chips from the chip bank to their seat; ``seat_late_entry``
seats a late registration.

The tables are ``PokerTable`` rows with ``tournament`` set, played by the ring
game's own hand services (``games.poker.services``): the same engine, events
and ledger legs, in the tournament chip unit (``ledger.currencies.CHIPS``).

Contract: neither opens a transaction; the caller
(``games.poker.tournament.services.registration``: the last registration of a
Sit & Go, a scheduled start, a late registration) holds the tournament row
locked in its transaction. ``start_tournament`` then locks the entries;
``seat_late_entry`` locks the open tables (in id order).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from games.cards.shuffle import RandomSource, SecureRandomSource
from games.poker import event_types as et
from games.poker.models import PokerTable, PokerVariant, RakeMode
from games.poker.services.tables import BETWEEN, IDLE, iso, seat_account, set_table
from games.poker.tournament.clock import level_now, next_level_at, schedule_tournament
from games.poker.tournament.models import EntryState, Tournament, TournamentEntry
from games.poker.tournament.rules.balancing import seat_for_newcomer
from games.poker.tournament.rules.levels import Level
from games.poker.tournament.rules.seating import draw_seating
from games.poker.tournament.services.core import SYSTEM, chip_bank
from games.poker.tournament.services.stream import Batch, commit_batch
from ledger.currencies import CHIPS

# A tournament seat is never freed for absence (seed 001: "unlimited time to re-join").
NEVER_FREED_SECONDS = 2**31 - 1


def _table_code(tournament: Tournament, number: int) -> str:
    return f"T{tournament.pk}-{number}"


def open_table(tournament: Tournament, number: int, level: Level) -> PokerTable:
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
    batch = Batch(CHIPS)
    tables: dict[int, PokerTable] = {}
    for number in seating:
        tables[number] = open_table(tournament, number, level)
    started = batch.event(et.TOURNAMENT_STARTED, {
        "at": iso(now), "entrants": len(entries), "starting_chips": tournament.starting_chips, "level": 1,
        "tables": {str(tables[n].pk): {str(s): int(p) for s, p in seated.items()} for n, seated in seating.items()},
    })  # fmt: skip
    for number, seated in seating.items():
        for player in seated.values():
            account = seat_account(table_id=tables[number].pk, player_id=int(player), currency=CHIPS)
            batch.leg(bank, account, tournament.starting_chips, "tourney_chips", started)
    # The seats, the entries playing, the tournament running and its clock: the projectors'.
    commit_batch(
        tournament, batch, key=f"poker:tournament:{tournament.pk}:start", actor=SYSTEM, now=now, entries=entries
    )
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
        table = open_table(tournament, number, level_now(tournament, now)[1])
        seat_number = 1
    batch = Batch(CHIPS)
    seated = batch.event(et.TOURNAMENT_LATE_SEATED, {
        "entry_id": entry.pk, "player_id": entry.player_id, "table_id": table.pk, "seat": seat_number,
        "chips": tournament.starting_chips, "entrants": tournament.entrants + 1,
        "players_left": tournament.players_left + 1, "at": iso(now),
    })  # fmt: skip
    account = seat_account(table_id=table.pk, player_id=entry.player_id, currency=CHIPS)
    batch.leg(chip_bank(tournament_id=tournament.pk), account, tournament.starting_chips, "tourney_chips", seated)
    # The seat, the entry playing and the counts: the projectors'.
    commit_batch(tournament, batch, key=f"poker:tournament:{tournament.pk}:late:{entry.pk}",
                 actor=f"user:{entry.player_id}", now=now, entries=[entry])  # fmt: skip
    if table.phase == IDLE and table.seats.count() >= 2:
        set_table(table, phase=BETWEEN, deadline=now + timedelta(seconds=tournament.between_hands_seconds))
    return table.pk
