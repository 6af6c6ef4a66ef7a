"""Xtreme Hold'em (seed 002, RULES.md): its definition and pay tables, the STAX
progressive pools among them. Bonus Spin Xtreme's awards and wheel are in
``bonus_spin.py``."""

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
from games.house.rules.paytables import (
    ACE_FACE,
    ACE_FACE_SUITED,
    BLIND_LINES,
    CATEGORIES,
    LOSE,
    PAIR_OF_ACES,
    ROYAL_FLUSH_DIAMONDS,
    ROYAL_FLUSH_OTHER,
    Basis,
    Lines,
    Pay,
    PayTable,
    lines,
    seven_card_bonus,
    to,
)

CODE = "xtreme"

STAR, SPADE, HEART, DIAMOND, CLUB = "star", "spade", "heart", "diamond", "club"
PROGRESSIVE_POOLS: tuple[str, ...] = (STAR, SPADE, HEART, DIAMOND, CLUB)


def _hole_card_bonus(aces: int, pair: int) -> Lines:
    return lines((PAIR_OF_ACES, to(aces)), (ACE_FACE_SUITED, to(20)), (ACE_FACE, to(10)), ("pair", to(pair)))


def _for(n: int) -> Pay:
    return Pay.for_one(n)


def _prog(pool: str) -> Pay:
    return Pay.progressive(pool)


def _stax(*pays: Pay) -> Lines:
    # The royal flush split by suit, then the categories from a straight flush to two pair.
    names = (ROYAL_FLUSH_DIAMONDS, ROYAL_FLUSH_OTHER, *CATEGORIES[1 : CATEGORIES.index("two_pair") + 1])
    return tuple(zip(names, pays, strict=True))


# Player Bonus: full house, flush, straight pays per table number.
PLAYER_BONUS = {1: (9, 7, 4), 2: (8, 6, 5), 3: (8, 7, 4), 4: (7, 6, 5)}
# Hole Card Bonus: pair of aces, other pair pays per table number.
HOLE_CARD_BONUS = {1: (30, 5), 2: (25, 5), 3: (30, 4)}
STAX_TABLES: dict[int, Lines] = {
    1: _stax(_prog(STAR), _prog(SPADE), _prog(HEART), _prog(DIAMOND), _for(100), _for(50), _for(25), _for(10), LOSE),
    2: _stax(_prog(STAR), _prog(STAR), _prog(SPADE), _prog(HEART), _for(100), _for(50), _for(25), _for(10), LOSE),
    3: _stax(_prog(STAR), _prog(STAR), _prog(SPADE), _prog(HEART), _prog(DIAMOND), _for(40), _for(30), _for(10), LOSE),
    6: _stax(
        _prog(STAR), _prog(STAR), _prog(SPADE), _prog(HEART), _prog(DIAMOND), _for(30), _for(20), _for(10), _for(4)
    ),
    7: _stax(_prog(STAR), _prog(SPADE), _prog(HEART), _prog(DIAMOND), _for(60), _for(40), _for(30), _for(15), LOSE),
    8: _stax(_prog(STAR), _prog(STAR), _prog(SPADE), _prog(HEART), _prog(DIAMOND), _for(50), _for(30), _for(15), LOSE),
    9: _stax(_prog(STAR), _prog(SPADE), _prog(HEART), _prog(DIAMOND), _prog(CLUB), _for(50), _for(30), _for(10), LOSE),
}

PAY_TABLES = (
    PayTable(CODE, "xtra_bonus", 1, Basis.PLAYER_SEVEN, BLIND_LINES, title="X-tra Bonus, seed 002"),
    *(
        PayTable(CODE, "player_bonus", n, Basis.PLAYER_SEVEN, seven_card_bonus(*pays), title="Player Bonus")
        for n, pays in PLAYER_BONUS.items()
    ),
    *(
        PayTable(CODE, "hole_card_bonus", n, Basis.HOLE_CARDS, _hole_card_bonus(*pays), title="Hole Card")
        for n, pays in HOLE_CARD_BONUS.items()
    ),
    *(PayTable(CODE, "stax", n, Basis.STAX_FIVE, stax, title="STAX") for n, stax in STAX_TABLES.items()),
)

XTREME = GameDefinition(
    code=CODE,
    title="Xtreme Hold'em",
    wagers=(
        Wager("ante", WagerKind.REQUIRED, ANTE_IF_QUALIFIED),
        Wager("xtra_bonus", WagerKind.AUTOMATIC, BLIND, equals="ante", needs_pay_table=True),
        Wager("player_bonus", WagerKind.OPTIONAL, needs_pay_table=True),
        Wager("hole_card_bonus", WagerKind.OPTIONAL, needs_pay_table=True),
        Wager("stax", WagerKind.OPTIONAL, needs_pay_table=True, pools=PROGRESSIVE_POOLS),
        Wager("bonus_spin", WagerKind.OPTIONAL),
        Wager("play", WagerKind.DECISION, CALL_EVEN),
    ),
    decision_points=three_streets("play"),
    decision_wager="play",
    qualifier=Qualifier(2),
    pay_tables=PAY_TABLES,
    strategies=("uth_exact", "uth_table", "uth_basic", "always_max"),
    aliases=("xh",),
)
