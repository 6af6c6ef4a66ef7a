"""Stakes, betting structures and the rake of seed 001 (pure data)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from games.poker.engine.errors import InvalidHandSetup


class Variant(StrEnum):
    """Betting structure. Seed 001's rake table calls them "Unlimited",
    "Limit" and "Fixed"."""

    NO_LIMIT = "no_limit"
    POT_LIMIT = "pot_limit"
    FIXED_LIMIT = "fixed_limit"


@dataclass(frozen=True, slots=True)
class RakeRule:
    """Rake = ``floor(pot * percent_bp / 10000)``, raised to ``minimum``,
    capped at ``cap`` and at the pot; all in minor units. With
    ``no_flop_no_drop`` a hand that ends before the flop pays none."""

    percent_bp: int = 250
    minimum: int = 0
    cap: int = 300
    no_flop_no_drop: bool = True

    def amount(self, pot: int, *, flop_seen: bool) -> int:
        if pot <= 0 or (self.no_flop_no_drop and not flop_seen):
            return 0
        rake = max(pot * self.percent_bp // 10_000, self.minimum)
        return min(rake, self.cap, pot)


# Seed 001's table, in euro cents: (pot type, players lo, hi, small blind lo, hi, minimum, cap).
_SEED_001_EUR: tuple[tuple[Variant, int, int, int, int | None, int, int], ...] = (
    (Variant.FIXED_LIMIT, 2, 10, 0, 50, 0, 300),
    (Variant.FIXED_LIMIT, 2, 10, 51, 1000, 2, 300),
    (Variant.FIXED_LIMIT, 2, 10, 1001, None, 0, 300),
    (Variant.POT_LIMIT, 2, 3, 0, None, 0, 100),
    (Variant.POT_LIMIT, 4, 5, 0, None, 0, 200),
    (Variant.POT_LIMIT, 6, 10, 0, None, 0, 300),
    (Variant.NO_LIMIT, 2, 3, 0, None, 0, 100),
    (Variant.NO_LIMIT, 4, 5, 0, None, 0, 200),
    (Variant.NO_LIMIT, 6, 10, 0, None, 0, 300),
)
SEED_001_DEFAULT = RakeRule(percent_bp=250, minimum=0, cap=300)


def seed_rake_rows() -> tuple[tuple[Variant, int, int, int, int | None, int, int], ...]:
    """Seed 001's euro rows as ``seed_rake_rule`` reads them: (pot type, players lo, hi,
    small blind lo, hi or None, minimum, cap), amounts in cents (the help page prints them)."""
    return _SEED_001_EUR


def seed_rake_rule(
    variant: Variant, *, players: int, small_blind: int, currency: str = "EUR", no_flop_no_drop: bool = True
) -> RakeRule:
    """The rake of seed 001 for a hand of ``players`` dealt in at a table with
    this small blind (minor units). The seed's amounts are euros; the rows
    with a small-blind bracket (0-0.50, 0.51-10, >10 euros) are read in cents,
    and a small blind between two brackets' edges (e.g. 50.5 cents) cannot
    occur in integer cents. Other currencies use the seed's "Any" row."""
    if currency != "EUR":
        return RakeRule(SEED_001_DEFAULT.percent_bp, SEED_001_DEFAULT.minimum, SEED_001_DEFAULT.cap, no_flop_no_drop)
    for row_variant, lo, hi, sb_lo, sb_hi, minimum, cap in _SEED_001_EUR:
        if (
            row_variant is variant
            and lo <= players <= hi
            and sb_lo <= small_blind
            and (sb_hi is None or small_blind <= sb_hi)
        ):
            return RakeRule(250, minimum, cap, no_flop_no_drop)
    return RakeRule(SEED_001_DEFAULT.percent_bp, SEED_001_DEFAULT.minimum, SEED_001_DEFAULT.cap, no_flop_no_drop)


def allocate_rake(rake: int, pots: tuple[int, ...] | list[int]) -> tuple[int, ...]:
    """Split ``rake`` over the pots in proportion to their size (largest
    remainder; ties go to the earlier pot, the main pot first), so a short
    all-in player's main pot pays no more than its share."""
    total = sum(pots)
    if rake <= 0 or total <= 0:
        return tuple(0 for _ in pots)
    shares = [rake * amount // total for amount in pots]
    left = rake - sum(shares)
    order = sorted(range(len(pots)), key=lambda i: (-(rake * pots[i] % total), i))
    for i in order[:left]:
        shares[i] += 1
    return tuple(shares)


class Reopening(StrEnum):
    """When a short all-in (a raise below a full raise) reopens the betting.

    ``ACTED`` (RULES.md, every table): it does not reopen it to a player who
    has already acted on a wager this round (called, bet or raised) until the
    raises since their action add up to a full raise (at least the minimum
    bet and the round's last full raise); a player who only checked, or has
    not acted, has every option. ``POKERKIT``: pokerkit 0.7.7's rule, which
    PHH files are played under: the round's full-raise amount starts at 0
    (so the first bet or raise of a round is always full, even a short
    all-in), a player who acted since the last full raise may not raise while
    the consecutive short all-ins since then add up to less than it, and
    nobody may raise who has less than it to call."""

    ACTED = "acted"
    POKERKIT = "pokerkit"


class PotSplit(StrEnum):
    """How tied hands share the pots at the showdown.

    ``PER_POT`` (RULES.md, every table): each pot (main pot, then side pots)
    is split on its own among its best hands, its odd chips to the first of
    them left of the button. ``POKERKIT``: pokerkit 0.7.7's rule, which PHH
    files are played under: once the hands that win no part of any pot are
    killed, neighbouring pots (main pot first) left with the same players
    are merged, and each merged pot is split once among its best hands, its
    odd chips to the first of them left of the button (pokerkit's lowest
    player index). The two differ only in odd chips: two pots of 5 tied by
    the same two players pay the first of them 3 + 3 and the other 2 + 2
    split per pot, 5 each merged."""

    PER_POT = "per_pot"
    POKERKIT = "pokerkit"


@dataclass(frozen=True, slots=True)
class RaiseCap:
    """The fixed-limit raise cap as a rule (see ``HandConfig``)."""

    bets: int | None = 4
    blind_is_bet: bool = True
    heads_up_uncapped: bool = False


TABLE_DEFAULT_CAP = RaiseCap(4, blind_is_bet=True, heads_up_uncapped=False)
"""Today's table rule: a bet and three raises a street, the big blind the bet preflop."""
POKERKIT_CAP = RaiseCap(4, blind_is_bet=False, heads_up_uncapped=False)
"""pokerkit's ``FixedLimitTexasHoldem`` (PHH ``FT``): four bet/raise actions a
street, blinds not counted (a fifth bet preflop), heads-up too."""


@dataclass(frozen=True, slots=True)
class HandConfig:
    """A hand's stakes. ``blinds_or_straddles`` and ``antes`` are in the
    conventional order (small blind, big blind, first straddle, ...) exactly
    as PHH and pokerkit write them: with three or more players entry ``i`` is
    posted by the ``i``-th player left of the button; heads-up the button
    posts entry 0 (the small blind) and the other player entry 1. ``ante``
    is an ante every player posts, used when ``antes`` is empty.
    ``min_bet`` is the no-limit/pot-limit minimum bet and raise increment
    (default: the big blind); fixed limit bets ``small_bet`` preflop and on
    the flop, ``big_bet`` on the turn and river (default: big blind and twice
    it). All amounts are integer chips (minor units).

    The fixed-limit raise cap is a table rule: ``raise_cap`` bets and
    raises per street (``None``: no cap). With ``blind_is_bet`` the big
    blind is the preflop round's bet, so it counts towards the cap (the
    default: a bet and three raises on every street); without it only
    actions count, as in pokerkit's ``FixedLimitTexasHoldem`` (four
    bet/raise actions, so a fifth bet preflop). With ``heads_up_uncapped``
    there is no cap while only two players are still in the hand. No-limit
    and pot-limit have no cap.

    ``reopening`` is the short all-in rule (``Reopening``), ``pot_split``
    how tied hands share the pots (``PotSplit``); tables use ``ACTED`` and
    ``PER_POT``, PHH files pokerkit's."""

    variant: Variant
    blinds_or_straddles: tuple[int, ...]
    antes: tuple[int, ...] = ()
    ante: int = 0
    min_bet: int | None = None
    small_bet: int | None = None
    big_bet: int | None = None
    rake: RakeRule | None = None
    raise_cap: int | None = 4
    blind_is_bet: bool = True
    heads_up_uncapped: bool = False
    reopening: Reopening = Reopening.ACTED
    pot_split: PotSplit = PotSplit.PER_POT

    def __post_init__(self) -> None:
        if self.raise_cap is not None and (isinstance(self.raise_cap, bool) or self.raise_cap < 1):
            raise InvalidHandSetup("the raise cap allows at least one bet a street", code="poker_invalid_raise_cap")
        blinds = self.blinds_or_straddles
        if len(blinds) < 2 or any(b < 0 for b in blinds) or blinds[1] <= 0:
            raise InvalidHandSetup("needs a small blind >= 0 and a big blind > 0", code="poker_invalid_stakes")
        if self.ante < 0 or any(a < 0 for a in self.antes):
            raise InvalidHandSetup("antes cannot be negative", code="poker_invalid_stakes")
        for value in (self.min_bet, self.small_bet, self.big_bet):
            if value is not None and value <= 0:
                raise InvalidHandSetup("bet sizes must be positive", code="poker_invalid_stakes")

    @property
    def small_blind(self) -> int:
        return self.blinds_or_straddles[0]

    @property
    def big_blind(self) -> int:
        return self.blinds_or_straddles[1]

    def capped(self, *, players_in: int) -> int | None:
        """The bets and raises allowed this street with ``players_in``
        players not folded, or ``None`` when there is no cap."""
        if self.variant is not Variant.FIXED_LIMIT or (self.heads_up_uncapped and players_in <= 2):
            return None
        return self.raise_cap

    def street_min_bet(self, street: int) -> int:
        """Minimum bet and raise increment (the fixed size in fixed limit)."""
        if self.variant is Variant.FIXED_LIMIT:
            if street < 2:
                return self.small_bet or self.big_blind
            return self.big_bet or 2 * (self.small_bet or self.big_blind)
        return self.min_bet or self.big_blind
