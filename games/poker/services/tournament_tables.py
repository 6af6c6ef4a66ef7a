"""What the ring's hand services do differently at a tournament's table
(docs/poker.md, "Tournaments: play"): the level's blinds before a deal, the
eliminated player's refusal, and waiting for the tournament's step after a hand.

Each is called by ``games.poker.services.hands`` inside its transaction, with
the table row locked; none locks the tournament row (only the tournament's
step does, ``games.poker.tournament.services.step``, before its tables), so the
two lock orders never cross. This module imports no tournament service: the
tournament services build on the table services, not the other way round.
"""

from __future__ import annotations

from datetime import datetime

from games.poker.errors import TournamentPlayerEliminated
from games.poker.models import PokerSeat, PokerTable
from games.poker.services.tables import IDLE, PAUSED, WAITING, set_table
from games.poker.tournament.clock import level_now, schedule_tournament
from games.poker.tournament.models import EntryState, Tournament, TournamentEntry, TournamentState


def prepare_tournament_hand(table: PokerTable, now: datetime) -> int | None:
    """Called by the dealer before a tournament table deals (the table locked):
    the blinds and ante of the level in force; returns its number. ``None`` (and
    the table waits, ``PAUSED`` or ``IDLE``) when the tournament is not running."""
    assert table.tournament_id is not None
    tournament = Tournament.objects.get(pk=table.tournament_id)
    if tournament.state != TournamentState.RUNNING:
        set_table(table, phase=PAUSED if tournament.state == TournamentState.PAUSED else IDLE, deadline=None)
        return None
    number, level = level_now(tournament, now)
    blinds = {"small_blind": level.small_blind, "big_blind": level.big_blind, "ante": level.ante}
    if any(getattr(table, name) != value for name, value in blinds.items()):
        for name, value in blinds.items():
            setattr(table, name, value)
        PokerTable.objects.filter(pk=table.pk).update(**blinds)
    return number


def check_tournament_player(table: PokerTable, player_id: int) -> None:
    """Before a player's action at a tournament table: an eliminated player gets
    ``tournament_player_eliminated`` (``poker_not_seated`` follows for anyone
    else without a seat here, e.g. moved to another table)."""
    assert table.tournament_id is not None
    if (
        not PokerSeat.objects.filter(table=table, player_id=player_id).exists()
        and TournamentEntry.objects.filter(
            tournament_id=table.tournament_id, player_id=player_id, state=EntryState.ELIMINATED
        ).exists()
    ):
        raise TournamentPlayerEliminated(tournament_id=table.tournament_id)


def table_hand_done(table: PokerTable, now: datetime) -> None:
    """A tournament table's hand is over (the table locked): the table waits for
    the tournament's step, which is scheduled now."""
    set_table(table, phase=WAITING, deadline=None)
    assert table.tournament_id is not None
    schedule_tournament(table.tournament_id)
