"""Bonus Spin Xtreme (seed 002, RULES.md): triggers, fixed awards and the operator's wheel.

The wager is exactly 1, 2 or 5 currency units. It is settled on the five community
cards: three of a kind or better triggers a wheel spin, plus the fixed award of
``paytables.BONUS_SPIN_FIXED_AWARDS`` for that wager size. The seed does not say
whether the stake comes back on a trigger nor what the wheel shows; this
implementation returns it: a trigger returns stake + fixed award + wheel award,
anything else loses the stake.

The wheel is operator data: segments with an award as a multiple of the wager
(so one wheel serves the 1, 2 and 5 unit wagers) and an integer weight. A spin is
drawn from an injected ``RandomSource`` (the secure one in live play) with
``randbelow(total weight)``: no modulo bias, no float.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from casino.errors import DomainError
from games.cards.shuffle import RandomSource
from games.house.rules.paytables import BONUS_SPIN_FIXED_AWARDS, BONUS_SPIN_WAGER_UNITS


class InvalidBonusSpinWager(DomainError, code="invalid_bonus_spin_wager"):
    """The Bonus Spin Xtreme wager must be exactly 1, 2 or 5 currency units."""


class InvalidWheel(DomainError, code="invalid_wheel"):
    """A wheel needs at least one segment, positive weights and non-negative awards."""


@dataclass(frozen=True)
class WheelSegment:
    label: str
    multiple: int  # the award is multiple x the wager
    weight: int


@dataclass(frozen=True)
class Wheel:
    """An operator's wheel, named and versioned like a pay table."""

    name: str
    version: str
    segments: tuple[WheelSegment, ...]

    def __post_init__(self) -> None:
        if not self.segments or any(s.weight <= 0 or s.multiple < 0 for s in self.segments):
            raise InvalidWheel(wheel=self.name)

    @property
    def total_weight(self) -> int:
        return sum(s.weight for s in self.segments)

    def spin(self, rng: RandomSource) -> WheelSegment:
        """One spin: segment i with probability weight_i / total weight."""
        ticket = rng.randbelow(self.total_weight)
        for segment in self.segments:
            if ticket < segment.weight:
                return segment
            ticket -= segment.weight
        raise AssertionError("unreachable: ticket below total weight")

    def expected_multiple(self) -> Fraction:
        """Mean award per unit of wager over one spin."""
        return Fraction(sum(s.multiple * s.weight for s in self.segments), self.total_weight)

    def variance_multiple(self) -> Fraction:
        """Variance of the award per unit of wager over one spin."""
        second = Fraction(sum(s.multiple**2 * s.weight for s in self.segments), self.total_weight)
        return second - self.expected_multiple() ** 2

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "segments": [{"label": s.label, "multiple": s.multiple, "weight": s.weight} for s in self.segments],
        }


# An example wheel for demos and the ``rtp`` command's default. NOT a certified
# product wheel: the seed prints none; operators configure their own.
EXAMPLE_WHEEL = Wheel(
    name="example-wheel",
    version="1",
    segments=(
        WheelSegment("10x", 10, 10),
        WheelSegment("20x", 20, 8),
        WheelSegment("30x", 30, 6),
        WheelSegment("50x", 50, 4),
        WheelSegment("100x", 100, 2),
    ),
)


def wager_units(stake: int, unit: int) -> int:
    """The wager size in currency units (1, 2 or 5), or ``InvalidBonusSpinWager``."""
    if unit <= 0 or stake % unit or stake // unit not in BONUS_SPIN_WAGER_UNITS:
        raise InvalidBonusSpinWager(stake=stake, unit=unit, allowed=list(BONUS_SPIN_WAGER_UNITS))
    return stake // unit


def fixed_award_units(units: int, outcome: str | None) -> int | None:
    """Fixed award for a triggering ``outcome`` (None: no trigger)."""
    if outcome is None:
        return None
    return BONUS_SPIN_FIXED_AWARDS[units].get(outcome)
