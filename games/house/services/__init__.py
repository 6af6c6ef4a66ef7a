"""Application services of the house-banked games (docs/rounds.md)."""

from __future__ import annotations

from games.house.services.bets import (
    BetResult,
    DecisionResult,
    clear_bets,
    double_bets,
    make_decision,
    place_chip,
    repeat_bets,
    undo_bet,
)
from games.house.services.rounds import (
    TableTick,
    advance_table,
    pause_round,
    pool_account,
    resume_round,
    start_table,
    void_overdue_rounds,
    void_round,
)
from games.house.services.seats import assign_seat

__all__ = [
    "BetResult",
    "DecisionResult",
    "TableTick",
    "advance_table",
    "assign_seat",
    "clear_bets",
    "double_bets",
    "make_decision",
    "pause_round",
    "place_chip",
    "pool_account",
    "repeat_bets",
    "resume_round",
    "start_table",
    "undo_bet",
    "void_overdue_rounds",
    "void_round",
]
