"""Ultimate Texas Hold'em (seeds 000 and 004, RULES.md): its definition and pay tables."""

from __future__ import annotations

from games.house.rules.definitions import (
    ANTE_IF_QUALIFIED,
    BLIND,
    CALL_EVEN,
    GameDefinition,
    Qualifier,
    Wager,
    WagerKind,
    three_streets,
)
from games.house.rules.paytables import BLIND_LINES, Basis, PayTable, seven_card_bonus

CODE = "uth"

BEST_FIVE_LINES = seven_card_bonus(full_house=8, flush=7, straight=4)

PAY_TABLES = (
    PayTable(CODE, "ante_plus", 1, Basis.PLAYER_SEVEN, BLIND_LINES, title="Ante Plus (Blind), seed 000"),
    PayTable(CODE, "best_five", 1, Basis.PLAYER_SEVEN, BEST_FIVE_LINES, title="Best Five / Trips, seed 000/004"),
)

UTH = GameDefinition(
    code=CODE,
    title="Ultimate Texas Hold'em",
    wagers=(
        Wager("ante", WagerKind.REQUIRED, ANTE_IF_QUALIFIED),
        Wager("ante_plus", WagerKind.AUTOMATIC, BLIND, equals="ante", needs_pay_table=True),
        Wager("best_five", WagerKind.OPTIONAL, needs_pay_table=True),
        Wager("call", WagerKind.DECISION, CALL_EVEN),
    ),
    decision_points=three_streets("call"),
    decision_wager="call",
    qualifier=Qualifier(2),
    pay_tables=PAY_TABLES,
    strategies=("uth_exact", "uth_table", "uth_basic", "always_max"),
)
