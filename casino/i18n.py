"""Player-facing messages in the player's language (English and French; docs/auth.md, "Translations").

A refusal keeps its stable ``code`` in every language. Its English ``message``
is what the raise site wrote (a class docstring or an f-string with values),
sent unchanged. In another language the message is this catalog's entry for
the code, translated by Django's gettext (``casino/locale/<lang>/LC_MESSAGES``):
one sentence per code, without values; the values a client may show are in the
refusal's ``details``, which are the same in every language. So no raise site
changes, and a translated message never contradicts the facts it carries.

The language: the player's profile (``PlayerProfile.language``) when the
caller is known, else the request's ``Accept-Language`` (``PlayerLocaleMiddleware``
on ``/api/``; the websocket handshake's header), else English.

Adding a refusal a player can meet: its code and an English sentence in
``PLAYER_MESSAGES``, then ``make messages`` and its French ``msgstr`` in
``casino/locale/fr/LC_MESSAGES/django.po`` (tests/platform/test_i18n.py fails until both are there).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.middleware.locale import LocaleMiddleware
from django.utils import translation
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy
from django.utils.translation.trans_real import parse_accept_lang_header

#: The English sentence of each player-facing refusal code; the msgid its translations are keyed by.
PLAYER_MESSAGES: dict[str, Promise] = {
    # Platform, REST plumbing (DRF's own codes included: a client sees them too).
    "invalid_request": _("The request is invalid."),
    "invalid_json": _("The body is not valid JSON."),
    "too_deep": _("The body nests arrays or objects too deeply."),
    "invalid_text": _("The body holds text that is not valid (not UTF-8, or a NUL character)."),
    "parse_error": _("The request body could not be read."),
    "not_authenticated": _("Log in first: the request carries no valid credentials."),
    "authentication_failed": _("The credentials are not valid: log in again."),
    "token_expired": _("Your session has expired: log in again."),
    "permission_denied": _("You may not do this."),
    "forbidden": _("You may not do this."),
    "not_found": _("No such object."),
    "method_not_allowed": _("This method is not allowed here."),
    "not_acceptable": _("The requested response format is not available."),
    "unsupported_media_type": _("The body's media type is not supported."),
    "throttled": _("Too many requests: try again shortly."),
    "rate_limited": _("Too many messages: this one was dropped."),
    "conflict": _("The command conflicts with the current state."),
    "value_out_of_range": _("A number in the request is too large: nothing was changed."),
    "invalid_credentials": _("Unknown username or wrong password."),
    "login_locked_out": _("Too many failed logins: try again after the waiting time."),
    "invalid_settings": _("The settings must be a JSON object of setting names."),
    "unknown_setting": _("There is no such setting."),
    "invalid_setting": _("This value is not allowed for this setting."),
    "malformed_message": _("Send one JSON object per text frame."),
    "unknown_message": _("Unknown message type."),
    "bad_resume_seq": _("The resume point is not one this table has reached: take the snapshot."),
    "server_error": _("Something went wrong: retry the command."),
    "idempotency_key_required": _("Every bet and decision needs an idempotency key (1 to 100 characters)."),
    "invalid_idempotency_key": _("The idempotency key must be 1 to 100 characters."),
    "idempotency_key_reused": _("This idempotency key was already used for a different request."),
    "invalid_field": _("A required field is missing or of the wrong type."),
    "invalid_query": _("A query parameter is not a whole number in range."),
    "invalid_amount": _("Amounts are positive whole numbers in minor units."),
    # Money, cashier and responsible gaming.
    "insufficient_funds": _("Your balance is not enough for this."),
    "currency_mismatch": _("The currencies do not match."),
    "unknown_currency": _("This currency is not known."),
    "ledger_error": _("The money movement was refused."),
    "invalid_cashier_request": _("The cashier request is invalid."),
    "cashier_state_conflict": _("The transaction is not in a state that allows this."),
    "responsible_gaming": _("Refused by your responsible-gaming settings."),
    "self_excluded": _("You are self-excluded: no bets and no deposits until the date given."),
    "cooling_off": _("You are cooling off: no bets and no deposits until the date given."),
    "deposit_limit_exceeded": _("This deposit would exceed your deposit limit."),
    "loss_limit_exceeded": _("This bet could take your losses past your loss limit."),
    "session_time_limit_reached": _("Your session time limit is reached: bets resume in a new session."),
    "invalid_limit": _("The limit or exclusion asked for is not valid."),
    "invalid_limit_currency": _("Limits are set in one of your wallet currencies."),
    # House tables and rounds.
    "table_not_found": _("No such table."),
    "table_closed": _("The table is closed."),
    "table_full": _("The table is full."),
    "table_misconfigured": _("The table cannot run a round now."),
    "already_seated": _("You already have a seat at this table."),
    "not_seated": _("You have no seat at this table: join it first."),
    "too_many_tables": _("You are playing the most tables allowed at once."),
    "unknown_game": _("No such game."),
    "unsupported_language": _("The help pages are in English (en) and French (fr) only."),
    "game_not_found": _("No game with this number in your history."),
    "round_not_found": _("No round with this game number."),
    "round_error": _("The round refused this command."),
    "round_full": _("The round already deals as many hands as it can."),
    "round_paused": _("The round is paused by the operator."),
    "round_not_current": _("This round is no longer the table's current round."),
    "wrong_phase": _("This is not allowed at this point of the round."),
    "betting_closed": _("Betting is closed."),
    "below_minimum": _("The bet is below the table minimum for this spot."),
    "ante_required": _("Side bets need an Ante first."),
    "missing_required_wager": _("The Ante is required."),
    "spot_not_offered": _("The table offers no such betting spot."),
    "unknown_wager": _("The game has no such wager."),
    "invalid_stake": _("A stake must be a positive whole number of minor units."),
    "invalid_chip": _("This is not one of the table's chips."),
    "mandatory_wager_missing": _(
        "This table requires these side wagers of every player; bets without them are returned."
    ),
    "multi_play_not_allowed": _("This table is not available for multi-game play: it is played alone."),
    "invalid_bonus_spin_wager": _("The Bonus Spin Xtreme wager must be 1, 2 or 5 currency units."),
    "insufficient_balance": _("Your balance does not cover this bet or decision."),
    "decision_not_covered": _("Your balance does not cover this decision."),
    "decision_would_be_uncovered": _(
        "This bet would leave your balance unable to cover a decision the round requires."
    ),
    "decision_after_call": _("No decision is taken after a call or a fold."),
    "already_decided": _("You have already decided at this point."),
    "already_doubled": _("DOUBLE is allowed once per round."),
    "no_decision_window": _("No decision is open for you now."),
    "option_not_offered": _("That option is not offered at this point."),
    "not_in_round": _("You have no wagers in this round."),
    "nothing_to_repeat": _("There is no previous bet to repeat."),
    "nothing_to_undo": _("There is no bet to undo."),
    "missing_pay_table": _("The round has no pay table for this wager."),
    "unknown_pay_table": _("No such pay table."),
    "wheel_spin_required": _("The Bonus Spin Xtreme wager needs its wheel spin to settle."),
    "invalid_card": _("That is not a valid card."),
    "invalid_cards": _("The cards are not valid."),
    "duplicate_card": _("The same card appears more than once."),
    "deal_not_committed": _("This round was dealt before deals were committed: it has nothing to verify."),
    "deck_mismatch": _("The deck does not match its published commitment."),
    "chat_rate_limited": _("Too many chat messages: wait a few seconds."),
    "invalid_chat_message": _("A chat message is 1 to 280 characters of text."),
    # Poker.
    "poker_error": _("The poker command was refused."),
    "poker_table_not_found": _("No such poker table."),
    "poker_table_closed": _("The poker table is closed."),
    "poker_tournament_table": _("This is a tournament table: seats and chips are the tournament's."),
    "poker_already_seated": _("You already have a seat at this table."),
    "poker_not_seated": _("You have no seat at this table."),
    "poker_seat_taken": _("Another player sits in that seat."),
    "poker_invalid_seat": _("That seat number is not one of this table's seats."),
    "poker_buy_in_out_of_range": _("Your chips at the table would be outside the buy-in minimum and maximum."),
    "poker_currency_in_use": _("The table's currency cannot change while chips are in play."),
    "poker_no_chips": _("You have no chips at the table: add money first."),
    "poker_in_hand": _("You are in the hand being played: wait for it to end or fold first."),
    "poker_no_hand": _("No hand is being played at this table."),
    "poker_not_in_hand": _("You are not dealt into this hand."),
    "poker_hand_not_found": _("No such hand."),
    "poker_hand_paused": _("The hand is paused by the operator."),
    "poker_hand_voided": _("The hand was voided: every chip put in was returned."),
    "poker_hand_already_started": _("The hand has already started."),
    "poker_hand_not_started": _("The hand has not started."),
    "poker_hand_complete": _("The hand is over."),
    "poker_invalid_action": _("That is not a valid poker action."),
    "poker_invalid_cards": _("The cards are malformed, duplicated or of the wrong count."),
    "poker_not_your_turn": _("It is another player's turn to act."),
    "poker_wrong_phase": _("That command does not fit the hand's current phase."),
    "poker_amount_required": _("A bet or raise needs an amount."),
    "poker_below_minimum": _("The bet or raise is under the minimum."),
    "poker_bet_not_allowed": _("There is already a bet: raise instead."),
    "poker_raise_not_allowed": _("There is no bet to raise: bet instead."),
    "poker_betting_not_reopened": _("Betting is not reopened: you may only call or fold."),
    "poker_cannot_check": _("There is a bet to call: you cannot check."),
    "poker_nothing_to_call": _("There is no bet to call."),
    "poker_no_one_to_raise": _("Every other player is all-in or covered: only call or fold."),
    "poker_not_fixed_limit_size": _("In fixed limit a bet or raise is exactly one small or big bet."),
    "poker_over_pot_limit": _("The raise is larger than the pot limit."),
    "poker_over_stack": _("The amount is more than your chips."),
    "poker_player_all_in": _("You are all-in: no further action in this hand."),
    "poker_player_folded": _("You have folded this hand."),
    "poker_raise_cap_reached": _("The cap of a bet and three raises has been reached."),
    "poker_unknown_seat": _("No player in this hand sits in that seat."),
    "tournament_not_found": _("No such tournament."),
    "tournament_full": _("The tournament is full."),
    "tournament_already_registered": _("You are already registered for this tournament."),
    "tournament_not_registered": _("You are not registered for this tournament."),
    "tournament_already_started": _("The tournament has started: registrations are no longer refunded."),
    "tournament_registration_closed": _("Registration for this tournament is closed."),
    "tournament_player_eliminated": _("You have been eliminated from this tournament."),
}

#: The message of each kind of player notice (websocket ``{"type": "notice", "notice": {"kind", "message", ...}}``),
#: interpolated from the notice's own fields, which its one sender always sets.
NOTICE_MESSAGES: dict[str, Promise] = {
    "reality_check": ngettext_lazy(
        "You have been playing for %(elapsed_minutes)d minute.",
        "You have been playing for %(elapsed_minutes)d minutes.",
        "elapsed_minutes",
    ),
}

#: Refusal codes only staff meet (operator tools, payment provider callbacks,
#: start-up checks, internal consistency): their messages stay English, as the
#: staff admin does. A code here is never shown to a player.
STAFF_CODES: frozenset[str] = frozenset(
    {
        "bad_signature", "callback_mismatch", "invalid_callback_body", "missing_external_reference",
        "cashier_own_transaction", "config_changed_meanwhile", "invalid_table_config", "invalid_table_identity",
        "table_identity_fixed", "table_already_open", "table_already_closed", "invalid_wheel",
        "no_round_in_play", "round_not_paused", "round_over", "reason_required",
        "poker_hand_not_paused", "poker_pot_mismatch",
        "poker_button_seat", "poker_duplicate_seat", "poker_empty_stack", "poker_invalid_raise_cap",
        "poker_invalid_stakes", "poker_invalid_setup", "poker_player_count",
        "tournament_invalid", "tournament_start_required", "tournament_template_not_found",
        "tournament_not_cancellable", "tournament_not_paused", "tournament_not_running", "tournament_error",
        "tournament_duplicate_player", "tournament_invalid_amount", "tournament_invalid_elapsed",
        "tournament_invalid_finish", "tournament_invalid_paid_places", "tournament_invalid_payout_structure",
        "tournament_invalid_payouts", "tournament_invalid_schedule", "tournament_invalid_snapshot",
        "tournament_invalid_table_size", "tournament_level_blinds_decrease", "tournament_level_invalid_blinds",
        "tournament_level_invalid_duration", "tournament_not_enough_players", "tournament_payout_places_not_contiguous",
        "tournament_payouts_increasing", "tournament_payouts_not_100", "tournament_schedule_empty",
        "tournament_seating_error", "tournament_too_many_entrants", "tournament_unknown_level",
        "phh_incomplete", "phh_invalid", "phh_invalid_rules", "phh_variant_unsupported",
        "main_game_wager", "invalid_main_results", "export_refused", "period_not_sealed",
        "invalid_report_parameter", "unknown_report", "metrics_refused", "metrics_unauthenticated",
        "health_check_busy", "health_check_refused", "roles_need_postgresql", "runtime_role_missing",
        "runtime_role_too_powerful", "seal_refused", "event_not_authentic", "integrity_epoch_moved",
        "invalid_event", "unknown_event", "unknown_account", "unknown_hold", "hold_exists",
        "hold_already_resolved", "post_exceeds_hold", "same_account", "invalid_transfer_kind",
        "stale_stream_version", "domain_error", "error",
    }
)  # fmt: skip


def is_english(language: str | None) -> bool:
    """English (or no language active): the messages as raised."""
    return language is None or language.split("-")[0] == "en"


def localized_message(code: str, message: str, language: str | None = None) -> str:
    """A refusal's message in ``language`` (default: the active one): ``message``
    itself in English or for a code the catalog does not hold; else the code's
    catalog sentence, translated. An English message written for engineers (a
    refusal class's docstring with its ``literal`` markup) is the catalog's
    English sentence instead: players never read docstring markup."""
    language = language or translation.get_language()
    sentence = PLAYER_MESSAGES.get(code)
    if is_english(language):
        return str(sentence) if sentence is not None and "``" in message else message
    if sentence is None:
        return message
    with translation.override(language):
        return str(sentence)


def localized_notice(notice: dict[str, Any], language: str) -> dict[str, Any]:
    """A player notice with its ``message`` in ``language`` (as sent where its kind is not in the catalog)."""
    sentence = NOTICE_MESSAGES.get(str(notice.get("kind")))
    if sentence is None or "message" not in notice:
        return notice
    with translation.override(language):
        return {**notice, "message": sentence % notice}


def localized_frame(content: Any, language: str | None) -> Any:
    """A websocket frame with its error's or notice's ``message`` in ``language`` (every other frame
    unchanged). An error frame's message is ``localized_message``'s in English too, as REST's is."""
    if not isinstance(content, dict):
        return content
    if content.get("type") == "notice" and isinstance(content.get("notice"), dict) and not is_english(language):
        assert language is not None
        return {**content, "notice": localized_notice(content["notice"], language)}
    if content.get("type") != "error":
        return content
    code, message = content.get("code"), content.get("message")
    if not isinstance(code, str) or not isinstance(message, str):
        return content
    localized = localized_message(code, message, language or settings.LANGUAGE_CODE)
    return content if localized == message else {**content, "message": localized}


def supported_language(value: str | None) -> str | None:
    """``value`` as one of ``settings.LANGUAGES`` (``fr-CA`` is ``fr``), else ``None``."""
    if not value:
        return None
    try:
        return translation.get_supported_language_variant(value)
    except LookupError:
        return None


def header_language(accept_language: str) -> str:
    """The language an ``Accept-Language`` header picks among ``settings.LANGUAGES``
    (the default, ``settings.LANGUAGE_CODE``, when it names none)."""
    for code, _quality in parse_accept_lang_header(accept_language):
        if code == "*":
            break
        chosen = supported_language(code)
        if chosen is not None:
            return chosen
    return settings.LANGUAGE_CODE


def profile_language(user_id: int) -> str | None:
    """The language the player chose in their settings, or ``None`` (not chosen, no profile)."""
    from casino.models import PlayerProfile  # here: this module is imported by settings-time code

    chosen = PlayerProfile.objects.filter(user_id=user_id).values_list("language", flat=True).first()
    return chosen or None


def player_language(*, user_id: int | None, accept_language: str) -> str:
    """The language to answer a player in: their profile's, else ``Accept-Language``'s."""
    return (profile_language(user_id) if user_id is not None else None) or header_language(accept_language)


class PlayerLocaleMiddleware(LocaleMiddleware):
    """Django's ``LocaleMiddleware`` (``Accept-Language`` picks the language, the
    answer says ``Content-Language``) for the player API under ``/api/`` only:
    the staff admin stays English. A known player's profile language is applied
    where the caller is known, after DRF's authentication (``casino.api``)."""

    def process_request(self, request: HttpRequest) -> None:
        if request.path.startswith("/api/"):
            super().process_request(request)
        else:  # a thread's last request may have activated another language
            translation.activate(settings.LANGUAGE_CODE)

    def process_response(self, request: HttpRequest, response: Any) -> Any:
        if request.path.startswith("/api/"):
            return super().process_response(request, response)
        return response
