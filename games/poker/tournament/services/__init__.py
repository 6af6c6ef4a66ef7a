"""Tournament services (docs/poker.md, "Tournaments"), by concern:

- ``registration``: registration (buy-in and fee through the ledger), the
  operator's cancel, scheduled starts and the tournaments' sweep;
- ``play``: a tournament's start, its tables and chips, the step between hands
  (busts, level, balancing, hand-for-hand, the finish and the payouts), pause
  and resume; ``core``: what both share;
- ``templates``: the operator's tournaments made from templates.

A tournament's tables are poker tables (``games.poker.services``). Callers use
the package: ``from games.poker.tournament import services as tournament_services``.
"""

from __future__ import annotations

from games.poker.tournament.services.play import (
    StepResult,
    TournamentControlResult,
    advance_tournament,
    chip_bank,
    pause_tournament,
    resume_tournament,
    start_tournament,
)
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
