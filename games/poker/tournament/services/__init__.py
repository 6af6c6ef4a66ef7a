"""Tournament services (docs/poker.md, "Tournaments"), by concern:

- ``registration``: registration (buy-in and fee through the ledger), the
  operator's cancel, scheduled starts and the tournaments' sweep;
- play, by concern: ``start`` (the start, the seat draw, late entries' seats),
  ``step`` (the step between hands: busts, level, balancing, hand-for-hand),
  ``finish`` (the payouts, the finish, the cancel of a running tournament),
  ``control`` (the operator's pause and resume), ``stream`` (the tournament
  stream's batch of events and ledger legs);
- ``core``: what registration and play share (accounts, the row lock);
- ``templates``: the operator's tournaments made from templates.

A tournament's tables are poker tables (``games.poker.services``); the level
clock is ``games.poker.tournament.clock``. Chips are tournament chips
(``ledger.currencies.CHIPS``): the chip bank issues every entry's starting
chips to their seat, chips move from seat to seat when a player changes table,
and the winner's chips go back to the bank, which ends at zero. Money moves
only at registration, at the finish and at a cancel. Callers use
the package: ``from games.poker.tournament import services as tournament_services``.
"""

from __future__ import annotations

from games.poker.tournament.services.control import TournamentControlResult, pause_tournament, resume_tournament
from games.poker.tournament.services.core import chip_bank
from games.poker.tournament.services.registration import (
    CancelResult,
    RegistrationResult,
    cancel_tournament,
    fee_account,
    get_tournament,
    pool_account,
    register,
    registered_count,
    registration_open,
    start_or_cancel_scheduled,
    sweep_tournaments,
    unregister,
)
from games.poker.tournament.services.start import start_tournament
from games.poker.tournament.services.step import StepResult, advance_tournament
from games.poker.tournament.services.templates import create_from_template

__all__ = [
    "CancelResult",
    "RegistrationResult",
    "StepResult",
    "TournamentControlResult",
    "advance_tournament",
    "cancel_tournament",
    "chip_bank",
    "create_from_template",
    "fee_account",
    "get_tournament",
    "pause_tournament",
    "pool_account",
    "register",
    "registered_count",
    "registration_open",
    "resume_tournament",
    "start_or_cancel_scheduled",
    "start_tournament",
    "sweep_tournaments",
    "unregister",
]
