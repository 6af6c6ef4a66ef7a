"""Refusals of the hold'em engine. Each has a stable ``code``; a refused
command changes nothing (``decide`` raises before any event exists)."""

from __future__ import annotations

from casino.errors import Conflict, DomainError


class PokerError(DomainError):
    """A poker command was refused."""

    code = "poker_error"


class InvalidHandSetup(PokerError):
    """The hand cannot start with these seats, stakes or button."""

    code = "poker_invalid_setup"


class HandAlreadyStarted(Conflict):
    """The hand has already started."""

    code = "poker_hand_already_started"


class HandNotStarted(Conflict):
    """The hand has not started."""

    code = "poker_hand_not_started"


class HandComplete(Conflict):
    """The hand is over; no further command is accepted."""

    code = "poker_hand_complete"


class WrongPhase(Conflict):
    """That command does not fit the hand's current phase."""

    code = "poker_wrong_phase"


class InvalidCards(PokerError):
    """The cards are malformed, duplicated or of the wrong count."""

    code = "poker_invalid_cards"


class UnknownSeat(PokerError):
    """No player in this hand sits in that seat."""

    code = "poker_unknown_seat"


class NotYourTurn(Conflict):
    """It is another player's turn to act."""

    code = "poker_not_your_turn"


class PlayerFolded(Conflict):
    """The player has folded and cannot act again in this hand."""

    code = "poker_player_folded"


class PlayerAllIn(Conflict):
    """The player is all-in and has no further action in this hand."""

    code = "poker_player_all_in"


class CannotCheck(PokerError):
    """There is a bet to call; checking is not possible."""

    code = "poker_cannot_check"


class NothingToCall(PokerError):
    """There is no bet to call."""

    code = "poker_nothing_to_call"


class BetNotAllowed(PokerError):
    """There is already a bet this round: raise instead."""

    code = "poker_bet_not_allowed"


class RaiseNotAllowed(PokerError):
    """There is no bet to raise: bet instead."""

    code = "poker_raise_not_allowed"


class BettingNotReopened(PokerError):
    """Only a short all-in raise followed this player's action: betting is not reopened."""

    code = "poker_betting_not_reopened"


class RaiseCapReached(PokerError):
    """The fixed-limit cap of a bet and three raises has been reached."""

    code = "poker_raise_cap_reached"


class NoOneToRaise(PokerError):
    """Every other player is all-in or covered: only call or fold."""

    code = "poker_no_one_to_raise"


class AmountRequired(PokerError):
    """A bet or raise needs an amount (the player's total bet for the round)."""

    code = "poker_amount_required"


class BelowMinimumBet(PokerError):
    """The bet or raise is under the minimum (and is not all-in)."""

    code = "poker_below_minimum"


class OverStack(PokerError):
    """The amount is more than the player has."""

    code = "poker_over_stack"


class OverPotLimit(PokerError):
    """The pot-limit raise is larger than the pot."""

    code = "poker_over_pot_limit"


class NotFixedLimitSize(PokerError):
    """In fixed limit a bet or raise must be exactly one small or big bet."""

    code = "poker_not_fixed_limit_size"
