"""The house-banked round's refusals: one class per meaning, each with its
stable public ``code`` (docs/rounds.md, docs/live.md) and HTTP status. Pure Python.

Classes without a docstring keep it that way on purpose: ``DomainError`` uses
the docstring as the message, and these have always answered with their code.
"""

from __future__ import annotations

from casino.errors import DomainError, NotFound


class RoundError(DomainError, code="round_error", http_status=409): ...


class WrongPhase(RoundError, code="wrong_phase"):
    """The command is not allowed in the round's current phase."""


class BettingClosed(RoundError, code="betting_closed"):
    """Bets are accepted only while the betting window is open (server clock)."""


class RoundPaused(RoundError, code="round_paused"):
    """The round is paused by the operator."""


class RoundOver(RoundError, code="round_over"):
    """The round is over (settled, voided or closed): it can no longer be paused, resumed or voided."""


class RoundNotPaused(RoundError, code="round_not_paused"):
    """Only a paused round can be resumed."""


class SpotNotOffered(RoundError, code="spot_not_offered", http_status=400):
    """The table offers no such betting spot."""


class BelowMinimum(RoundError, code="below_minimum", http_status=400):
    """A spot's total must reach the table minimum for that spot."""


class AnteRequired(RoundError, code="ante_required", http_status=400):
    """Side bets need an Ante first."""


class InsufficientBalance(RoundError, code="insufficient_balance"):
    """The player's balance does not cover the wager or decision."""


class NothingToUndo(RoundError, code="nothing_to_undo"): ...


class NothingToRepeat(RoundError, code="nothing_to_repeat"): ...


class AlreadyDoubled(RoundError, code="already_doubled"):
    """DOUBLE is allowed once per round."""


class NotInRound(RoundError, code="not_in_round"):
    """The player has no wagers in this round (a round in progress cannot be joined)."""


class NotSeated(RoundError, code="not_seated"):
    """The player has no seat at this table: join it first."""


class NoDecisionWindow(RoundError, code="no_decision_window"):
    """No decision window is open for this player now."""


class AlreadyDecided(RoundError, code="already_decided"): ...


class DecisionNotCovered(RoundError, code="decision_not_covered"):
    """A decision whose amount the balance does not cover is not offered."""


class DecisionWouldBeUncovered(RoundError, code="decision_would_be_uncovered"):
    """The bet would leave the balance unable to cover the smallest decision
    wager the round can force (UTH and Xtreme: 1x Ante at the river; Casino
    Hold'em: the 2x Ante call), so the player could only fold there."""


class TableFull(RoundError, code="table_full"):
    """Per-seat mode: the deck limits the seats."""


class RoundFull(RoundError, code="round_full"):
    """Per-seat mode: the round already deals as many own hands as it has (its seats, at most the deck's 22)."""


class InvalidChip(RoundError, code="invalid_chip", http_status=400):
    """The amount is not one of the table's chip denominations (details.chips)."""


class MandatoryWagerMissing(RoundError, code="mandatory_wager_missing", http_status=400):
    """This table requires these side wagers (details.missing) of every player; bets without them are returned."""


class RoundNotFound(NotFound, code="round_not_found"):
    """No round with this game number."""
