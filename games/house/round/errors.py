"""The house-banked round's refusals: one class per meaning, each with its
stable public ``code`` (docs/api.md) and HTTP status. Pure Python.

Classes without a docstring keep it that way on purpose: ``DomainError`` uses
the docstring as the message, and these have always answered with their code.
"""

from __future__ import annotations

from casino.errors import DomainError


class RoundError(DomainError):
    code = "round_error"
    http_status = 409


class WrongPhase(RoundError):
    """The command is not allowed in the round's current phase."""

    code = "wrong_phase"


class BettingClosed(RoundError):
    """Bets are accepted only while the betting window is open (server clock)."""

    code = "betting_closed"


class RoundPaused(RoundError):
    """The round is paused by the operator."""

    code = "round_paused"


class SpotNotOffered(RoundError):
    """The table offers no such betting spot."""

    code = "spot_not_offered"
    http_status = 400


class BelowMinimum(RoundError):
    """A spot's total must reach the table minimum for that spot."""

    code = "below_minimum"
    http_status = 400


class AnteRequired(RoundError):
    """Side bets need an Ante first."""

    code = "ante_required"
    http_status = 400


class InsufficientBalance(RoundError):
    """The player's balance does not cover the wager or decision."""

    code = "insufficient_balance"


class NothingToUndo(RoundError):
    code = "nothing_to_undo"


class NothingToRepeat(RoundError):
    code = "nothing_to_repeat"


class AlreadyDoubled(RoundError):
    """DOUBLE is allowed once per round."""

    code = "already_doubled"


class NotInRound(RoundError):
    """The player has no wagers in this round (a round in progress cannot be joined)."""

    code = "not_in_round"


class NotSeated(RoundError):
    """The player has no seat at this table: join it first."""

    # One meaning for the bet path and the seat services alike (409 on both).
    code = "not_seated"


class NoDecisionWindow(RoundError):
    """No decision window is open for this player now."""

    code = "no_decision_window"


class AlreadyDecided(RoundError):
    code = "already_decided"


class DecisionNotCovered(RoundError):
    """A decision whose amount the balance does not cover is not offered."""

    code = "decision_not_covered"


class TableFull(RoundError):
    """Per-seat mode: the deck limits the seats."""

    code = "table_full"


class InvalidChip(RoundError):
    # The domain's refusal of a chip amount (not a positive int). The API
    # refuses a malformed request amount before that (``games.api.MalformedAmount``).
    code = "invalid_chip"
    http_status = 400
