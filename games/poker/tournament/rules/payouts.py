"""A tournament's prize pool and how it is paid out (issue #23; pure, no Django).

Rules (issue #23 "Money"; RULES.md "Money is integer minor units ... rounded
down"):

- A payout table gives each paid place, 1, 2, 3, ... without a gap, a share in
  whole basis points (1 bp = 0.01 %); the shares sum to exactly 10,000 bp, else
  the table is refused (``tournament_payouts_not_100``). Every share is
  positive, and no place's share is larger than the place above it (the usual
  casino table; RULES.md and seed 001 are silent, so this is the standard
  game's rule, refused with ``tournament_payouts_increasing``).
- The prize pool is ``max(collected buy-ins, guarantee)``; the house covers the
  difference, the *overlay* (``PrizePool.overlay``). Fees are not in the pool.
- Each place gets ``floor(pool * share / 10,000)``; what rounding kept goes to
  the highest finisher among those paid, place 1. So the payouts sum to the
  pool exactly, and the pool account ends at zero.
- Fewer entrants than paid places: only places 1..entrants are paid, and the
  unpaid places' shares are redistributed to them in proportion to their
  shares (each ``floor(pool * share / sum of the paid shares)``, the remainder
  to place 1 as above).
- A payout structure picks the table by the number of entrants from brackets
  ``(max_entrants, table)``: the first bracket whose bound covers them. The
  last bracket may be open (``max_entrants=None``); otherwise more entrants
  than its bound are refused (``tournament_too_many_entrants``).

Amounts are integer minor units of the tournament's currency (money, never
tournament chips).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from games.poker.tournament.rules.errors import (
    InvalidAmount,
    InvalidPayoutStructure,
    InvalidPayoutTable,
    PayoutPlacesNotContiguous,
    PayoutsIncreasing,
    PayoutsNot100,
    TooManyEntrants,
)

BASIS_POINTS = 10_000
"""100 % in basis points: a table's shares sum to exactly this."""


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _amount(value: int, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidAmount(field=field, value=repr(value))
    return value


def _entrants(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidAmount("There must be at least one entrant.", field="entrants", value=repr(value))
    return value


@dataclass(frozen=True, slots=True)
class PayoutTable:
    """Paid places' shares in basis points: ``shares_bp[0]`` is place 1's.
    Validated at construction (see the module's rules)."""

    shares_bp: tuple[int, ...]

    def __post_init__(self) -> None:
        shares = self.shares_bp
        if not isinstance(shares, tuple) or not shares:
            raise InvalidPayoutTable("A payout table pays at least one place.", field="shares_bp")
        for place, share in enumerate(shares, start=1):
            if not _is_int(share) or share <= 0:
                raise InvalidPayoutTable(place=place, share=repr(share))
        total = sum(shares)
        if total != BASIS_POINTS:
            raise PayoutsNot100(total_bp=total)
        for place in range(1, len(shares)):
            if shares[place] > shares[place - 1]:
                raise PayoutsIncreasing(place=place + 1, share=shares[place], above=shares[place - 1])

    @classmethod
    def from_places(cls, places: Mapping[int, int]) -> PayoutTable:
        """A table from ``{place: basis points}``; the places must be exactly 1..n."""
        keys = sorted(places)
        if keys != list(range(1, len(keys) + 1)) or not all(_is_int(k) for k in keys):
            raise PayoutPlacesNotContiguous(places=[repr(k) for k in keys])
        return cls(tuple(places[k] for k in keys))

    @property
    def places(self) -> int:
        """How many places the table pays."""
        return len(self.shares_bp)

    def share_bp(self, place: int) -> int:
        """Place ``place``'s share in basis points (0 for an unpaid place)."""
        return self.shares_bp[place - 1] if 1 <= place <= len(self.shares_bp) else 0

    def amounts(self, pool: int, *, entrants: int | None = None) -> tuple[int, ...]:
        """What each paid place receives from ``pool`` (index 0 is place 1).
        With ``entrants`` below the table's places, only that many places are
        paid, the unpaid shares redistributed proportionally. Sums to ``pool``."""
        pool = _amount(pool, "pool")
        shares = self.shares_bp if entrants is None else self.shares_bp[: _entrants(entrants)]
        return split_by_weights(pool, shares)


def split_by_weights(amount: int, weights: Sequence[int]) -> tuple[int, ...]:
    """``amount`` split in proportion to positive ``weights``, each part rounded
    down; the remainder goes to the first part (the highest finisher).
    The parts sum to ``amount`` exactly."""
    amount = _amount(amount, "amount")
    total = sum(weights)
    if not weights or total <= 0:
        raise InvalidAmount("Nothing to split over.", field="weights")
    parts = [amount * weight // total for weight in weights]
    parts[0] += amount - sum(parts)
    return tuple(parts)


@dataclass(frozen=True, slots=True)
class PrizePool:
    """The prize pool: what the buy-ins collected, the house's guarantee (0 for
    none), the pool paid out and the overlay the house adds."""

    collected: int
    guarantee: int = 0

    def __post_init__(self) -> None:
        _amount(self.collected, "collected")
        _amount(self.guarantee, "guarantee")

    @property
    def amount(self) -> int:
        """The pool paid out: ``max(collected, guarantee)``."""
        return max(self.collected, self.guarantee)

    @property
    def overlay(self) -> int:
        """What the house adds to honour the guarantee (0 if the buy-ins cover it)."""
        return max(0, self.guarantee - self.collected)


@dataclass(frozen=True, slots=True)
class Payouts:
    """The pool and each paid place's amount (``by_place[0]`` is place 1)."""

    pool: PrizePool
    by_place: tuple[int, ...]

    @property
    def paid_places(self) -> int:
        return len(self.by_place)

    def amount(self, place: int) -> int:
        """What place ``place`` receives (0 outside the money)."""
        return self.by_place[place - 1] if 1 <= place <= len(self.by_place) else 0


def payouts(table: PayoutTable, *, collected: int, guarantee: int = 0, entrants: int | None = None) -> Payouts:
    """Pay the pool ``max(collected, guarantee)`` by ``table`` (see ``PayoutTable.amounts``)."""
    pool = PrizePool(collected, guarantee)
    return Payouts(pool, table.amounts(pool.amount, entrants=entrants))


@dataclass(frozen=True, slots=True)
class PayoutBracket:
    """``table`` applies up to ``max_entrants`` entrants (``None``: no bound)."""

    max_entrants: int | None
    table: PayoutTable


@dataclass(frozen=True, slots=True)
class PayoutStructure:
    """Payout tables by number of entrants: brackets in increasing
    ``max_entrants``; a tournament uses the first bracket that covers its
    entrants. Only the last bracket may be open (``max_entrants=None``)."""

    brackets: tuple[PayoutBracket, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.brackets, tuple) or not self.brackets:
            raise InvalidPayoutStructure("A payout structure needs at least one bracket.")
        previous = 0
        for index, bracket in enumerate(self.brackets):
            bound = bracket.max_entrants
            if not isinstance(bracket.table, PayoutTable):
                raise InvalidPayoutStructure(bracket=index)
            if bound is None:
                if index != len(self.brackets) - 1:
                    raise InvalidPayoutStructure("Only the last bracket may be open.", bracket=index)
                continue
            if not _is_int(bound) or bound <= previous:
                raise InvalidPayoutStructure(bracket=index, max_entrants=repr(bound))
            previous = bound

    def table_for(self, entrants: int) -> PayoutTable:
        """The table of the first bracket covering ``entrants``."""
        entrants = _entrants(entrants)
        for bracket in self.brackets:
            if bracket.max_entrants is None or entrants <= bracket.max_entrants:
                return bracket.table
        raise TooManyEntrants(entrants=entrants, max_entrants=self.brackets[-1].max_entrants)

    def payouts(self, *, entrants: int, collected: int, guarantee: int = 0) -> Payouts:
        """The chosen table applied to the pool, paying at most ``entrants`` places."""
        return payouts(self.table_for(entrants), collected=collected, guarantee=guarantee, entrants=entrants)
