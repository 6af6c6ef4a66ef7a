"""Poker table services (docs/poker.md, "Tables"), by concern:

- ``tables``: the table's accounts, row lock, phase and deadline, hand reads;
- ``seats``: sit down, add money, stand up, sit out and in, freeing seats;
- ``hands``: dealing, the players' actions, the dealer's step, the sweeper;
- ``operator``: pause, resume and void a hand (malfunction);
- ``configure``: the operator's edits of a table's settings (the currency only
  while nobody is seated and no hand is open);
- ``tournaments``: tournament registration (buy-in and fee through the ledger)
  and the operator's cancel (every entry refunded);
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
    engine_events,
    get_table,
    iso,
    load_hand,
    pot_account,
    rake_account,
    seat_account,
)
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
    unregister,
)

__all__ = [
    "BETWEEN",
    "HAND",
    "IDLE",
    "PAUSED",
    "ActResult",
    "CancelResult",
    "HandControlResult",
    "RegistrationResult",
    "SeatResult",
    "act",
    "advance_table",
    "cancel_tournament",
    "check_currency_change",
    "engine_events",
    "fee_account",
    "free_expired_seats",
    "get_table",
    "get_tournament",
    "hand_config",
    "iso",
    "load_hand",
    "operator_hand_control",
    "pause_hand",
    "pool_account",
    "pot_account",
    "rake_account",
    "rake_rule",
    "register",
    "registered_count",
    "registration_open",
    "rejoin",
    "resume_hand",
    "seat_account",
    "sit_down",
    "sit_in",
    "sit_out",
    "stand_up",
    "sweep",
    "top_up",
    "unregister",
    "update_table",
    "void_hand",
]
