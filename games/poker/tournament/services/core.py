"""What tournament registration and tournament play share: the tournament's
accounts (prize pool, fees, chip bank, the house's overlay), its row lock and
whether registration is open (docs/poker.md, "Tournaments"). No transaction of
its own: ``lock_tournament`` locks the row until the caller's transaction ends."""

from __future__ import annotations

from games.poker.errors import TournamentNotFound
from games.poker.services.tables import get_row
from games.poker.tournament.models import EntryState, Tournament, TournamentEntry, TournamentKind, TournamentState
from games.poker.tournament.rules.levels import late_registration_open
from ledger.currencies import CHIPS
from ledger.models import AccountKind
from ledger.services import ensure_account

ACTIVE = (EntryState.REGISTERED, EntryState.PLAYING, EntryState.ELIMINATED, EntryState.WINNER)
SYSTEM = "system"  # the actor of what the tournament does by itself (a start, a step, a scheduled cancel)


def tournament_owner(tournament_id: int) -> str:
    return f"poker-tournament:{tournament_id}"


def pool_account(*, tournament_id: int, currency: str) -> int:
    """The tournament's prize pool (``tournament_pool``): the buy-ins."""
    return ensure_account(kind=AccountKind.TOURNAMENT_POOL, owner=tournament_owner(tournament_id), currency=currency)


def fee_account(*, tournament_id: int, currency: str) -> int:
    """The house's revenue from the tournament's fees (``rake``, as a table's rake)."""
    return ensure_account(kind=AccountKind.RAKE, owner=tournament_owner(tournament_id), currency=currency)


def chip_bank(*, tournament_id: int) -> int:
    """The tournament's chip bank (``tournament_chips``, unit ``CHIPS``): minus the chips in play."""
    return ensure_account(kind=AccountKind.TOURNAMENT_CHIPS, owner=tournament_owner(tournament_id), currency=CHIPS)


def overlay_account(*, tournament_id: int, currency: str) -> int:
    """The house's account that covers a guarantee's overlay (``house``, may go negative)."""
    return ensure_account(kind=AccountKind.HOUSE, owner=tournament_owner(tournament_id), currency=currency)


def get_tournament(*, tournament_id: int) -> Tournament:
    return get_row(Tournament, tournament_id, missing=lambda: TournamentNotFound(tournament_id=tournament_id))


def lock_tournament(tournament_id: int) -> Tournament:
    """The tournament row locked until the transaction ends; ``tournament_not_found``.

    ``FOR NO KEY UPDATE``: it serialises every writer of the row (two steps, a
    registration and a step) as ``FOR UPDATE`` does, but not the rows that
    merely reference it: the foreign-key check of a table's transaction
    (``FOR KEY SHARE`` on this row, at its commit) would otherwise wait for a
    step that waits for that table's row lock, a deadlock (two processes
    playing the tables, issue #39)."""
    tournament = Tournament.objects.select_for_update(no_key=True).filter(pk=tournament_id).first()
    if tournament is None:
        raise TournamentNotFound(tournament_id=tournament_id)
    return tournament


def registered_count(tournament: Tournament) -> int:
    return TournamentEntry.objects.filter(tournament=tournament, state__in=ACTIVE).count()


def registration_open(tournament: Tournament) -> bool:
    """Registering: open. Running: only a scheduled tournament, through its late
    registration level (``late_registration_open`` with the level in force).
    Finished, cancelled: closed."""
    if tournament.state == TournamentState.REGISTERING:
        return True
    if tournament.state != TournamentState.RUNNING or tournament.kind != TournamentKind.SCHEDULED:
        return False
    last, current = tournament.late_registration_level, tournament.current_level
    if last is None or current is None:
        return False
    return late_registration_open(tournament.schedule(), current, last)
