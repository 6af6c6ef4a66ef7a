"""Pay tables as named, versioned, immutable data (RULES.md and seeds 000, 002, 003, 004).

A pay table maps *outcomes* (a hand category such as ``flush``, or a special
outcome such as ``pair_of_aces`` or ``royal_flush_diamonds``) to a ``Pay``. Every
pay is an exact rational:

- ``Pay.to_one(n)``: "n to 1", returns the stake plus n x stake;
- ``Pay.for_one(n)``: "n for 1" (STAX), returns n x stake in total, stake included;
- ``Pay.push()``: returns the stake; ``Pay.lose()``: returns nothing;
- ``Pay.progressive(pool)``: the named STAX pool pays (its amount comes from the pool).

Amounts are integer minor units; a fractional return (3:2 on an odd stake) is
rounded **down** and ``Payout.rounding_kept`` says exactly what the house kept.

Tables are looked up by ``(game, wager, number)`` in ``PAY_TABLES`` (``pay_table``),
so a table setting or ``--paytable N`` picks one. Outcomes missing from a table lose.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from types import MappingProxyType
from typing import Any

from casino.errors import DomainError

PAY_TABLES_VERSION = "2026.11.1"

# Category names, best first (the evaluator's ``Category`` values).
CATEGORIES: tuple[str, ...] = (
    "royal_flush",
    "straight_flush",
    "four_of_a_kind",
    "full_house",
    "flush",
    "straight",
    "three_of_a_kind",
    "two_pair",
    "pair",
    "high_card",
)


class UnknownPayTable(DomainError):
    """No pay table with that game, wager and number."""

    code = "unknown_pay_table"
    http_status = 404


class PayKind(StrEnum):
    TO_ONE = "to_one"
    FOR_ONE = "for_one"
    PUSH = "push"
    LOSE = "lose"
    PROGRESSIVE = "progressive"


@dataclass(frozen=True)
class Payout:
    """What one wager returns: ``returned`` minor units (0 on a loss, the stake on a
    push, stake + winnings on a win) and ``rounding_kept`` (exact, < 1 minor unit)."""

    returned: int
    rounding_kept: Fraction = Fraction(0)


@dataclass(frozen=True)
class Pay:
    """One pay-table line's pay. ``ratio`` is n in "n to 1" / "n for 1"."""

    kind: PayKind
    ratio: Fraction = Fraction(0)
    pool: str | None = None

    @staticmethod
    def to_one(numerator: int, denominator: int = 1) -> Pay:
        return Pay(PayKind.TO_ONE, Fraction(numerator, denominator))

    @staticmethod
    def for_one(n: int) -> Pay:
        return Pay(PayKind.FOR_ONE, Fraction(n))

    @staticmethod
    def push() -> Pay:
        return Pay(PayKind.PUSH)

    @staticmethod
    def lose() -> Pay:
        return Pay(PayKind.LOSE)

    @staticmethod
    def progressive(pool: str) -> Pay:
        return Pay(PayKind.PROGRESSIVE, pool=pool)

    @property
    def return_multiple(self) -> Fraction:
        """Exact total returned per unit staked (stake included). A progressive
        line returns nothing from the house: its pool pays it."""
        if self.kind is PayKind.TO_ONE:
            return 1 + self.ratio
        if self.kind is PayKind.FOR_ONE:
            return self.ratio
        if self.kind is PayKind.PUSH:
            return Fraction(1)
        return Fraction(0)

    @property
    def outcome(self) -> str:
        """``win``, ``push`` or ``lose`` for the wager's settlement."""
        if self.kind is PayKind.PUSH:
            return "push"
        if self.kind is PayKind.LOSE:
            return "lose"
        return "win"

    def pay(self, stake: int) -> Payout:
        """Return for ``stake`` minor units, rounded down, keeping the remainder."""
        if stake < 0:
            raise ValueError("stake must not be negative")
        exact = self.return_multiple * stake
        returned = exact.numerator // exact.denominator
        return Payout(returned, exact - returned)

    def label(self) -> str:
        if self.kind is PayKind.TO_ONE:
            return f"{_ratio_text(self.ratio)} to 1"
        if self.kind is PayKind.FOR_ONE:
            return f"{_ratio_text(self.ratio)} for 1"
        if self.kind is PayKind.PROGRESSIVE:
            return f"{self.pool} progressive"
        return self.kind.value


def _ratio_text(ratio: Fraction) -> str:
    if ratio.denominator == 1:
        return str(ratio.numerator)
    # "3 to 2" reads as 3/2 to 1; print it the way the seeds do.
    return f"{ratio.numerator}/{ratio.denominator}"


class Basis(StrEnum):
    """Which cards a pay table looks at (and how they are classified)."""

    PLAYER_SEVEN = "player_seven"  # best five of the player's 2 + 5 community
    FIRST_FIVE = "first_five"  # player's 2 + flop, "pair of aces" apart (CH Bonus)
    HOLE_CARDS = "hole_cards"  # the player's two cards (Hole Card Bonus)
    STAX_FIVE = "stax_five"  # player's 2 + flop, royal in diamonds apart (STAX)
    COMMUNITY_FIVE = "community_five"  # the five community cards (Bonus Spin Xtreme)


@dataclass(frozen=True)
class PayTable:
    """An immutable, named and versioned pay table. ``lines`` are best first;
    an outcome not listed loses."""

    game: str
    wager: str
    number: int
    basis: Basis
    lines: tuple[tuple[str, Pay], ...]
    version: str = PAY_TABLES_VERSION
    title: str = ""
    _index: Mapping[str, Pay] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", MappingProxyType(dict(self.lines)))

    @property
    def name(self) -> str:
        return f"{self.game}.{self.wager}.{self.number}"

    def pay_for(self, outcome: str) -> Pay:
        return self._index.get(outcome, LOSE)

    def outcomes(self) -> Iterator[str]:
        return (outcome for outcome, _ in self.lines)

    def as_dict(self) -> dict[str, Any]:
        """What a round records so replay never depends on today's configuration."""
        return {
            "name": self.name,
            "version": self.version,
            "basis": self.basis.value,
            "lines": [
                {"outcome": o, "kind": p.kind.value, "ratio": str(p.ratio), "pool": p.pool} for o, p in self.lines
            ],
        }


LOSE = Pay.lose()
PUSH = Pay.push()

# Outcomes beyond the ten categories.
PAIR_OF_ACES = "pair_of_aces"
ACE_FACE_SUITED = "ace_face_suited"
ACE_FACE = "ace_face"
ROYAL_FLUSH_DIAMONDS = "royal_flush_diamonds"
ROYAL_FLUSH_OTHER = "royal_flush_other"

STAR, SPADE, HEART, DIAMOND, CLUB = "star", "spade", "heart", "diamond", "club"
PROGRESSIVE_POOLS: tuple[str, ...] = (STAR, SPADE, HEART, DIAMOND, CLUB)


def _t(*pays: tuple[str, Pay]) -> tuple[tuple[str, Pay], ...]:
    return tuple(pays)


def _to(n: int, d: int = 1) -> Pay:
    return Pay.to_one(n, d)


def _for(n: int) -> Pay:
    return Pay.for_one(n)


def _prog(pool: str) -> Pay:
    return Pay.progressive(pool)


# Seed 000 "ANTE PLUS" = seed 004 "Blind"; RULES.md: three of a kind or less pushes.
_BLIND_LINES = _t(
    ("royal_flush", _to(500)),
    ("straight_flush", _to(50)),
    ("four_of_a_kind", _to(10)),
    ("full_house", _to(3)),
    ("flush", _to(3, 2)),
    ("straight", _to(1)),
    ("three_of_a_kind", PUSH),
    ("two_pair", PUSH),
    ("pair", PUSH),
    ("high_card", PUSH),
)

_BEST_FIVE_LINES = _t(
    ("royal_flush", _to(50)),
    ("straight_flush", _to(40)),
    ("four_of_a_kind", _to(30)),
    ("full_house", _to(8)),
    ("flush", _to(7)),
    ("straight", _to(4)),
    ("three_of_a_kind", _to(3)),
)

_CH_ANTE_LINES = _t(
    ("royal_flush", _to(100)),
    ("straight_flush", _to(20)),
    ("four_of_a_kind", _to(10)),
    ("full_house", _to(3)),
    ("flush", _to(2)),
    ("straight", _to(1)),
    ("three_of_a_kind", _to(1)),
    ("two_pair", _to(1)),
    ("pair", _to(1)),
    ("high_card", _to(1)),
)

_CH_BONUS_LINES = _t(
    ("royal_flush", _to(100)),
    ("straight_flush", _to(50)),
    ("four_of_a_kind", _to(40)),
    ("full_house", _to(30)),
    ("flush", _to(20)),
    ("straight", _to(7)),
    ("three_of_a_kind", _to(7)),
    ("two_pair", _to(7)),
    (PAIR_OF_ACES, _to(7)),
)


def _player_bonus(full_house: int, flush: int, straight: int) -> tuple[tuple[str, Pay], ...]:
    return _t(
        ("royal_flush", _to(50)),
        ("straight_flush", _to(40)),
        ("four_of_a_kind", _to(30)),
        ("full_house", _to(full_house)),
        ("flush", _to(flush)),
        ("straight", _to(straight)),
        ("three_of_a_kind", _to(3)),
    )


def _hole_card_bonus(aces: int, pair: int) -> tuple[tuple[str, Pay], ...]:
    return _t((PAIR_OF_ACES, _to(aces)), (ACE_FACE_SUITED, _to(20)), (ACE_FACE, _to(10)), ("pair", _to(pair)))


def _stax(*pays: Pay) -> tuple[tuple[str, Pay], ...]:
    names = (
        ROYAL_FLUSH_DIAMONDS,
        ROYAL_FLUSH_OTHER,
        "straight_flush",
        "four_of_a_kind",
        "full_house",
        "flush",
        "straight",
        "three_of_a_kind",
        "two_pair",
    )
    return tuple(zip(names, pays, strict=True))


_STAX_TABLES: dict[int, tuple[tuple[str, Pay], ...]] = {
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

# Bonus Spin Xtreme (seed 002): the triggering events and fixed awards, in whole
# currency units, per wager size (1, 2 or 5 units). Every trigger also spins the wheel.
BONUS_SPIN_WAGER_UNITS: tuple[int, ...] = (1, 2, 5)
BONUS_SPIN_FIXED_AWARDS: Mapping[int, Mapping[str, int]] = MappingProxyType(
    {
        1: MappingProxyType(
            {
                "royal_flush": 500,
                "straight_flush": 50,
                "four_of_a_kind": 25,
                "full_house": 10,
                "flush": 0,
                "straight": 0,
                "three_of_a_kind": 0,
            }
        ),
        2: MappingProxyType(
            {
                "royal_flush": 500,
                "straight_flush": 100,
                "four_of_a_kind": 50,
                "full_house": 25,
                "flush": 0,
                "straight": 0,
                "three_of_a_kind": 0,
            }
        ),
        5: MappingProxyType(
            {
                "royal_flush": 1000,
                "straight_flush": 250,
                "four_of_a_kind": 100,
                "full_house": 50,
                "flush": 0,
                "straight": 0,
                "three_of_a_kind": 0,
            }
        ),
    }
)


def _tables() -> dict[tuple[str, str, int], PayTable]:
    tables: list[PayTable] = [
        PayTable("uth", "ante_plus", 1, Basis.PLAYER_SEVEN, _BLIND_LINES, title="Ante Plus (Blind), seed 000"),
        PayTable("uth", "best_five", 1, Basis.PLAYER_SEVEN, _BEST_FIVE_LINES, title="Best Five / Trips, seed 000/004"),
        PayTable("casino_holdem", "ante", 1, Basis.PLAYER_SEVEN, _CH_ANTE_LINES, title="Ante, seed 003"),
        PayTable("casino_holdem", "bonus", 1, Basis.FIRST_FIVE, _CH_BONUS_LINES, title="AA Bonus, seed 003"),
        PayTable("xtreme", "xtra_bonus", 1, Basis.PLAYER_SEVEN, _BLIND_LINES, title="X-tra Bonus, seed 002"),
    ]
    player_bonus = {1: (9, 7, 4), 2: (8, 6, 5), 3: (8, 7, 4), 4: (7, 6, 5)}
    for number, (fh, fl, st) in player_bonus.items():
        tables.append(
            PayTable(
                "xtreme", "player_bonus", number, Basis.PLAYER_SEVEN, _player_bonus(fh, fl, st), title="Player Bonus"
            )
        )
    hole_card = {1: (30, 5), 2: (25, 5), 3: (30, 4)}
    for number, (aces, pair) in hole_card.items():
        tables.append(
            PayTable(
                "xtreme", "hole_card_bonus", number, Basis.HOLE_CARDS, _hole_card_bonus(aces, pair), title="Hole Card"
            )
        )
    for number, lines in _STAX_TABLES.items():
        tables.append(PayTable("xtreme", "stax", number, Basis.STAX_FIVE, lines, title="STAX"))
    return {(t.game, t.wager, t.number): t for t in tables}


PAY_TABLES: Mapping[tuple[str, str, int], PayTable] = MappingProxyType(_tables())


def pay_table(game: str, wager: str, number: int = 1) -> PayTable:
    """The pay table ``number`` of ``wager`` in ``game``; ``UnknownPayTable`` if none."""
    try:
        return PAY_TABLES[(game, wager, number)]
    except KeyError:
        numbers = sorted(n for g, w, n in PAY_TABLES if g == game and w == wager)
        raise UnknownPayTable(
            f"no pay table {number} for {game} {wager}", game=game, wager=wager, available=numbers
        ) from None


def table_numbers(game: str, wager: str) -> list[int]:
    return sorted(n for g, w, n in PAY_TABLES if g == game and w == wager)
