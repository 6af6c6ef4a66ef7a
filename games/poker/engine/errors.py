"""Refusals of the hold'em engine. Each has a stable ``code``; a refused
command changes nothing (``decide`` raises before any event exists)."""

from __future__ import annotations

from casino.errors import Conflict, DomainError


class PokerError(DomainError, code="poker_error"):
    """A poker command was refused."""


class InvalidHandSetup(PokerError, code="poker_invalid_setup"):
    """The hand cannot start with these seats, stakes or button."""


class HandAlreadyStarted(Conflict, code="poker_hand_already_started"):
    """The hand has already started."""


class HandNotStarted(Conflict, code="poker_hand_not_started"):
    """The hand has not started."""


class HandComplete(Conflict, code="poker_hand_complete"):
    """The hand is over; no further command is accepted."""


class WrongPhase(Conflict, code="poker_wrong_phase"):
    """That command does not fit the hand's current phase."""


class InvalidCards(PokerError, code="poker_invalid_cards"):
    """The cards are malformed, duplicated or of the wrong count."""


class UnknownSeat(PokerError, code="poker_unknown_seat"):
    """No player in this hand sits in that seat."""


class NotYourTurn(Conflict, code="poker_not_your_turn"):
    """It is another player's turn to act."""


class PlayerFolded(Conflict, code="poker_player_folded"):
    """The player has folded and cannot act again in this hand."""


class PlayerAllIn(Conflict, code="poker_player_all_in"):
    """The player is all-in and has no further action in this hand."""


class CannotCheck(PokerError, code="poker_cannot_check"):
    """There is a bet to call; checking is not possible."""


class NothingToCall(PokerError, code="poker_nothing_to_call"):
    """There is no bet to call."""


class BetNotAllowed(PokerError, code="poker_bet_not_allowed"):
    """There is already a bet this round: raise instead."""


class RaiseNotAllowed(PokerError, code="poker_raise_not_allowed"):
    """There is no bet to raise: bet instead."""


class BettingNotReopened(PokerError, code="poker_betting_not_reopened"):
    """Only a short all-in raise followed this player's action: betting is not reopened."""


class RaiseCapReached(PokerError, code="poker_raise_cap_reached"):
    """The fixed-limit cap of a bet and three raises has been reached."""


class NoOneToRaise(PokerError, code="poker_no_one_to_raise"):
    """Every other player is all-in or covered: only call or fold."""


class AmountRequired(PokerError, code="poker_amount_required"):
    """A bet or raise needs an amount (the player's total bet for the round)."""


class BelowMinimumBet(PokerError, code="poker_below_minimum"):
    """The bet or raise is under the minimum (and is not all-in)."""


class OverStack(PokerError, code="poker_over_stack"):
    """The amount is more than the player has."""


class OverPotLimit(PokerError, code="poker_over_pot_limit"):
    """The pot-limit raise is larger than the pot."""


class NotFixedLimitSize(PokerError, code="poker_not_fixed_limit_size"):
    """In fixed limit a bet or raise must be exactly one small or big bet."""
