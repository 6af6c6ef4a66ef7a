"""Joining and leaving tables (application services).

RULES.md: a player holds at most one seat per table and plays at most
``CASINO_MAX_TABLES_PER_PLAYER`` (default 4) tables at once. The API refuses a
second seat (``already_seated``) where the round service's ``assign_seat`` is
idempotent, and serialises one player's joins on their user row so the table
count cannot race; ``one_seat_per_table`` is the database's last guard.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from casino.errors import Conflict, NotFound
from games.house import services
from games.house.models import HouseTable, TableSeat
from games.house.round.errors import NotSeated


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
    ``games.house.services.assign_seat``). Refusals: ``table_not_found``,
    ``table_closed``, ``already_seated``, ``too_many_tables``, ``table_full``."""
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
            return services.assign_seat(table_id=table.pk, player_id=player_id)
    except IntegrityError:
        raise AlreadySeated(table_id=table_id) from None


@transaction.atomic
def leave_table(*, table_id: int, player_id: int) -> None:
    """Give up the seat. Wagers already placed in a running round stay in play
    (a round proceeds whether or not the player stays, RULES.md)."""
    get_table(table_id=table_id)
    deleted, _ = TableSeat.objects.filter(table_id=table_id, player_id=player_id).delete()
    if not deleted:
        raise NotSeated(table_id=table_id)


def require_seat(*, table_id: int, player_id: int) -> TableSeat:
    """The player's seat at the table, or ``table_not_found`` / ``not_seated``."""
    seat = TableSeat.objects.filter(table_id=table_id, player_id=player_id).first()
    if seat is None:
        get_table(table_id=table_id)
        raise NotSeated(table_id=table_id)
    return seat
