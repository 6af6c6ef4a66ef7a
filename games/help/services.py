"""Help pages for a game or a table (application layer: reads the table, builds
the page with ``games.help.content``, translates it with ``games.help.i18n``).

Refusals: ``unknown_game`` (404), ``table_not_found`` (404),
``poker_table_not_found`` (404), ``unsupported_language`` (400)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from games.help.content import house, poker
from games.help.i18n import help_language, render
from games.house.models import HouseTable
from games.house.rules.bonus_spin import Wheel, WheelSegment
from games.house.rules.registry import GAMES
from games.house.services.seats import get_table
from games.poker import services as poker_services
from games.poker.engine.rules import Variant
from games.poker.models import PokerTable


def game_help(*, game_code: str, language: str | None) -> dict[str, Any]:
    """The page of a house game (``uth``, ``casino_holdem``, ``xtreme``) or a poker
    game (``holdem_no_limit``, ``holdem_pot_limit``, ``holdem_fixed_limit``) in
    ``language`` (``?lang=``; ``None``: the request's). Language is checked first."""
    chosen = help_language(language)
    page = house.game_page(game_code) if game_code in GAMES else poker.game_page(game_code)
    return {"language": chosen, **render(page, chosen)}


def table_help(*, table_id: int, language: str | None) -> dict[str, Any]:
    """The page of house table ``table_id``: its game's rules with the wagers it offers,
    the pay tables in force, its limits, chips and mandatory wagers."""
    chosen = help_language(language)
    table = get_table(table_id=table_id)
    page = house.game_page(table.game, table_terms(table))
    return {"language": chosen, **render(page, chosen)}


def table_terms(table: HouseTable) -> house.TableTerms:
    rates = (table.progressives or {}).get("contribution_bp") or {}
    return house.TableTerms(
        code=table.code,
        name=table.name,
        currency=table.currency,
        limits=table.limits,
        pay_tables=table.pay_tables,
        wheel=_wheel(table.wheel),
        stax_contribution=Fraction(sum(int(r) for r in rates.values()), 10_000) if rates else None,
        chips=[int(chip) for chip in table.chips],
        mandatory_wagers=[str(wager) for wager in table.mandatory_wagers],
        multi_play=table.multi_play,
        betting_seconds=table.betting_seconds,
        decision_seconds=table.decision_seconds,
    )


def _wheel(data: Any) -> Wheel | None:
    if not isinstance(data, dict) or not data.get("segments"):
        return None
    segments = tuple(WheelSegment(s["label"], int(s["multiple"]), int(s["weight"])) for s in data["segments"])
    return Wheel(str(data.get("name", "")), str(data.get("version", "")), segments)


def poker_table_help(*, table_id: int, language: str | None) -> dict[str, Any]:
    """The page of poker table ``table_id``: seed 001's rules for its betting
    structure, its stakes, buy-in, timers and its rake for each number of players."""
    chosen = help_language(language)
    table: PokerTable = poker_services.get_table(table_id=table_id)
    terms = poker.PokerTerms(
        code=table.code,
        name=table.name,
        variant=Variant(table.variant),
        currency=table.currency,
        small_blind=table.small_blind,
        big_blind=table.big_blind,
        ante=table.ante,
        buy_in_min=table.buy_in_min,
        buy_in_max=table.buy_in_max,
        max_seats=table.max_seats,
        turn_seconds=table.turn_seconds,
        time_bank_seconds=table.time_bank_seconds,
        disconnection_bank_seconds=table.disconnection_bank_seconds,
        reservation_seconds=table.reservation_seconds,
        rake=[(n, poker_services.rake_rule(table, n)) for n in range(2, table.max_seats + 1)],
    )
    page = poker.game_page(poker.PREFIX + table.variant, terms)
    return {"language": chosen, **render(page, chosen)}
