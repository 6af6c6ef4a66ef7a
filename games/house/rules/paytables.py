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

Each game's tables are data in its rules module (``uth.py``, ``casino_holdem.py``,
``xtreme.py``) and are looked up by ``(game, wager, number)`` through the registry
(``registry.pay_table``), so a table setting or ``--paytable N`` picks one.
Outcomes missing from a table lose.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from types import MappingProxyType
from typing import Any

from casino.errors import DomainError
from games.cards.evaluator import Category

PAY_TABLES_VERSION = "2026.11.1"

# Category names, best first: the evaluator's ``Category`` values.
CATEGORIES: tuple[str, ...] = tuple(category.value for category in Category)


class UnknownPayTable(DomainError, code="unknown_pay_table", http_status=404):
    """No pay table with that game, wager and number."""


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

Lines = tuple[tuple[str, Pay], ...]


def lines(*pays: tuple[str, Pay]) -> Lines:
    """A pay table's lines, best first (shorthand for the games' pay-table data)."""
    return tuple(pays)


def to(n: int, d: int = 1) -> Pay:
    """``n/d`` to 1 (shorthand for the games' pay-table data)."""
    return Pay.to_one(n, d)


# Seed 000 "ANTE PLUS" = seed 004 "Blind" = seed 002 "X-tra Bonus" (UTH and Xtreme);
# RULES.md: three of a kind or less pushes.
BLIND_LINES = lines(
    ("royal_flush", to(500)),
    ("straight_flush", to(50)),
    ("four_of_a_kind", to(10)),
    ("full_house", to(3)),
    ("flush", to(3, 2)),
    ("straight", to(1)),
    ("three_of_a_kind", PUSH),
    ("two_pair", PUSH),
    ("pair", PUSH),
    ("high_card", PUSH),
)


def seven_card_bonus(full_house: int, flush: int, straight: int) -> Lines:
    """The seven-card bonus ladder on the player's best five of seven (seed 000/004
    "Best Five / Trips" on UTH, seed 002 "Player Bonus" on Xtreme): royal flush 50,
    straight flush 40, four of a kind 30 and three of a kind 3 to 1; the full house,
    flush and straight pays are the table's."""
    return lines(
        ("royal_flush", to(50)),
        ("straight_flush", to(40)),
        ("four_of_a_kind", to(30)),
        ("full_house", to(full_house)),
        ("flush", to(flush)),
        ("straight", to(straight)),
        ("three_of_a_kind", to(3)),
    )


# Bonus Spin Xtreme (seed 002): the triggering events and fixed awards, in whole
# currency units, per wager size (1, 2 or 5 units). Every trigger also spins the wheel.
def pool_name(pool: str) -> str:
    """A progressive pool's name as seed 002's STAX pay tables print it
    (``star`` -> "Star Progressive")."""
    return f"{pool.capitalize()} Progressive"


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
