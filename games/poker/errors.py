"""Refusals of the poker table services (stable codes; nothing changes).

One class per meaning: what the hand itself refuses (whose turn, amounts, a
finished hand) is the engine's (``games.poker.engine.errors``), and the
services raise those classes (e.g. ``HandComplete``) rather than a second one
for the same meaning; this module holds the table's own refusals (seats,
chips, a hand paused or voided by the operator)."""

from __future__ import annotations

from casino.errors import Conflict, DomainError, NotFound


class PokerTableNotFound(NotFound, code="poker_table_not_found"):
    """No such poker table."""


class PokerTableClosed(Conflict, code="poker_table_closed"):
    """The poker table is closed."""


class SeatTaken(Conflict, code="poker_seat_taken"):
    """Another player sits in that seat."""


class InvalidSeat(DomainError, code="poker_invalid_seat"):
    """The seat number is not one of this table's seats (1 to its seat count)."""


class AlreadySeated(Conflict, code="poker_already_seated"):
    """The player already holds a seat at this table (one seat per table)."""


class NotSeated(Conflict, code="poker_not_seated"):
    """The player has no seat at this table."""


class BuyInOutOfRange(DomainError, code="poker_buy_in_out_of_range"):
    """The chips at the table would be outside the table's buy-in minimum and maximum."""


class InHand(Conflict, code="poker_in_hand"):
    """The player is in the hand being played: wait for it to end (or fold first)."""


class NoChips(Conflict, code="poker_no_chips"):
    """The player has no chips at the table: add money first."""


class NoHand(Conflict, code="poker_no_hand"):
    """No hand is being played at this table."""


class NotInHand(Conflict, code="poker_not_in_hand"):
    """The player is not dealt into the hand being played."""


class InvalidAction(DomainError, code="poker_invalid_action"):
    """``action`` must be fold, check, call, bet, raise or all_in; ``amount`` a whole number of chips."""


class HandNotFound(NotFound, code="poker_hand_not_found"):
    """No hand with this id (for a history or replay: none the caller was dealt into or sat out of)."""


class HandPaused(Conflict, code="poker_hand_paused"):
    """The hand is paused by the operator (malfunction): it will be resumed or voided."""


class HandNotPaused(Conflict, code="poker_hand_not_paused"):
    """Only a paused hand can be resumed."""


class HandVoided(Conflict, code="poker_hand_voided"):
    """The hand was voided (malfunction): every chip put in was returned and it has no result."""


class PotMismatch(Conflict, code="poker_pot_mismatch"):
    """The chips to return do not add up to the hand's pot account: nothing was voided (check the ledger)."""


class CurrencyInUse(Conflict, code="poker_currency_in_use"):
    """The table's currency cannot change while anyone is seated or a hand is open: their chips are in it."""


class TournamentNotFound(NotFound, code="tournament_not_found"):
    """No such tournament."""


class TournamentAlreadyRegistered(Conflict, code="tournament_already_registered"):
    """The player is already registered for this tournament."""


class TournamentRegistrationClosed(Conflict, code="tournament_registration_closed"):
    """Registration is closed: the tournament has started (after late registration), ended or been cancelled."""


class TournamentFull(Conflict, code="tournament_full"):
    """The tournament has as many players registered as it takes."""


class TournamentNotRegistered(Conflict, code="tournament_not_registered"):
    """The player is not registered for this tournament."""


class TournamentAlreadyStarted(Conflict, code="tournament_already_started"):
    """The tournament has started (or ended): registrations are no longer refunded."""


class TournamentNotCancellable(Conflict, code="tournament_not_cancellable"):
    """A finished or already cancelled tournament cannot be cancelled."""


class TournamentNotRunning(Conflict, code="tournament_not_running"):
    """Only a running tournament can be paused (and only a paused one resumed)."""


class TournamentNotPaused(Conflict, code="tournament_not_paused"):
    """The tournament is not paused."""


class TournamentPlayerEliminated(Conflict, code="tournament_player_eliminated"):
    """The player has been eliminated from this tournament: they have no seat and no action."""


class TournamentTable(Conflict, code="poker_tournament_table"):
    """A tournament's table: seats are assigned by the tournament, chips are tournament
    chips; nobody sits down, adds chips or leaves with them."""


class TournamentTemplateNotFound(NotFound, code="tournament_template_not_found"):
    """No such tournament template."""


class TournamentStartRequired(DomainError, code="tournament_start_required"):
    """A scheduled tournament needs a start time (``start_at``) in the future."""


class TournamentInvalid(DomainError, code="tournament_invalid"):
    """The tournament the template would make is not valid (see ``details``: the problem of each field)."""
