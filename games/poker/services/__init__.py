"""Poker table services (docs/poker.md, "Tables"), by concern:

- ``tables``: the table's accounts, row lock, phase and deadline, hand reads;
- ``seats``: sit down, add money, stand up, sit out and in, freeing seats;
- ``hands``: dealing, the players' actions, the dealer's step, the sweeper;
- ``operator``: pause, resume and void a hand (malfunction);
- ``configure``: the operator's edits of a table's settings (the currency only
  while nobody is seated and no hand is open);
- ``tournaments``: tournament registration (buy-in and fee through the ledger),
  the operator's cancel, scheduled starts and the tournaments' sweep;
- ``tournament_play``: a tournament's start, its tables and chips, the step
  between hands (busts, level, balancing, hand-for-hand, the finish and the
  payouts), pause and resume; ``tournament_core``: what both share;
- ``tournament_templates``: the operator's tournaments made from templates;
- ``verify``: ``verify_ledger``'s check of every seat's stack against its
  ``poker_seat`` account (registered by ``games.apps``).

Pacing (game numbers, the row lock, scheduling the next step, the sweep loop)
comes from ``games.pacing``, shared with the house-banked tables. Callers use
the package: ``from games.poker import services``.
"""

from __future__ import annotations

from games.poker.services.configure import check_currency_change, update_table
from games.poker.services.hands import ActResult, act, advance_table, hand_config, rake_rule, sweep
from games.poker.services.operator import (
    HandControlResult,
    operator_hand_control,
    pause_hand,
    resume_hand,
    void_hand,
)
from games.poker.services.seats import (
    SeatResult,
    free_expired_seats,
    rejoin,
    sit_down,
    sit_in,
    sit_out,
    stand_up,
    top_up,
)
from games.poker.services.tables import (
    BETWEEN,
    HAND,
    IDLE,
    PAUSED,
    WAITING,
    engine_events,
    get_table,
    hand_state,
    iso,
    load_hand,
    pot_account,
    rake_account,
    seat_account,
)
from games.poker.services.tournament_play import (
    StepResult,
    TournamentControlResult,
    advance_tournament,
    chip_bank,
    pause_tournament,
    resume_tournament,
    start_tournament,
)
from games.poker.services.tournament_templates import create_from_template
from games.poker.services.tournaments import (
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

__all__ = [
    "BETWEEN",
    "HAND",
    "IDLE",
    "PAUSED",
    "WAITING",
    "ActResult",
    "CancelResult",
    "HandControlResult",
    "RegistrationResult",
    "SeatResult",
    "StepResult",
    "TournamentControlResult",
    "act",
    "advance_table",
    "advance_tournament",
    "cancel_tournament",
    "check_currency_change",
    "chip_bank",
    "create_from_template",
    "engine_events",
    "fee_account",
    "free_expired_seats",
    "get_table",
    "get_tournament",
    "hand_config",
    "hand_state",
    "iso",
    "load_hand",
    "operator_hand_control",
    "pause_hand",
    "pause_tournament",
    "pool_account",
    "pot_account",
    "rake_account",
    "rake_rule",
    "register",
    "registered_count",
    "registration_open",
    "rejoin",
    "resume_hand",
    "resume_tournament",
    "seat_account",
    "sit_down",
    "sit_in",
    "sit_out",
    "stand_up",
    "start_or_cancel_scheduled",
    "start_tournament",
    "sweep",
    "sweep_tournaments",
    "top_up",
    "unregister",
    "update_table",
    "void_hand",
]
