"""Poker table services (docs/poker.md, "Tables"), by concern:

- ``tables``: the table's accounts, row lock, phase and deadline, hand reads;
- ``seats``: sit down, add money, stand up, sit out and in, freeing seats;
- ``hands``: dealing, the players' actions, the dealer's step, the sweeper;
- ``operator``: pause, resume and void a hand (malfunction);
- ``tournament_tables``: what ``hands`` does differently at a tournament's
  table (the level's blinds, the eliminated player's refusal, waiting for the
  tournament's step); it imports no tournament service, so the tournament
  services build on these and never the other way round;
- ``configure``: the operator's edits of a table's settings (the currency only
  while nobody is seated and no hand is open);
- ``verify``: ``verify_ledger``'s check of every seat's stack against its
  ``poker_seat`` account (registered by ``games.apps``).

Pacing (game numbers, the row lock, scheduling the next step, the sweep loop)
comes from ``games.tables.pacing``, shared with the house-banked tables. Callers use
the package: ``from games.poker import services``. Tournament services
(registration, play, templates) are ``games.poker.tournament.services``.
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

__all__ = [
    "BETWEEN",
    "HAND",
    "IDLE",
    "PAUSED",
    "WAITING",
    "ActResult",
    "HandControlResult",
    "SeatResult",
    "act",
    "advance_table",
    "check_currency_change",
    "engine_events",
    "free_expired_seats",
    "get_table",
    "hand_config",
    "hand_state",
    "iso",
    "load_hand",
    "operator_hand_control",
    "pause_hand",
    "pot_account",
    "rake_account",
    "rake_rule",
    "rejoin",
    "resume_hand",
    "seat_account",
    "sit_down",
    "sit_in",
    "sit_out",
    "stand_up",
    "sweep",
    "top_up",
    "update_table",
    "void_hand",
]
