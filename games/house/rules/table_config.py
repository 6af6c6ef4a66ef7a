"""A house-banked table's configuration as data: what the operator may set, its
validation, and the difference between two versions (pure: no Django, no I/O).

A configuration is a plain mapping (``CONFIG_FIELDS``): the table's name, hand
mode, seats, limits per betting spot, the chip denominations (``chips``),
the side wagers every player must make (``mandatory_wagers``), whether the
table may be played alongside others (``multi_play``), pay tables in force, the
Bonus Spin Xtreme wheel, the STAX progressive settings and the phase durations. The code,
the game and the currency are fixed when a table is created (its ledger
accounts, pools and game numbers depend on them) and are not part of a change.

``validate_config`` returns every problem at once, each naming the field it is
about, so a form can show them all; an empty list means a round can run on it
(the rounds' own ``check_table_config`` refuses less: this is the stricter gate
every operator change passes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from games.house.rules.bonus_spin import InvalidWheel, Wheel, WheelSegment
from games.house.rules.definitions import WagerKind
from games.house.rules.paytables import BONUS_SPIN_WAGER_UNITS
from games.house.rules.registry import GAMES, game, pay_table, table_numbers
from ledger.currencies import MINOR_UNITS

HAND_MODES = ("shared", "per_seat")
DURATION_FIELDS = (
    "betting_seconds",
    "warning_seconds",
    "decision_seconds",
    "deal_pause_seconds",
    "between_rounds_seconds",
)
CONFIG_FIELDS = (
    "name",
    "hand_mode",
    "max_seats",
    "limits",
    "chips",
    "mandatory_wagers",
    "multi_play",
    "pay_tables",
    "wheel",
    "progressives",
    *DURATION_FIELDS,
)
# A duration is stored in a PositiveSmallIntegerField; an hour is already far longer than any phase.
MAX_SECONDS = 3600
# The deck allows (52 - 2 dealer - 5 board) // 2 own hands.
MAX_SEATS = 22
BASIS_POINTS = 10_000
# A chip tray a player can read at a glance (seed 000:179, "CHIP DISPLAY").
MAX_CHIPS = 10
# Default denominations, in currency units; scaled for currencies whose unit is small.
DEFAULT_CHIP_UNITS = (1, 5, 10, 25, 100, 500)
DEFAULT_CHIP_SCALE = {"JPY": 100, "KRW": 1000, "HUF": 100, "ISK": 100, "INR": 100, "CZK": 10, "SEK": 10,
                      "NOK": 10, "DKK": 10, "ZAR": 10, "MXN": 10, "CNY": 10, "HKD": 10}  # fmt: skip


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a configuration: ``field`` is a ``CONFIG_FIELDS`` name,
    optionally dotted (``limits.ante``, ``progressives.star``)."""

    field: str
    code: str
    message: str


def default_chips(currency: str) -> list[int]:
    """The chip denominations a new table of ``currency`` gets, ascending, in minor
    units: 1, 5, 10, 25, 100 and 500 currency units (EUR: 100 ... 50000 cents),
    times ``DEFAULT_CHIP_SCALE`` for currencies whose unit is worth little (JPY: 100 yen
    upwards). An unknown currency is read as having two decimals."""
    unit = 10 ** MINOR_UNITS.get(currency, 2) * DEFAULT_CHIP_SCALE.get(currency, 1)
    return [units * unit for units in DEFAULT_CHIP_UNITS]


def covered_chips(chips: Sequence[int], balance: int) -> list[int]:
    """The denominations of ``chips`` that ``balance`` covers (seed 000:179: only
    those are enabled), ascending as given."""
    return [chip for chip in chips if chip <= balance]


def betting_spots(game_code: str) -> list[str]:
    """The spots a player places chips on (the required Ante and the optional side bets)."""
    return [w.name for w in game(game_code).wagers if w.kind in (WagerKind.REQUIRED, WagerKind.OPTIONAL)]


def required_spots(game_code: str) -> list[str]:
    return [w.name for w in game(game_code).wagers if w.kind is WagerKind.REQUIRED]


def priced_wagers(game_code: str, offered: set[str] | frozenset[str]) -> list[str]:
    """Wagers that need a pay table when ``offered`` spots are offered: the offered
    ones that need it and the automatic wagers (they ride on the Ante)."""
    definition = game(game_code)
    return [
        w.name for w in definition.wagers if w.needs_pay_table and (w.name in offered or w.kind is WagerKind.AUTOMATIC)
    ]


def pay_table_choices(game_code: str) -> dict[str, list[tuple[int, str]]]:
    """Per wager of the game that needs one: ``(number, label)`` of each pay table it has."""
    choices = {}
    for wager in game(game_code).wagers:
        if wager.needs_pay_table:
            choices[wager.name] = [
                (number, pay_table_label(game_code, wager.name, number))
                for number in table_numbers(game_code, wager.name)
            ]
    return choices


def pay_table_label(game_code: str, wager: str, number: int) -> str:
    """``"2: royal flush 500 to 1, ... "``: the number and its best lines."""
    table = pay_table(game_code, wager, number)
    lines = ", ".join(f"{outcome.replace('_', ' ')} {pay.label()}" for outcome, pay in table.lines[:4])
    more = ", …" if len(table.lines) > 4 else ""
    return f"{number}: {lines}{more}"


def _int(value: Any) -> int | None:
    """``value`` if it is a whole number (not a bool), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def _check_limits(game_code: str, limits: Any, currency_unit: int) -> list[Problem]:
    if not isinstance(limits, Mapping):
        return [Problem("limits", "invalid_limits", "limits must map each betting spot to its min and max")]
    problems = []
    spots = betting_spots(game_code)
    for spot in required_spots(game_code):
        if spot not in limits:
            problems.append(Problem(f"limits.{spot}", "spot_required", f"{spot} must be offered"))
    for spot, limit in limits.items():
        if spot not in spots:
            problems.append(
                Problem(f"limits.{spot}", "spot_not_in_game", f"{spot} is not a betting spot of {game_code}")
            )
            continue
        low = _int(limit.get("min")) if isinstance(limit, Mapping) else None
        high = _int(limit.get("max")) if isinstance(limit, Mapping) else None
        if low is None or high is None:
            problems.append(
                Problem(f"limits.{spot}", "invalid_limit", f"{spot}: min and max must be whole minor units")
            )
        elif not 0 < low <= high:
            problems.append(Problem(f"limits.{spot}", "invalid_limit", f"{spot}: limits must satisfy 0 < min <= max"))
        elif spot == "bonus_spin":
            sizes = sorted(u * currency_unit for u in BONUS_SPIN_WAGER_UNITS)
            if low not in sizes or high not in sizes:
                problems.append(
                    Problem(
                        f"limits.{spot}",
                        "invalid_limit",
                        f"bonus_spin: min and max must each be one of the wager sizes {sizes} (1, 2, 5 units)",
                    )
                )
    return problems


def _check_chips(chips: Any, limits: Any) -> list[Problem]:
    """Whole positive minor units, strictly ascending, 1 to ``MAX_CHIPS`` of them;
    and every offered spot's minimum reachable: a spot's first chip must reach its
    minimum by itself (``below_minimum`` otherwise; a chip above the maximum is
    capped to it), so the largest chip must be at least every spot's minimum."""
    if not isinstance(chips, list) or not chips or len(chips) > MAX_CHIPS:
        return [Problem("chips", "invalid_chips", f"chips must list 1 to {MAX_CHIPS} denominations")]
    values = [_int(chip) for chip in chips]
    if any(value is None or value <= 0 for value in values):
        return [Problem("chips", "invalid_chips", "every chip must be a positive whole number of minor units")]
    if any(low >= high for low, high in pairwise(chips)):
        return [Problem("chips", "invalid_chips", "chips must be listed in strictly ascending order")]
    problems = []
    if isinstance(limits, Mapping):
        for spot, limit in limits.items():
            low = _int(limit.get("min")) if isinstance(limit, Mapping) else None
            if low is not None and max(chips) < low:
                problems.append(Problem("chips", "minimum_not_reachable", f"{spot}: no chip reaches its minimum {low}"))
    return problems


def _check_mandatory(game_code: str, mandatory: Any, offered: frozenset[str]) -> list[Problem]:
    """Seed 002:13: the property may make an offered optional side wager mandatory."""
    if not isinstance(mandatory, list) or not all(isinstance(spot, str) for spot in mandatory):
        return [Problem("mandatory_wagers", "invalid_mandatory_wagers", "mandatory wagers must list spot names")]
    if len(set(mandatory)) != len(mandatory):
        return [Problem("mandatory_wagers", "invalid_mandatory_wagers", "a mandatory wager is listed twice")]
    optional = {w.name for w in game(game_code).wagers if w.kind is WagerKind.OPTIONAL}
    return [
        Problem(f"mandatory_wagers.{spot}", "mandatory_not_offered", f"{spot} is not an optional side bet offered here")
        for spot in mandatory
        if spot not in optional or spot not in offered
    ]


def _check_pay_tables(game_code: str, pay_tables: Any, offered: frozenset[str]) -> list[Problem]:
    if not isinstance(pay_tables, Mapping):
        return [Problem("pay_tables", "invalid_pay_tables", "pay tables must map wager to table number")]
    problems = []
    needed = priced_wagers(game_code, offered)
    for wager in needed:
        number = pay_tables.get(wager)
        if number is None:
            problems.append(Problem(f"pay_tables.{wager}", "pay_table_required", f"choose a pay table for {wager}"))
        elif _int(number) not in table_numbers(game_code, wager):
            problems.append(
                Problem(
                    f"pay_tables.{wager}",
                    "unknown_pay_table",
                    f"{wager}: no pay table {number!r}; {game_code} has {table_numbers(game_code, wager)}",
                )
            )
    for wager in pay_tables:
        if wager not in needed:
            problems.append(
                Problem(f"pay_tables.{wager}", "pay_table_not_used", f"{wager} is not offered or has no pay table")
            )
    return problems


def _check_durations(config: Mapping[str, Any]) -> list[Problem]:
    problems = []
    for name in DURATION_FIELDS:
        value = _int(config.get(name))
        if value is None or not 0 < value <= MAX_SECONDS:
            problems.append(Problem(name, "invalid_duration", f"{name} must be a whole number of seconds, 1 to 3600"))
    betting, warning = _int(config.get("betting_seconds")), _int(config.get("warning_seconds"))
    if betting is not None and warning is not None and warning > 0 and not warning < betting:
        problems.append(
            Problem("warning_seconds", "warning_not_within_window", "the yellow warning must be shorter than betting")
        )
    return problems


def _check_progressives(game_code: str, progressives: Any, offered: frozenset[str]) -> list[Problem]:
    definition = game(game_code)
    wager, pools = definition.progressive_wager, definition.progressive_pools
    if wager is None or wager not in offered:
        if progressives:
            return [Problem("progressives", "progressives_not_used", "progressives need the STAX bet offered")]
        return []
    if not isinstance(progressives, Mapping):
        return [Problem("progressives", "invalid_progressives", "progressives must give reset and contribution_bp")]
    problems = []
    resets, rates = progressives.get("reset"), progressives.get("contribution_bp")
    if not isinstance(resets, Mapping) or not isinstance(rates, Mapping):
        return [Problem("progressives", "invalid_progressives", "progressives must give reset and contribution_bp")]
    if set(progressives) - {"reset", "contribution_bp"}:
        problems.append(Problem("progressives", "invalid_progressives", "only reset and contribution_bp are settings"))
    for pool in sorted(set(resets) | set(rates)):
        if pool not in pools:
            problems.append(Problem(f"progressives.{pool}", "unknown_pool", f"no STAX pool {pool!r}"))
    for pool in pools:
        reset, rate = _int(resets.get(pool)), _int(rates.get(pool))
        if reset is None or reset <= 0:
            problems.append(
                Problem(f"progressives.{pool}", "invalid_reset", f"{pool}: reset must be a positive whole amount")
            )
        if rate is None or not 0 <= rate <= BASIS_POINTS:
            problems.append(
                Problem(f"progressives.{pool}", "invalid_rate", f"{pool}: contribution must be 0 to 10000 basis points")
            )
    total = sum(_int(rates.get(pool)) or 0 for pool in pools)
    if total > BASIS_POINTS:
        problems.append(
            Problem("progressives", "invalid_rate", "the contributions together exceed 100 % of the STAX wager")
        )
    return problems


def _check_wheel(wheel: Any, offered: frozenset[str]) -> list[Problem]:
    if "bonus_spin" not in offered:
        if wheel:
            return [Problem("wheel", "wheel_not_used", "a wheel needs the Bonus Spin Xtreme bet offered")]
        return []
    if not isinstance(wheel, Mapping) or not isinstance(wheel.get("segments"), list) or not wheel["segments"]:
        return [Problem("wheel", "wheel_required", "Bonus Spin Xtreme needs a wheel with at least one segment")]
    try:
        segments = []
        for segment in wheel["segments"]:
            multiple, weight = _int(segment.get("multiple")), _int(segment.get("weight"))
            label = segment.get("label")
            if multiple is None or weight is None or not isinstance(label, str) or not label.strip():
                raise InvalidWheel()
            segments.append(WheelSegment(label, multiple, weight))
        Wheel(str(wheel.get("name", "")), str(wheel.get("version", "")), tuple(segments))
    except (InvalidWheel, AttributeError):
        return [
            Problem(
                "wheel",
                "invalid_wheel",
                "every segment needs a label, a whole award multiple >= 0 and a whole weight > 0",
            )
        ]
    return []


def validate_config(
    *, game_code: str, config: Mapping[str, Any], currency_unit: int, per_seat_max: int = MAX_SEATS
) -> list[Problem]:
    """Every problem of ``config`` for a table of ``game_code`` whose currency has
    ``currency_unit`` minor units per unit; ``[]`` when a round can run on it.

    Limits: the game's betting spots only, the required ones present, whole
    ``0 < min <= max`` (Bonus Spin: each exactly 1, 2 or 5 units). Pay tables:
    one of the game's tables for every wager that needs one, nothing else.
    Chips: 1 to ``MAX_CHIPS`` whole positive minor units, strictly ascending,
    the largest reaching every offered spot's minimum. Mandatory wagers: offered
    optional spots, each once. ``multi_play``: a boolean.
    Durations: 1..3600 s, the yellow warning shorter than betting. STAX
    progressives (only with STAX offered): a positive reset and 0..10000 basis
    points per pool, 100 % at most in all. Wheel (only with Bonus Spin offered):
    segments with a label, a whole multiple >= 0 and a whole weight > 0."""
    if game_code not in GAMES:
        return [Problem("game", "unknown_game", f"unknown game {game_code!r}")]
    problems: list[Problem] = []
    name = config.get("name")
    if not isinstance(name, str) or not name.strip():
        problems.append(Problem("name", "name_required", "a table needs a name"))
    if config.get("hand_mode") not in HAND_MODES:
        problems.append(Problem("hand_mode", "invalid_hand_mode", f"hand mode must be one of {HAND_MODES}"))
    seats = config.get("max_seats")
    if seats is not None and not (_int(seats) is not None and 0 < seats <= per_seat_max):
        problems.append(Problem("max_seats", "invalid_seats", f"seats must be 1 to {per_seat_max} (the deck's limit)"))
    limits = config.get("limits")
    problems += _check_limits(game_code, limits, currency_unit)
    offered = frozenset(limits) if isinstance(limits, Mapping) else frozenset()
    problems += _check_chips(config.get("chips"), limits)
    problems += _check_mandatory(game_code, config.get("mandatory_wagers"), offered)
    if not isinstance(config.get("multi_play"), bool):
        problems.append(Problem("multi_play", "invalid_multi_play", "multi_play must be true or false"))
    problems += _check_pay_tables(game_code, config.get("pay_tables"), offered)
    problems += _check_durations(config)
    problems += _check_progressives(game_code, config.get("progressives"), offered)
    problems += _check_wheel(config.get("wheel"), offered)
    return problems


def config_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``{field: {"from": old, "to": new}}`` for every ``CONFIG_FIELDS`` field that differs."""
    return {
        name: {"from": old.get(name), "to": new.get(name)} for name in CONFIG_FIELDS if old.get(name) != new.get(name)
    }
