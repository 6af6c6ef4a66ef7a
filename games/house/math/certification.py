"""The certification pack's figures (pure): every game, every pay table, the shuffle, the RNG.

``certification_report(...)`` returns one JSON-ready mapping (``report.json``; the
HTML page is rendered from the same mapping by ``certification_html``):

- ``versions``: each game's rules version (``GameDefinition.rules_version``), the
  pay tables' version (``PayTable.version``) and a SHA-256 content hash of every
  pay table (its canonical ``as_dict`` JSON), so a table changed without a new
  version number is still told apart;
- ``games``: per game its wagers, decisions and dealer qualification; every
  side-bet and bonus table with its exact RTP, the probability (hit frequency) of
  each pay line (losing lines included, so they sum to 1) and the exact variance
  of the return per unit staked (``rtp.wager_rtp``, all card sets enumerated);
  the main wagers' pay tables and, when supplied, the exact perfect-strategy
  results of the main game (``parse_main_results``), otherwise a plain statement
  that they were not supplied: no main-game figure is ever made up here;
- ``shuffle``: the project's chi-square test of the production shuffle
  (``games.cards.shuffle_stats``) with its parameters;
- ``rng``: what the random number generator is and how deals are committed.

Main-game results (``MAIN_RESULTS_FORMAT``), one JSON document per game::

    {
      "format": "casino.main_rtp/1",
      "game": "uth",
      "rules_version": "2026.11.1",            # optional: checked against the code's
      "method": "exact enumeration ...",       # optional, free text
      "results": [
        {
          "pay_tables": {"ante_plus": 1},      # main wagers' table numbers (default 1 each)
          "rtp_per_ante": "0.97815...",        # number, decimal string or exact "n/d"
          "rtp_per_total": "0.99473...",
          "house_edge": "0.02184...",          # optional; must equal 1 - rtp_per_ante
          "element_of_risk": "0.00526...",     # optional; must equal 1 - rtp_per_total
          "mean_total_wagered": "4.15...",     # optional, in antes
          "variance_per_ante": "...",          # optional, of the net result per ante
          "outcomes": [{"outcome": "win 4x", "probability": "...", "net": "5"}],   # optional
          "strategy": [                        # optional: the optimal strategy's tables
            {"name": "preflop", "title": "...", "columns": ["hand", "action"], "rows": [["AA", "4x"]]}
          ]
        }
      ]
    }

Numbers keep their exact value when given as a fraction string. A house edge or
element of risk that disagrees with its RTP (beyond 1e-9) is refused
(``InvalidMainResults``), as is an unknown game or pay table.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import sqrt
from typing import Any

from casino.errors import DomainError
from games.cards.shuffle import RandomSource
from games.cards.shuffle_stats import DECK_SIZE, SHUFFLES, fairness_report, position_counts
from games.house.math.rtp import MainReturns, RtpReport, wager_rtp
from games.house.rules.bonus_spin import EXAMPLE_WHEEL, Wheel
from games.house.rules.definitions import GameDefinition, WagerKind
from games.house.rules.paytables import BONUS_SPIN_WAGER_UNITS, PAY_TABLES_VERSION, PayTable
from games.house.rules.registry import game, games

REPORT_FORMAT = "casino.certification/1"
MAIN_RESULTS_FORMAT = "casino.main_rtp/1"
DEFAULT_SHUFFLES = 100_000
SHUFFLE_LEVEL = 0.99
TOLERANCE = Fraction(1, 10**9)

NOT_SUPPLIED = (
    "The main game's exact perfect-strategy results were not supplied to this report "
    "(certification_report --main-results DIR): no figure is given for its RTP, house edge, "
    "element of risk or optimal strategy."
)


class InvalidMainResults(DomainError, code="invalid_main_results"):
    """A main-game results document does not follow ``casino.main_rtp/1`` or contradicts the code."""


# --- numbers ------------------------------------------------------------------------------------


def exact_text(value: Fraction) -> str:
    """``n/d`` (``n`` for whole numbers): the exact value, for JSON."""
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def to_fraction(value: Any, what: str) -> Fraction:
    """A number, a decimal string or an exact ``n/d`` string, as an exact ``Fraction``."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise InvalidMainResults(f"{what}: expected a number or 'n/d', got {value!r}", field=what)
    try:
        return Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
    except (ValueError, ZeroDivisionError):
        raise InvalidMainResults(f"{what}: not a number: {value!r}", field=what) from None


def figure(value: Fraction) -> dict[str, Any]:
    """A figure as both a float and its exact text."""
    return {"value": float(value), "exact": exact_text(value)}


# --- versions -----------------------------------------------------------------------------------


def pay_table_hash(table: PayTable) -> str:
    """SHA-256 (hex) of the table's canonical JSON (``as_dict``: name, version, basis, lines)."""
    canonical = json.dumps(table.as_dict(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def wheel_hash(wheel: Wheel) -> str:
    canonical = json.dumps(wheel.as_dict(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def versions(definitions: Sequence[GameDefinition]) -> dict[str, Any]:
    return {
        "rules": {d.code: d.rules_version for d in definitions},
        "pay_tables_version": PAY_TABLES_VERSION,
        "pay_tables": [
            {"name": t.name, "title": t.title, "version": t.version, "sha256": pay_table_hash(t)}
            for d in definitions
            for t in d.pay_tables
        ],
        "note": (
            "Rules and pay tables carry the version identifiers the code defines (RULES_VERSION, "
            "PAY_TABLES_VERSION); the SHA-256 of each table's canonical JSON identifies its exact content. "
            "Which table a live table uses is its configuration (operator data, versioned apart)."
        ),
    }


# --- side bets and bonus tables -----------------------------------------------------------------


def wager_figures(report: RtpReport, table: PayTable | None, notes: Iterable[str] = ()) -> dict[str, Any]:
    """One priced side bet / bonus table: exact RTP, hit frequency per pay line, variance."""
    lines = [
        {
            "outcome": line.outcome,
            "pay": line.pay,
            "count": line.count,
            "probability": float(line.probability),
            "probability_exact": exact_text(line.probability),
            "return": float(line.return_per_unit),
            "return_exact": exact_text(line.return_per_unit),
        }
        for line in report.lines
    ]
    body: dict[str, Any] = {
        "game": report.game,
        "wager": report.wager,
        "paytable": report.table,
        "number": table.number if table is not None else None,
        "title": table.title if table is not None else "",
        "version": table.version if table is not None else None,
        "sha256": pay_table_hash(table) if table is not None else None,
        "basis": table.basis.value if table is not None else "community_five",
        "combinations": report.total,
        "rtp": float(report.rtp),
        "rtp_exact": exact_text(report.rtp),
        "house_edge": float(1 - report.rtp),
        "variance": float(report.variance),
        "variance_exact": exact_text(report.variance),
        "standard_deviation": sqrt(report.variance),
        "hit_frequency": float(sum((line.probability for line in report.lines if line.pay != "lose"), Fraction(0))),
        "lines": lines,
        "notes": list(notes),
    }
    body.update({k: v for k, v in report.extra.items() if k != "wheel"})
    if "wheel" in report.extra:
        body["wheel"] = report.extra["wheel"]
    return body


STAX_NOTE = (
    "RTP and variance count the fixed pays only (progressive lines worth 0); the line returns value each "
    "progressive at the default pool sizes, which are illustrative, not operator data."
)


def bonus_spin_note(wheel: Wheel) -> str:
    return (
        f"With the wheel {wheel.name!r} version {wheel.version} (SHA-256 {wheel_hash(wheel)[:16]}…): "
        "an example, not a product wheel; the variance includes the wheel's own spread."
    )


def side_bets(definition: GameDefinition, wheel: Wheel = EXAMPLE_WHEEL) -> list[dict[str, Any]]:
    """Every side bet / bonus table of ``definition`` (main wagers excluded), exactly."""
    figures: list[dict[str, Any]] = []
    for wager in definition.wagers:
        if wager.main_rule is not None or wager.kind is WagerKind.DECISION:
            continue
        if wager.name == "bonus_spin":
            for units in BONUS_SPIN_WAGER_UNITS:
                report = wager_rtp(definition.code, wager.name, wheel=wheel, bonus_spin_units=units)
                figures.append(wager_figures(report, None, [bonus_spin_note(wheel)]))
            continue
        for number in definition.table_numbers(wager.name):
            table = definition.pay_table(wager.name, number)
            report = wager_rtp(definition.code, wager.name, number)
            figures.append(wager_figures(report, table, [STAX_NOTE] if wager.pools else []))
    return figures


# --- main games ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class MainResult(MainReturns):
    """One game's exact perfect-strategy results for one combination of main pay tables."""

    pay_tables: Mapping[str, int]
    rtp_per_ante: Fraction
    rtp_per_total: Fraction
    mean_total_wagered: Fraction | None
    variance_per_ante: Fraction | None
    outcomes: tuple[tuple[str, Fraction, Fraction], ...]
    strategy: tuple[Mapping[str, Any], ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "pay_tables": dict(self.pay_tables),
            "rtp_per_ante": figure(self.rtp_per_ante),
            "rtp_per_total": figure(self.rtp_per_total),
            "house_edge": figure(self.house_edge),
            "element_of_risk": figure(self.element_of_risk),
            "mean_total_wagered": figure(self.mean_total_wagered) if self.mean_total_wagered is not None else None,
            "variance_per_ante": figure(self.variance_per_ante) if self.variance_per_ante is not None else None,
            "outcomes": [
                {"outcome": name, "probability": figure(p), "net": figure(net)} for name, p, net in self.outcomes
            ],
            "strategy": [dict(table) for table in self.strategy],
        }


@dataclass(frozen=True)
class MainResults:
    game: str
    source: str
    method: str
    rules_version: str | None
    results: tuple[MainResult, ...]


def main_wagers_with_tables(definition: GameDefinition) -> list[str]:
    return [w.name for w in definition.wagers if w.main_rule is not None and w.needs_pay_table]


def _checked(value: Fraction, given: Any, what: str) -> None:
    if given is not None and abs(to_fraction(given, what) - value) > TOLERANCE:
        raise InvalidMainResults(f"{what} {given!r} disagrees with its RTP ({float(value)!r})", field=what)


def _strategy_tables(raw: Any, where: str) -> tuple[Mapping[str, Any], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise InvalidMainResults(f"{where}.strategy: expected a list of tables", field="strategy")
    tables = []
    for i, table in enumerate(raw):
        ok = isinstance(table, dict) and isinstance(table.get("columns"), list) and isinstance(table.get("rows"), list)
        if not ok or not all(isinstance(row, list) for row in table["rows"]):
            raise InvalidMainResults(f"{where}.strategy[{i}]: needs 'columns' and 'rows' lists", field="strategy")
        tables.append(
            {
                "name": str(table.get("name", f"table {i + 1}")),
                "title": str(table.get("title", "")),
                "columns": [str(c) for c in table["columns"]],
                "rows": [[str(cell) for cell in row] for row in table["rows"]],
            }
        )
    return tuple(tables)


def parse_main_results(document: Mapping[str, Any], source: str = "") -> MainResults:
    """Check one ``casino.main_rtp/1`` document against the registered games and tables."""
    if document.get("format") != MAIN_RESULTS_FORMAT:
        raise InvalidMainResults(f"{source}: format must be {MAIN_RESULTS_FORMAT!r}", field="format")
    code = str(document.get("game", ""))
    try:
        definition = game(code)
    except DomainError:
        raise InvalidMainResults(f"{source}: unknown game {code!r}", field="game") from None
    raw_results = document.get("results")
    if not isinstance(raw_results, list) or not raw_results:
        raise InvalidMainResults(f"{source}: 'results' must be a non-empty list", field="results")
    priced = main_wagers_with_tables(definition)
    results = []
    for i, raw in enumerate(raw_results):
        where = f"{source} results[{i}]"
        if not isinstance(raw, dict):
            raise InvalidMainResults(f"{where}: expected an object", field="results")
        numbers = {str(k): int(v) for k, v in (raw.get("pay_tables") or {}).items()}
        for wager in numbers:
            if wager not in priced:
                raise InvalidMainResults(f"{where}: {code} has no main wager {wager!r} with a pay table", field=wager)
            if numbers[wager] not in definition.table_numbers(wager):
                raise InvalidMainResults(f"{where}: no pay table {numbers[wager]} for {code} {wager}", field=wager)
        tables = {w: numbers.get(w, 1) for w in priced}
        for key in ("rtp_per_ante", "rtp_per_total"):
            if key not in raw:
                raise InvalidMainResults(f"{where}: {key} is required", field=key)
        per_ante = to_fraction(raw["rtp_per_ante"], "rtp_per_ante")
        per_total = to_fraction(raw["rtp_per_total"], "rtp_per_total")
        _checked(1 - per_ante, raw.get("house_edge"), "house_edge")
        _checked(1 - per_total, raw.get("element_of_risk"), "element_of_risk")
        outcomes = tuple(
            (
                str(o.get("outcome", "")),
                to_fraction(o.get("probability"), "outcomes.probability"),
                to_fraction(o.get("net"), "outcomes.net"),
            )
            for o in raw.get("outcomes") or []
        )
        if outcomes and abs(sum((p for _, p, _ in outcomes), Fraction(0)) - 1) > TOLERANCE:
            raise InvalidMainResults(f"{where}: outcome probabilities do not sum to 1", field="outcomes")
        results.append(
            MainResult(
                pay_tables=tables,
                rtp_per_ante=per_ante,
                rtp_per_total=per_total,
                mean_total_wagered=(
                    to_fraction(raw["mean_total_wagered"], "mean_total_wagered")
                    if raw.get("mean_total_wagered") is not None
                    else None
                ),
                variance_per_ante=(
                    to_fraction(raw["variance_per_ante"], "variance_per_ante")
                    if raw.get("variance_per_ante") is not None
                    else None
                ),
                outcomes=outcomes,
                strategy=_strategy_tables(raw.get("strategy"), where),
            )
        )
    rules_version = document.get("rules_version")
    return MainResults(
        game=code,
        source=source,
        method=str(document.get("method", "")),
        rules_version=str(rules_version) if rules_version is not None else None,
        results=tuple(results),
    )


def main_section(definition: GameDefinition, supplied: MainResults | None) -> dict[str, Any]:
    tables = [
        definition.pay_table(w, n).as_dict()
        for w in main_wagers_with_tables(definition)
        for n in definition.table_numbers(w)
    ]
    section: dict[str, Any] = {"pay_tables": tables}
    if supplied is None:
        return {**section, "supplied": False, "note": NOT_SUPPLIED}
    mismatch = supplied.rules_version is not None and supplied.rules_version != definition.rules_version
    missing = [
        {w: n}
        for w in main_wagers_with_tables(definition)
        for n in definition.table_numbers(w)
        if not any(r.pay_tables.get(w) == n for r in supplied.results)
    ]
    return {
        **section,
        "supplied": True,
        "source": supplied.source,
        "method": supplied.method,
        "rules_version_of_results": supplied.rules_version,
        "rules_version_mismatch": mismatch,
        "pay_tables_not_supplied": missing,
        "results": [r.as_dict() for r in supplied.results],
    }


# --- shuffle and RNG ----------------------------------------------------------------------------


def shuffle_section(
    rng: RandomSource, source: str, shuffles: int = DEFAULT_SHUFFLES, level: float = SHUFFLE_LEVEL
) -> dict[str, Any]:
    """The production Fisher-Yates shuffle, ``shuffles`` times from ``rng``: the chi-square tests."""
    if shuffles < DECK_SIZE * 5:
        raise ValueError("the chi-square test needs at least 260 shuffles (five expected per cell)")
    started = time.perf_counter()
    report = fairness_report(position_counts(SHUFFLES["fisher_yates"], rng, shuffles), level)
    return {
        "shuffle": "fisher_yates",
        "source": source,
        "parameters": {
            "shuffles": shuffles,
            "deck_size": DECK_SIZE,
            "level": level,
            "cells": DECK_SIZE * DECK_SIZE,
            "expected_per_cell": shuffles / DECK_SIZE,
            "table_df": (DECK_SIZE - 1) ** 2,
            "line_tests": 2 * DECK_SIZE,
            "line_df": DECK_SIZE - 1,
        },
        "method": (
            "Shuffle the ordered deck N times; count each card in each position (52 x 52 table). "
            "Whole-table chi-square against (52-1)^2 = 2,601 degrees of freedom, and each card and each "
            "position on its own (104 tests of 51 degrees of freedom, Bonferroni-corrected to the same level). "
            "Critical values and p-value by the Wilson-Hilferty approximation (games/cards/shuffle_stats.py; "
            "manage.py shuffle_stats runs the same test)."
        ),
        "result": report.as_dict(),
        "passes": report.passes,
        "seconds": round(time.perf_counter() - started, 2),
    }


RNG = {
    "production_source": (
        "SecureRandomSource (games/cards/shuffle.py): Python's secrets.SystemRandom, i.e. the operating "
        "system's cryptographically secure generator (os.urandom); it cannot be seeded."
    ),
    "uniform_integers": (
        "randbelow(n) uses CPython's rejection sampling on getrandbits: every value 0..n-1 is equally likely, "
        "no modulo bias."
    ),
    "shuffle": (
        "An unbiased Fisher-Yates shuffle of a fresh 52-card deck for every round and hand: for i from 51 "
        "down to 1, swap position i with a uniform j in 0..i (one draw per position); all 52! orders are "
        "equally likely."
    ),
    "commitment": (
        "Before any bet or blind the deck is committed: SHA-256 (hex) of '<salt>:<deck>', the salt 64 hex "
        "digits (32 bytes) from secrets.token_hex, the deck's 52 two-character codes top first joined by "
        "spaces. The commitment is public while the round plays; the salt, deck and deal order are revealed "
        "once it ends (GET /api/rounds/<game number>/fairness/), and tools/verify_deal.py checks them "
        "(docs/fairness.md)."
    ),
    "other_draws": (
        "Bonus Spin Xtreme's wheel spins draw from the same injected source (randbelow of the total weight)."
    ),
    "not_for_live_play": (
        "SeededRandomSource (Mersenne Twister) and NumPy's PCG64 are used only by tests, simulations and "
        "strategy training, never by live play."
    ),
}


# --- the report ---------------------------------------------------------------------------------


def certification_report(
    *,
    shuffle: Mapping[str, Any],
    main_results: Mapping[str, MainResults] | None = None,
    generated_at: str = "",
    code_version: str = "",
    wheel: Wheel = EXAMPLE_WHEEL,
) -> dict[str, Any]:
    """The whole pack as one JSON-ready mapping (see the module docstring)."""
    definitions = games()
    supplied = dict(main_results or {})
    unknown = sorted(set(supplied) - {d.code for d in definitions})
    if unknown:
        raise InvalidMainResults(f"results for unknown games: {', '.join(unknown)}", field="game")
    return {
        "format": REPORT_FORMAT,
        "generated_at": generated_at,
        "code_version": code_version,
        "versions": versions(definitions),
        "rng": dict(RNG),
        "shuffle": dict(shuffle),
        "games": [
            {
                **d.as_dict(),
                "title": d.title,
                "main": main_section(d, supplied.get(d.code)),
                "side_bets": side_bets(d, wheel),
            }
            for d in definitions
        ],
    }
