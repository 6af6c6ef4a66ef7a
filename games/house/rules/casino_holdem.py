"""Casino Hold'em (seed 003, RULES.md): its definition and pay tables."""

from __future__ import annotations

from games.house.rules.definitions import (
    FOLD,
    Action,
    DecisionOption,
    DecisionPoint,
    GameDefinition,
    MainRule,
    Qualifier,
    Wager,
    WagerKind,
)
from games.house.rules.paytables import PAIR_OF_ACES, Basis, PayTable, lines, to

CODE = "casino_holdem"

A = Action
# Ante: table when the dealer does not qualify or the player wins.
CH_ANTE = MainRule(A.TABLE, A.TABLE, A.PUSH, A.TABLE, A.LOSE, A.TABLE)
# Call: 1:1 on a win against a qualifying dealer, push when not qualified.
CH_CALL = MainRule(A.EVEN, A.PUSH, A.PUSH, A.PUSH, A.LOSE, A.PUSH)

ANTE_LINES = lines(
    ("royal_flush", to(100)),
    ("straight_flush", to(20)),
    ("four_of_a_kind", to(10)),
    ("full_house", to(3)),
    ("flush", to(2)),
    ("straight", to(1)),
    ("three_of_a_kind", to(1)),
    ("two_pair", to(1)),
    ("pair", to(1)),
    ("high_card", to(1)),
)

BONUS_LINES = lines(
    ("royal_flush", to(100)),
    ("straight_flush", to(50)),
    ("four_of_a_kind", to(40)),
    ("full_house", to(30)),
    ("flush", to(20)),
    ("straight", to(7)),
    ("three_of_a_kind", to(7)),
    ("two_pair", to(7)),
    (PAIR_OF_ACES, to(7)),
)

PAY_TABLES = (
    PayTable(CODE, "ante", 1, Basis.PLAYER_SEVEN, ANTE_LINES, title="Ante, seed 003"),
    PayTable(CODE, "bonus", 1, Basis.FIRST_FIVE, BONUS_LINES, title="AA Bonus, seed 003"),
)

CASINO_HOLDEM = GameDefinition(
    code=CODE,
    title="Casino Hold'em",
    wagers=(
        Wager("ante", WagerKind.REQUIRED, CH_ANTE, needs_pay_table=True),
        Wager("bonus", WagerKind.OPTIONAL, needs_pay_table=True),
        Wager("call", WagerKind.DECISION, CH_CALL),
    ),
    decision_points=(DecisionPoint("flop", (DecisionOption("call", 2), FOLD), "fold"),),
    decision_wager="call",
    qualifier=Qualifier(4),
    pay_tables=PAY_TABLES,
    strategies=("ch_exact", "ch_table", "ch_basic", "always_call"),
    aliases=("ch",),
)
