"""The Texas Hold'em ring game's help page as data (pure): seed 001's rules as
the engine implements them (docs/poker.md, RULES.md "Texas Hold'em ring game"),
per betting structure, with seed 001's rake table; a table's page adds its
stakes, buy-in, timers and the rake for each number of players dealt in."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from games.help.content.common import hand_rankings, ranking_notes
from games.help.content.text import Msg, Percent, _
from games.house.rules.definitions import UnknownGame
from games.poker.engine.rules import SEED_001_DEFAULT, RakeRule, Variant, seed_rake_rows

PREFIX = "holdem_"
#: The poker games' codes (as the compliance reports name them): one per betting structure.
POKER_GAMES: dict[str, Variant] = {f"{PREFIX}{variant.value}": variant for variant in Variant}

VARIANT_NAMES: dict[Variant, Msg] = {
    Variant.NO_LIMIT: _("No-limit Texas Hold'em"),
    Variant.POT_LIMIT: _("Pot-limit Texas Hold'em"),
    Variant.FIXED_LIMIT: _("Fixed-limit Texas Hold'em"),
}

BETTING: dict[Variant, Msg] = {
    Variant.NO_LIMIT: _(
        "No limit: the smallest bet is the big blind; a raise must be at least the largest bet or raise "
        "made before it in the round; you may bet or go all-in for any amount up to your stack."
    ),
    Variant.POT_LIMIT: _(
        "Pot limit: the smallest bet is the big blind; the largest raise is to the size of the pot after "
        "your call (call, then raise by everything in the pot)."
    ),
    Variant.FIXED_LIMIT: _(
        "Fixed limit: bets and raises are one small bet (before the flop and on the flop) or one big bet "
        "(turn and river), up to the table's number of bets and raises per round."
    ),
}


@dataclass(frozen=True)
class PokerTerms:
    """What a poker table sets (read by the service from the table)."""

    code: str
    name: str
    variant: Variant
    currency: str
    small_blind: int
    big_blind: int
    ante: int
    buy_in_min: int
    buy_in_max: int
    max_seats: int
    turn_seconds: int
    time_bank_seconds: int
    disconnection_bank_seconds: int
    reservation_seconds: int
    rake: Sequence[tuple[int, RakeRule | None]]  # per number of players dealt in


def variant_of(code: str) -> Variant:
    """The betting structure of poker game ``code``; ``UnknownGame`` (404) if none."""
    try:
        return POKER_GAMES[code]
    except KeyError:
        raise UnknownGame(f"unknown game {code!r}", game=code) from None


def _section(section_id: str, title: Msg, *paragraphs: Msg) -> dict[str, Any]:
    return {"id": section_id, "title": title, "paragraphs": list(paragraphs)}


def sections(variant: Variant) -> list[dict[str, Any]]:
    return [
        _section(
            "objective",
            _("Object of the game"),
            _(
                "Players play against each other for the pot. Each makes the best five-card hand from two hole "
                "cards and five community cards; the best hand at the showdown, or the last player left when "
                "everyone else has folded, wins the pot."
            ),
            _("One standard 52-card deck, without jokers, shuffled (Fisher-Yates, secure generator) for every hand."),
            _("2 to 10 players per table."),
        ),
        _section(
            "how_to_play",
            _("How to play"),
            _(
                "For the first hand each player draws a card: the highest takes the dealer button, suits "
                "breaking ties (Spades, Hearts, Diamonds, Clubs). The button then moves one seat to the left "
                "every hand."
            ),
            _(
                "The player left of the button posts the small blind, the next the big blind (and everyone the "
                "ante, if the table has one). Each player is dealt two hole cards face down."
            ),
            _(
                "Four betting rounds: before the flop (the player left of the big blind acts first), after the "
                "flop (three community cards), after the turn (the fourth) and after the river (the fifth); "
                "after the flop the first player still in the hand left of the button acts first."
            ),
            _(
                "On your turn you may fold, check (when nobody has bet), call (match the highest bet), bet "
                "(when nobody has) or raise."
            ),
            BETTING[variant],
            _(
                "An all-in raise smaller than a full raise does not reopen the betting to a player who has "
                "already acted on a bet in that round: they may only call or fold."
            ),
        ),
        _section(
            "showdown",
            _("Showdown, side pots and ties"),
            _("A bet nobody calls is returned to the player who made it before the showdown."),
            _(
                "When a player is all-in, a side pot is made of what the others put in beyond their stake: an "
                "all-in player can win from each opponent at most what they themselves put in, antes included."
            ),
            _(
                "Each pot goes to its best hand. Identical hands share a pot equally; an odd chip goes to the "
                "first of the winners left of the button."
            ),
        ),
        _section(
            "disconnection",
            _("Disconnection"),
            _(
                "If you are disconnected when your turn comes, you get the table's disconnection time bank "
                "once in the hand. If you are not back by then, you check if you can, otherwise your hand is "
                "folded, and you sit out."
            ),
            _(
                "While you are away you are not dealt into new hands; your seat is kept for the table's "
                "reservation time, then freed and your chips returned to your wallet."
            ),
        ),
        _section(
            "malfunction",
            _("Malfunction"),
            _("Malfunction voids all pays and play."),
            _(
                "The operator may pause a hand; it then either goes on or is cancelled, and a cancelled hand "
                "returns to every player exactly what they put into it, with no rake taken."
            ),
        ),
        _section(
            "rake",
            _("Rake"),
            _(
                "The house takes a rake of %(percent)s of each pot, with a minimum and a cap by pot type and "
                "number of players. No flop, no drop: a hand that ends before the flop pays no rake.",
                percent=Percent(Fraction(SEED_001_DEFAULT.percent_bp, 10_000), 1),
            ),
        ),
    ]


def rake_table() -> list[dict[str, Any]]:
    """Seed 001's rake rows as the engine applies them (euro cents), and the row for other currencies."""
    rows = [
        {
            "currency": "EUR",
            "variant": variant.value,
            "players_min": lo,
            "players_max": hi,
            "small_blind_min": sb_lo,
            "small_blind_max": sb_hi,
            "percent": percent_of(SEED_001_DEFAULT),
            "minimum": minimum,
            "cap": cap,
        }
        for variant, lo, hi, sb_lo, sb_hi, minimum, cap in seed_rake_rows()
    ]
    rows.append(
        {
            "currency": None,
            "variant": None,
            "players_min": None,
            "players_max": None,
            "small_blind_min": None,
            "small_blind_max": None,
            "percent": percent_of(SEED_001_DEFAULT),
            "minimum": SEED_001_DEFAULT.minimum,
            "cap": SEED_001_DEFAULT.cap,
        }
    )
    return rows


def percent_of(rule: RakeRule) -> float:
    return rule.percent_bp / 100


def game_page(code: str, terms: PokerTerms | None = None) -> dict[str, Any]:
    """The help page of poker game ``code`` (``holdem_no_limit`` ...); with ``terms``, of that table."""
    variant = variant_of(code) if terms is None else terms.variant
    page: dict[str, Any] = {
        "kind": "poker",
        "game": f"{PREFIX}{variant.value}",
        "title": VARIANT_NAMES[variant],
        "sections": sections(variant),
        "hand_rankings": hand_rankings(),
        "ranking_notes": ranking_notes(),
        "rake_table": rake_table(),
    }
    if terms is not None:
        page["table"] = table_section(terms)
    return page


def table_section(terms: PokerTerms) -> dict[str, Any]:
    return {
        "code": terms.code,
        "name": terms.name,
        "variant": terms.variant.value,
        "currency": terms.currency,
        "small_blind": terms.small_blind,
        "big_blind": terms.big_blind,
        "ante": terms.ante,
        "buy_in_min": terms.buy_in_min,
        "buy_in_max": terms.buy_in_max,
        "max_seats": terms.max_seats,
        "turn_seconds": terms.turn_seconds,
        "time_bank_seconds": terms.time_bank_seconds,
        "disconnection_bank_seconds": terms.disconnection_bank_seconds,
        "reservation_seconds": terms.reservation_seconds,
        "rake": [
            {
                "players": players,
                "percent": percent_of(rule) if rule else 0.0,
                "minimum": rule.minimum if rule else 0,
                "cap": rule.cap if rule else 0,
                "no_flop_no_drop": rule.no_flop_no_drop if rule else None,
            }
            for players, rule in terms.rake
        ],
        "paragraphs": [
            _(
                "Blinds %(small)s/%(big)s, ante %(ante)s; buy-in %(low)s to %(high)s (minor units of %(currency)s).",
                small=terms.small_blind,
                big=terms.big_blind,
                ante=terms.ante,
                low=terms.buy_in_min,
                high=terms.buy_in_max,
                currency=terms.currency,
            ),
            _(
                "Turn time %(turn)s s, thinking time bank %(bank)s s, disconnection time bank %(away)s s; "
                "a seat is kept %(reserved)s s for a player who sits out.",
                turn=terms.turn_seconds,
                bank=terms.time_bank_seconds,
                away=terms.disconnection_bank_seconds,
                reserved=terms.reservation_seconds,
            ),
        ],
    }
