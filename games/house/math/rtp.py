"""Exact return to player of side bets and bonus tables, by enumeration.

``wager_rtp(game, wager, table_number, ...)`` returns an ``RtpReport``: the exact
RTP as a ``Fraction`` (total returned / total staked, stake included) and per
outcome its probability and return per unit staked. The pay tables and the
outcome classifier are the ones live settlement uses.

Main-game wagers (UTH ``ante``/``ante_plus``/``call``, Casino Hold'em ``ante``/``call``,
Xtreme ``ante``/``xtra_bonus``/``play``) depend on the player's strategy: their
return under perfect strategy comes from ``exact_main`` (``rtp GAME main``), under
other strategies from ``simulate``, not from here (``MainGameWager``).

STAX: progressive lines return the pool, not a fixed multiple. The report gives
the RTP without them (``rtp``, pools worth 0), with each pool valued at
``pool_values`` (stake multiples) and, for the long run, the fixed return plus
the operator's contribution rate (what the pools pay back on average, once their
reset amounts are funded apart).

Bonus Spin Xtreme: return per wager size with the wheel's expected award.

Every report also carries the exact variance of the return per unit staked
(``RtpReport.variance``; the same as the variance of the net result): STAX's
counts its fixed pays only (progressive lines worth 0), Bonus Spin Xtreme's
adds the wheel's own spread on a trigger (``OutcomeLine.variance_within``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from math import comb
from typing import Any

from casino.errors import DomainError
from games.house.math.enumeration import outcome_counts
from games.house.rules.bonus_spin import EXAMPLE_WHEEL, Wheel
from games.house.rules.definitions import WagerKind
from games.house.rules.outcomes import CARDS_PER_BASIS
from games.house.rules.paytables import BONUS_SPIN_FIXED_AWARDS, Basis, PayKind, PayTable
from games.house.rules.registry import game, pay_table
from games.house.rules.xtreme import CLUB, DIAMOND, HEART, SPADE, STAR


class MainGameWager(DomainError, code="main_game_wager"):
    """A main-game wager's return depends on the player's decisions: use ``simulate``."""


# Documented defaults for the STAX pools, in multiples of the STAX stake: typical
# reset (seed) levels, NOT operator data. Pass ``--pool NAME=MULTIPLE`` for real ones.
DEFAULT_POOL_VALUES: dict[str, Fraction] = {
    STAR: Fraction(10_000),
    SPADE: Fraction(1_000),
    HEART: Fraction(250),
    DIAMOND: Fraction(100),
    CLUB: Fraction(50),
}
DEFAULT_CONTRIBUTION_RATE = Fraction(15, 100)


@dataclass(frozen=True)
class OutcomeLine:
    outcome: str
    count: int
    probability: Fraction
    pay: str
    return_per_unit: Fraction  # total returned per unit staked when this outcome occurs (its mean)
    variance_within: Fraction = Fraction(0)  # variance of that return given the outcome (a wheel spin)

    def as_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "count": self.count,
            "probability": float(self.probability),
            "pay": self.pay,
            "return": float(self.return_per_unit),
            "contribution": float(self.probability * self.return_per_unit),
        }


def variance_of(lines: tuple[OutcomeLine, ...]) -> Fraction:
    """Exact variance of the return per unit staked over ``lines`` (their probabilities
    sum to 1): E[R^2] - E[R]^2, each line's own spread (``variance_within``) included."""
    mean = sum((line.probability * line.return_per_unit for line in lines), Fraction(0))
    second = sum((line.probability * (line.return_per_unit**2 + line.variance_within) for line in lines), Fraction(0))
    return second - mean * mean


class MainReturns:
    """A main game's two returns (per Ante, per total wagered) and the house's
    shares that follow from them; mixed into the exact results
    (``exact_main.ExactMainResult``) and the certified ones
    (``certification.MainResult``)."""

    rtp_per_ante: Fraction
    rtp_per_total: Fraction

    @property
    def house_edge(self) -> Fraction:
        return 1 - self.rtp_per_ante

    @property
    def element_of_risk(self) -> Fraction:
        return 1 - self.rtp_per_total


@dataclass(frozen=True)
class RtpReport:
    game: str
    wager: str
    table: str
    rtp: Fraction
    total: int
    lines: tuple[OutcomeLine, ...]
    variance: Fraction = Fraction(0)  # of the return per unit staked (STAX: fixed pays only)
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "wager": self.wager,
            "paytable": self.table,
            "rtp": float(self.rtp),
            "rtp_exact": f"{self.rtp.numerator}/{self.rtp.denominator}",
            "house_edge": float(1 - self.rtp),
            "variance": float(self.variance),
            "variance_exact": f"{self.variance.numerator}/{self.variance.denominator}",
            "combinations": self.total,
            "outcomes": [line.as_dict() for line in self.lines],
            **self.extra,
        }


def rtp_from_counts(
    table: PayTable, counts: Mapping[str, int], pool_values: Mapping[str, Fraction] | None = None
) -> tuple[Fraction, tuple[OutcomeLine, ...], int]:
    """Exact RTP of ``table`` when its outcomes occur ``counts`` times (equally likely
    card sets; outcomes not in the table lose). Progressive lines are worth
    ``pool_values[pool]`` stake multiples (0 when not given)."""
    total = sum(counts.values())
    lines: list[OutcomeLine] = []
    returned = Fraction(0)
    for outcome, count in counts.items():
        if outcome == "none" and count == 0:
            continue
        if outcome == "none":
            pay_label, multiple = "lose", Fraction(0)
        else:
            pay = table.pay_for(outcome)
            pay_label = pay.label()
            if pay.kind is PayKind.PROGRESSIVE:
                multiple = (pool_values or {}).get(pay.pool or "", Fraction(0))
            else:
                multiple = pay.return_multiple
        returned += count * multiple
        lines.append(OutcomeLine(outcome, count, Fraction(count, total), pay_label, multiple))
    return returned / total, tuple(lines), total


def wager_rtp(
    game_code: str,
    wager: str,
    number: int = 1,
    *,
    pool_values: Mapping[str, Fraction] | None = None,
    contribution_rate: Fraction = DEFAULT_CONTRIBUTION_RATE,
    wheel: Wheel = EXAMPLE_WHEEL,
    bonus_spin_units: int = 1,
) -> RtpReport:
    definition = game(game_code)
    spec = definition.wager(wager)
    if spec.main_rule is not None or spec.kind is WagerKind.DECISION:
        raise MainGameWager(
            f"{game_code} {wager} is a main-game wager; its return needs a strategy: use simulate, "
            f"or rtp {game_code} main for perfect strategy"
        )
    if wager == "bonus_spin":
        return _bonus_spin_rtp(game_code, wheel, bonus_spin_units)
    table = pay_table(game_code, wager, number)
    counts = outcome_counts(table.basis)
    if not spec.pools:  # no progressive lines: the table alone decides the return
        rtp, lines, total = rtp_from_counts(table, counts)
        return RtpReport(game_code, wager, table.name, rtp, total, lines, variance_of(lines))
    pools = dict(DEFAULT_POOL_VALUES if pool_values is None else pool_values)
    fixed, fixed_lines, total = rtp_from_counts(table, counts)
    with_pools, lines, _ = rtp_from_counts(table, counts, pools)
    extra = {
        "rtp_excluding_progressives": float(fixed),
        "rtp_including_progressives": float(with_pools),
        "pool_values_in_stakes": {k: float(v) for k, v in pools.items()},
        "contribution_rate": float(contribution_rate),
        "rtp_long_run_with_contributions": float(fixed + contribution_rate),
        "progressive_hit_probabilities": {
            pool: float(
                sum(
                    (line.probability for line in lines if table.pay_for(line.outcome).pool == pool),
                    start=Fraction(0),
                )
            )
            for pool in pools
        },
    }
    return RtpReport(game_code, wager, table.name, fixed, total, lines, variance_of(fixed_lines), extra)


def _bonus_spin_rtp(game_code: str, wheel: Wheel, units: int) -> RtpReport:
    counts = outcome_counts(Basis.COMMUNITY_FIVE)
    total = comb(52, CARDS_PER_BASIS[Basis.COMMUNITY_FIVE])
    awards = BONUS_SPIN_FIXED_AWARDS[units]
    spin = wheel.expected_multiple()
    spread = wheel.variance_multiple()
    lines: list[OutcomeLine] = []
    returned = Fraction(0)
    for outcome, count in counts.items():
        fixed = awards.get(outcome)
        if fixed is None:
            multiple, label, within = Fraction(0), "lose", Fraction(0)
        else:
            multiple = 1 + Fraction(fixed, units) + spin
            label, within = (f"wheel + {fixed}" if fixed else "wheel"), spread
        returned += count * multiple
        lines.append(OutcomeLine(outcome, count, Fraction(count, total), label, multiple, within))
    extra = {
        "wager_units": units,
        "wheel": wheel.as_dict(),
        "wheel_expected_multiple": float(spin),
        "trigger_probability": float(sum((line.probability for line in lines if line.pay != "lose"), Fraction(0))),
    }
    rtp, frozen = returned / total, tuple(lines)
    return RtpReport(game_code, "bonus_spin", f"bonus_spin.{units}", rtp, total, frozen, variance_of(frozen), extra)
