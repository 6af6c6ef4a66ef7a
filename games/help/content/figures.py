"""The return figures a help page shows, all from the project's math (pure):

- side bets and bonus tables: ``games.house.math.rtp.wager_rtp`` (exact, by enumeration
  of every card set; the same function ``manage.py rtp`` and the certification pack
  call), computed once per process (a few seconds for the seven-card tables);
- the main game under perfect strategy: the complete exact analysis
  (``exact_main``) takes minutes and gigabytes, so the page reads its result
  shipped with the strategy tables (``games/house/math/data/*_exact.npz``, the
  ``summary`` that ``exact_strategy.save_tables`` writes from a complete run),
  checked through the certification's own parser (``certification.parse_main_results``).
"""

from __future__ import annotations

import json
from functools import cache

import numpy as np

from games.house.math.certification import MAIN_RESULTS_FORMAT, MainResult, main_wagers_with_tables, parse_main_results
from games.house.math.exact_strategy import TABLE_PATHS, TABLES_OF_GAME
from games.house.math.rtp import RtpReport, wager_rtp
from games.house.rules.bonus_spin import Wheel
from games.house.rules.registry import game, pay_table


@cache
def side_bet_return(game_code: str, wager: str, number: int) -> RtpReport:
    """The exact return of pay table ``number`` of side bet ``wager`` (STAX: its fixed pays)."""
    return wager_rtp(game_code, wager, number)


def bonus_spin_return(game_code: str, wheel: Wheel, units: int) -> RtpReport:
    """Bonus Spin Xtreme's exact return for a ``units`` wager with the table's ``wheel``."""
    return wager_rtp(game_code, "bonus_spin", wheel=wheel, bonus_spin_units=units)


@cache
def main_game_return(game_code: str) -> MainResult | None:
    """The main game's perfect-strategy return (per Ante and per total wagered) for
    pay table 1 of its priced main wager, from the shipped complete analysis; ``None``
    when no shipped analysis is of this game's main game (its rules or pay table differ)."""
    definition = game(game_code)
    source = TABLES_OF_GAME.get(game_code)
    priced = main_wagers_with_tables(definition)
    if source is None or len(priced) != 1:
        return None
    with np.load(TABLE_PATHS[source]) as data:
        summary = json.loads(str(data["summary"]))
    if not summary.get("complete"):
        return None
    analysed_game, analysed_wager, number = str(summary["paytable"]).split(".")
    analysed = game(analysed_game)
    ours = definition.pay_table(priced[0], 1)
    if pay_table(analysed_game, analysed_wager, int(number)).lines != ours.lines or not _same_main_game(
        analysed_game, game_code
    ):
        return None
    document = {
        "format": MAIN_RESULTS_FORMAT,
        "game": game_code,
        "rules_version": analysed.rules_version,
        "results": [
            {
                "pay_tables": {priced[0]: 1},
                "rtp_per_ante": summary["rtp_per_ante_exact"],
                "rtp_per_total": summary["rtp_per_total_exact"],
                "house_edge": summary["house_edge"],
                "element_of_risk": summary["element_of_risk"],
            }
        ],
    }
    return parse_main_results(document, TABLE_PATHS[source].name).results[0]


def _same_main_game(analysed: str, code: str) -> bool:
    """The two games settle their main wagers alike: same rules in wager order, same
    decision multipliers and timeout defaults, same dealer qualification."""
    a, b = game(analysed), game(code)

    def shape(definition_code: str) -> tuple[object, ...]:
        d = game(definition_code)
        rules = tuple((w.kind, w.main_rule) for w in d.wagers if w.main_rule is not None)
        points = tuple(
            (p.street, tuple((o.multiplier, o.folds) for o in p.options), p.timeout_default) for p in d.decision_points
        )
        return rules, points, d.qualifier

    return a.rules_version == b.rules_version and shape(analysed) == shape(code)
