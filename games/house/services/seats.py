"""Joining and leaving tables (application services).

RULES.md: a player holds at most one seat per table and plays at most
``CASINO_MAX_TABLES_PER_PLAYER`` (default 4) tables at once, and a table not
available for multi-game play (``HouseTable.multi_play`` false, seed 000:274) only
alone (``multi_play_not_allowed``; house tables only, as the 4-table limit). ``take_seat`` (the
player's request) refuses a second seat (``already_seated``) and serialises one
player's joins on their user row so the table count cannot race; ``assign_seat``
(the numbering and the limits, also used by the demo and the certification
harness) is idempotent; ``one_seat_per_table`` is the database's last guard.
``leave_table`` returns the player's bets of a round whose betting has not
closed (seed 000), so a per-seat round never deals more hands than its seats.
A seat is taken and given up by events (``house_seat.taken``, ``house_seat.left``
in the stream ``house-seat-{table}-{player}``); its row is their projection
(``games.house.projectors.TableSeatProjector``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from casino.errors import Conflict, NotFound
from games.house.event_types import SEAT_LEFT, SEAT_TAKEN, seat_stream
from games.house.models import HouseTable, PlayerRound, TableSeat
from games.house.projectors import TableSeatProjector
from games.house.round.commands import decide_leave
from games.house.round.errors import NotInRound, NotSeated, TableFull
from games.house.round.events import BetRemoved
from games.house.round.state import PER_SEAT_MAX
from games.house.store.commands import lock_leaving_player
from games.house.store.commit import Money, commit
from games.house.store.rows import state_from_json
from games.house.store.streams import iso, load_round
from games.tables.pacing import lock_table
from ledger.services import NewEvent, append_events
from ledger.services.events import now as ledger_now


class TableNotFound(NotFound, code="table_not_found"):
    """No such table."""


class AlreadySeated(Conflict, code="already_seated"):
    """The player already holds a seat at this table (one seat per table)."""


class TableClosed(Conflict, code="table_closed"):
    """The table is closed."""


def get_table(*, table_id: int) -> HouseTable:
    try:
        return HouseTable.objects.get(pk=table_id)
    except (HouseTable.DoesNotExist, ValueError, TypeError):
        raise TableNotFound(table_id=table_id) from None


@transaction.atomic
def take_seat(*, table_id: int, player_id: int) -> TableSeat:
    """Seat the player at an open table (numbering and the table limit:
    ``assign_seat``). Refusals: ``table_not_found``,
    ``table_closed``, ``already_seated``, ``too_many_tables``, ``multi_play_not_allowed``,
    ``table_full``."""
    # Serialise this player's joins: two joins of different tables cannot both
    # pass the table count (the service locks only the table row).
    get_user_model().objects.select_for_update().filter(pk=player_id).first()
    table = get_table(table_id=table_id)
    if not table.is_open:
        raise TableClosed(table_id=table_id)
    if TableSeat.objects.filter(table=table, player_id=player_id).exists():
        raise AlreadySeated(table_id=table_id)
    try:
        with transaction.atomic():
            return assign_seat(table_id=table.pk, player_id=player_id)
    except IntegrityError:
        raise AlreadySeated(table_id=table_id) from None


def leave_table(*, table_id: int, player_id: int, now: datetime) -> None:
    """Give up the seat. Before betting closes the player's bets of the round
    are declined and returned (seed 000, ``decide_leave``: ``house_bet.removed``
    reason ``leave``, the holds voided through the ledger as a CLEAR's are), so
    a seat given up during betting frees its place in a per-seat round; after
    betting closed the wagers stay in play (RULES.md: a round proceeds whether
    or not the player stays). Refusals: ``table_not_found``, ``not_seated``.

    Locks as the bet path does (the player's round row, then the round shared),
    then deletes the seat, which waits for a chip in flight on a per-seat table
    (it holds the seat row: ``store.commands.seat_and_bettors``); the round and the
    player's bets are read after that, so the chip is returned too. The seat
    row is deleted by its projector from ``house_seat.left``."""
    with transaction.atomic():
        get_table(table_id=table_id)
        lock_leaving_player(table_id=table_id, player_id=player_id)
        seat = TableSeat.objects.select_for_update().filter(table_id=table_id, player_id=player_id).first()
        if seat is None:
            raise NotSeated(table_id=table_id)
        _record_seat(SEAT_LEFT, table_id=table_id, player_id=player_id, data={}, at=now)
        leaving = lock_leaving_player(table_id=table_id, player_id=player_id)
        if leaving is None:
            return
        round_row, row = leaving
        if row is None:
            return
        state = load_round(round_row.round_id)
        events = decide_leave(state, state_from_json(player_id, row.state), now=iso(now))
        if not events:
            return
        removed = events[0]
        money = Money(settle_holds=[(hold_id, 0, removed) for hold_id in BetRemoved.from_data(removed.data).hold_ids])
        commit(
            round_row=round_row, state=state, players={player_id: row}, events=events, money=money,
            idempotency_key=f"round:{round_row.round_id}:leave:{player_id}:{row.stream_version}",
            actor=f"user:{player_id}", now=now,
        )  # fmt: skip


def require_seat(*, table_id: int, player_id: int) -> TableSeat:
    """The player's seat at the table, or ``table_not_found`` / ``not_seated``."""
    seat = TableSeat.objects.filter(table_id=table_id, player_id=player_id).first()
    if seat is None:
        get_table(table_id=table_id)
        raise NotSeated(table_id=table_id)
    return seat


class TooManyTables(NotInRound, code="too_many_tables"):
    """A player may play at most ``CASINO_MAX_TABLES_PER_PLAYER`` tables at once."""


# Seed 000:274: a table unavailable for multi-game play is played alone: it seats no
# player who plays another table, and its players join no other.
class MultiPlayNotAllowed(Conflict, code="multi_play_not_allowed"):
    """A table unavailable for multi-game play is played alone, never beside another table."""


def check_multi_play(*, table: HouseTable, others: set[int]) -> None:
    """``multi_play_not_allowed`` when the player, playing the house tables ``others``
    (``tables_in_play`` without ``table``), would then play ``table`` beside one of
    them that is not available for multi-game play (``table`` itself or one of ``others``)."""
    if not others:
        return
    alone = [table.pk] if not table.multi_play else []
    alone += list(HouseTable.objects.filter(pk__in=others, multi_play=False).values_list("pk", flat=True))
    if alone:
        raise MultiPlayNotAllowed(table_id=table.pk, playing=sorted(others), single_play_tables=sorted(alone))


def tables_in_play(*, player_id: int) -> set[int]:
    """The tables the player plays at (RULES.md: at most 4 at once): those where
    they hold a seat, and those where a round still holds their wagers (a seat
    given up after betting closed leaves its wagers in play until the round ends)."""
    seated = set(TableSeat.objects.filter(player_id=player_id).values_list("table_id", flat=True))
    wagering = PlayerRound.objects.filter(player_id=player_id, status="betting", staked__gt=0)
    return seated | set(wagering.values_list("round__table_id", flat=True))


def assign_seat(*, table_id: int, player_id: int) -> TableSeat:
    """The player's seat at the table, assigned if they have none (idempotent: one
    per player per table). Per-seat tables number seats up to the deck's limit;
    shared tables have unlimited, unnumbered seats. Refusals: ``too_many_tables``,
    ``multi_play_not_allowed``, ``table_full``."""
    with transaction.atomic():
        table = lock_table(HouseTable, table_id)
        seat = TableSeat.objects.filter(table=table, player_id=player_id).first()
        if seat is not None:
            return seat
        others = tables_in_play(player_id=player_id) - {table.pk}
        if len(others) >= settings.CASINO_MAX_TABLES_PER_PLAYER:
            raise TooManyTables(limit=settings.CASINO_MAX_TABLES_PER_PLAYER)
        check_multi_play(table=table, others=others)
        number = None
        if table.hand_mode == "per_seat":
            limit = min(table.max_seats or PER_SEAT_MAX, PER_SEAT_MAX)
            taken = set(TableSeat.objects.filter(table=table).values_list("seat_number", flat=True))
            free = [n for n in range(1, limit + 1) if n not in taken]
            if not free:
                raise TableFull(seats=limit)
            number = free[0]
        _record_seat(SEAT_TAKEN, table_id=table.pk, player_id=player_id, data={"seat_number": number},
                     at=ledger_now())  # fmt: skip
        return TableSeat.objects.get(table=table, player_id=player_id)


def _record_seat(kind: str, *, table_id: int, player_id: int, data: dict[str, Any], at: datetime) -> None:
    """Append a seat event to the (table, player) seat stream and apply it with
    the seat's projector (which writes the ``TableSeat`` row), in the caller's transaction."""
    recorded = append_events(
        stream_id=seat_stream(table_id, player_id),
        expected_version=None,  # the stream's own: one player's joins are serialised on their user row
        events=[NewEvent(kind, {"table_id": table_id, "player_id": player_id, **data, "at": iso(at)})],
        metadata={"actor": f"user:{player_id}", "at": iso(at)},
    )
    TableSeatProjector(heads={recorded[-1].stream_id: recorded[-1].version}).apply_many(recorded)
