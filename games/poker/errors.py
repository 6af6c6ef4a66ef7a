"""Refusals of the poker table services (stable codes; nothing changes).

One class per meaning: what the hand itself refuses (whose turn, amounts, a
finished hand) is the engine's (``games.poker.engine.errors``), and the
services raise those classes (e.g. ``HandComplete``) rather than a second one
for the same meaning; this module holds the table's own refusals (seats,
chips, a hand paused or voided by the operator)."""

from __future__ import annotations

from casino.errors import Conflict, DomainError, NotFound


class PokerTableNotFound(NotFound):
    """No such poker table."""

    code = "poker_table_not_found"


class PokerTableClosed(Conflict):
    """The poker table is closed."""

    code = "poker_table_closed"


class SeatTaken(Conflict):
    """Another player sits in that seat."""

    code = "poker_seat_taken"


class InvalidSeat(DomainError):
    """The seat number is not one of this table's seats (1 to its seat count)."""

    code = "poker_invalid_seat"


class AlreadySeated(Conflict):
    """The player already holds a seat at this table (one seat per table)."""

    code = "poker_already_seated"


class NotSeated(Conflict):
    """The player has no seat at this table."""

    code = "poker_not_seated"


class BuyInOutOfRange(DomainError):
    """The chips at the table would be outside the table's buy-in minimum and maximum."""

    code = "poker_buy_in_out_of_range"


class InHand(Conflict):
    """The player is in the hand being played: wait for it to end (or fold first)."""

    code = "poker_in_hand"


class NoChips(Conflict):
    """The player has no chips at the table: add money first."""

    code = "poker_no_chips"


class NoHand(Conflict):
    """No hand is being played at this table."""

    code = "poker_no_hand"


class NotInHand(Conflict):
    """The player is not dealt into the hand being played."""

    code = "poker_not_in_hand"


class InvalidAction(DomainError):
    """``action`` must be fold, check, call, bet, raise or all_in; ``amount`` a whole number of chips."""

    code = "poker_invalid_action"


class HandNotFound(NotFound):
    """No hand with this id in the caller's history."""

    code = "poker_hand_not_found"


class HandPaused(Conflict):
    """The hand is paused by the operator (malfunction): it will be resumed or voided."""

    code = "poker_hand_paused"


class HandNotPaused(Conflict):
    """Only a paused hand can be resumed."""

    code = "poker_hand_not_paused"


class HandVoided(Conflict):
    """The hand was voided (malfunction): every chip put in was returned and it has no result."""

    code = "poker_hand_voided"


class PotMismatch(Conflict):
    """The chips to return do not add up to the hand's pot account: nothing was voided (check the ledger)."""

    code = "poker_pot_mismatch"
