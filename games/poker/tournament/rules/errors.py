"""Refusals of the tournaments' money and eliminations domain. Each has a stable
``code``; a refused value or call changes nothing (the domain holds no state).

The levels, seating and balancing modules keep their own refusals in their own
modules; these are the payouts' and the eliminations'."""

from __future__ import annotations

from casino.errors import DomainError


class TournamentError(DomainError, code="tournament_error"):
    """A tournament value or command was refused."""


class InvalidPayoutTable(TournamentError, code="tournament_invalid_payouts"):
    """The payout table is malformed: each paid place needs a positive whole number of basis points."""


class PayoutsNot100(InvalidPayoutTable, code="tournament_payouts_not_100"):
    """The payout table's percentages do not sum to exactly 100 % (10,000 basis points)."""


class PayoutPlacesNotContiguous(InvalidPayoutTable, code="tournament_payout_places_not_contiguous"):
    """The paid places must be 1, 2, 3, ... without a gap."""


class PayoutsIncreasing(InvalidPayoutTable, code="tournament_payouts_increasing"):
    """A place may not pay a larger share than the place above it."""


class InvalidPayoutStructure(TournamentError, code="tournament_invalid_payout_structure"):
    """The brackets must have strictly increasing entrant bounds; only the last may be open."""


class TooManyEntrants(TournamentError, code="tournament_too_many_entrants"):
    """No bracket of the payout structure covers this number of entrants."""


class InvalidAmount(TournamentError, code="tournament_invalid_amount"):
    """Amounts are whole minor units, zero or more; entrant counts are whole numbers of at least one."""


class InvalidFinish(TournamentError, code="tournament_invalid_finish"):
    """The finishing order is inconsistent (a player twice, an empty bust, a bust with no survivor, ...)."""
