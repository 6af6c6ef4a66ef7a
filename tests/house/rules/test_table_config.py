"""Table configuration validation (pure domain): only the game's spots, only its
pay tables, limits 0 < min <= max in whole minor units, durations positive with
the warning inside the betting window, STAX progressives and the Bonus Spin
wheel only where offered and well-formed (brief for issue 8, RULES.md)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from games.house.rules.table_config import (
    config_changes,
    covered_chips,
    default_chips,
    pay_table_choices,
    validate_config,
)

XTREME: dict[str, Any] = {
    "name": "Xtreme 1",
    "hand_mode": "per_seat",
    "max_seats": 7,
    "limits": {
        "ante": {"min": 100, "max": 50_000},
        "stax": {"min": 100, "max": 10_000},
        "bonus_spin": {"min": 100, "max": 500},
    },
    "chips": [100, 500, 1000, 2500, 10000, 50000],
    "mandatory_wagers": ["stax"],
    "multi_play": False,
    "pay_tables": {"xtra_bonus": 1, "stax": 6},
    "wheel": {"name": "w", "version": "1", "segments": [{"label": "10x", "multiple": 10, "weight": 3}]},
    "progressives": {
        "reset": {"star": 1_000_000, "spade": 250_000, "heart": 100_000, "diamond": 50_000, "club": 25_000},
        "contribution_bp": {"star": 200, "spade": 150, "heart": 100, "diamond": 75, "club": 50},
    },
    "betting_seconds": 15,
    "warning_seconds": 5,
    "decision_seconds": 12,
    "deal_pause_seconds": 2,
    "between_rounds_seconds": 5,
}


def problems(change: Any, game: str = "xtreme", base: dict[str, Any] | None = None) -> set[tuple[str, str]]:
    config = copy.deepcopy(base or XTREME)
    change(config)
    return {(p.field, p.code) for p in validate_config(game_code=game, config=config, currency_unit=100)}


def test_a_valid_xtreme_configuration_has_no_problem():
    assert problems(lambda c: None) == set()


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda c: c["limits"]["ante"].update(min=0), ("limits.ante", "invalid_limit")),
        (lambda c: c["limits"]["ante"].update(min=600, max=500), ("limits.ante", "invalid_limit")),
        (lambda c: c["limits"]["ante"].update(min=1.5), ("limits.ante", "invalid_limit")),
        (lambda c: c["limits"]["ante"].update(max=True), ("limits.ante", "invalid_limit")),
        (lambda c: c["limits"].pop("ante"), ("limits.ante", "spot_required")),
        (lambda c: c["limits"].update(best_five={"min": 1, "max": 2}), ("limits.best_five", "spot_not_in_game")),
        (lambda c: c["limits"].update(play={"min": 1, "max": 2}), ("limits.play", "spot_not_in_game")),
        (lambda c: c["limits"]["bonus_spin"].update(max=300), ("limits.bonus_spin", "invalid_limit")),
        (lambda c: c["pay_tables"].update(stax=4), ("pay_tables.stax", "unknown_pay_table")),
        (lambda c: c["pay_tables"].pop("xtra_bonus"), ("pay_tables.xtra_bonus", "pay_table_required")),
        (lambda c: c["pay_tables"].update(best_five=1), ("pay_tables.best_five", "pay_table_not_used")),
        (lambda c: c["pay_tables"].update(player_bonus=1), ("pay_tables.player_bonus", "pay_table_not_used")),
        (lambda c: c.update(betting_seconds=0), ("betting_seconds", "invalid_duration")),
        (lambda c: c.update(decision_seconds=-1), ("decision_seconds", "invalid_duration")),
        (lambda c: c.update(warning_seconds=15), ("warning_seconds", "warning_not_within_window")),
        (lambda c: c.update(max_seats=23), ("max_seats", "invalid_seats")),
        (lambda c: c.update(hand_mode="both"), ("hand_mode", "invalid_hand_mode")),
        (lambda c: c.update(name=" "), ("name", "name_required")),
        (lambda c: c["progressives"]["reset"].update(star=0), ("progressives.star", "invalid_reset")),
        (lambda c: c["progressives"]["contribution_bp"].pop("club"), ("progressives.club", "invalid_rate")),
        (lambda c: c["progressives"]["contribution_bp"].update(star=9_900), ("progressives", "invalid_rate")),
        (lambda c: c["progressives"]["reset"].update(moon=5), ("progressives.moon", "unknown_pool")),
        (lambda c: c.update(wheel={}), ("wheel", "wheel_required")),
        (lambda c: c["wheel"]["segments"][0].update(weight=0), ("wheel", "invalid_wheel")),
        (lambda c: c["wheel"]["segments"][0].update(multiple=-1), ("wheel", "invalid_wheel")),
        (lambda c: c["limits"].pop("bonus_spin"), ("wheel", "wheel_not_used")),
        (lambda c: c["limits"].pop("stax") and c["pay_tables"].pop("stax"), ("progressives", "progressives_not_used")),
        # Chips (seed 000:179): whole positive minor units, strictly ascending, 1 to 10 of them.
        (lambda c: c.update(chips=[]), ("chips", "invalid_chips")),
        (lambda c: c.update(chips=None), ("chips", "invalid_chips")),
        (lambda c: c.update(chips=list(range(100, 1200, 100))), ("chips", "invalid_chips")),
        (lambda c: c.update(chips=[0, 100]), ("chips", "invalid_chips")),
        (lambda c: c.update(chips=[100, 250.5]), ("chips", "invalid_chips")),
        (lambda c: c.update(chips=[100, True]), ("chips", "invalid_chips")),
        (lambda c: c.update(chips=[500, 100]), ("chips", "invalid_chips")),
        (lambda c: c.update(chips=[100, 100]), ("chips", "invalid_chips")),
        # A spot's first chip must reach its minimum by itself: the largest chip must reach every minimum.
        (lambda c: c["limits"]["ante"].update(min=60_000, max=70_000), ("chips", "minimum_not_reachable")),
        # Mandatory side wagers (seed 002:13): offered optional spots only, each once.
        (lambda c: c.update(mandatory_wagers=["ante"]), ("mandatory_wagers.ante", "mandatory_not_offered")),
        (
            lambda c: c.update(mandatory_wagers=["player_bonus"]),
            ("mandatory_wagers.player_bonus", "mandatory_not_offered"),
        ),
        (lambda c: c.update(mandatory_wagers=["best_five"]), ("mandatory_wagers.best_five", "mandatory_not_offered")),
        (lambda c: c.update(mandatory_wagers=["stax", "stax"]), ("mandatory_wagers", "invalid_mandatory_wagers")),
        (lambda c: c.update(mandatory_wagers="stax"), ("mandatory_wagers", "invalid_mandatory_wagers")),
        (lambda c: c.update(multi_play=None), ("multi_play", "invalid_multi_play")),
        (lambda c: c.update(multi_play=1), ("multi_play", "invalid_multi_play")),
    ],
)
def test_each_rule_names_the_field(change, expected):
    assert expected in problems(change)


def test_uth_offers_only_its_own_pay_tables_and_needs_the_automatic_ones():
    assert set(pay_table_choices("uth")) == {"ante_plus", "best_five"}
    assert [n for n, _ in pay_table_choices("xtreme")["stax"]] == [1, 2, 3, 6, 7, 8, 9]
    uth = {**XTREME, "hand_mode": "shared", "limits": {"ante": {"min": 100, "max": 500}}, "pay_tables": {},
           "wheel": {}, "progressives": {}, "mandatory_wagers": []}  # fmt: skip
    assert problems(lambda c: None, "uth", uth) == {("pay_tables.ante_plus", "pay_table_required")}
    assert problems(lambda c: c["pay_tables"].update(ante_plus=1), "uth", uth) == set()


def test_changes_name_each_changed_field_with_before_and_after():
    new = copy.deepcopy(XTREME)
    new["pay_tables"]["stax"] = 7
    new["betting_seconds"] = 20
    assert config_changes(XTREME, new) == {
        "pay_tables": {"from": XTREME["pay_tables"], "to": new["pay_tables"]},
        "betting_seconds": {"from": 15, "to": 20},
    }
    assert config_changes(XTREME, copy.deepcopy(XTREME)) == {}


def test_both_side_wagers_may_be_mandatory_and_chips_need_not_be_single_spot_amounts():
    both = problems(lambda c: c.update(mandatory_wagers=["stax", "bonus_spin"], chips=[100, 200, 700]))
    assert both == set()


def test_default_chips_are_1_5_10_25_100_500_units_in_minor_units():
    assert default_chips("EUR") == [100, 500, 1000, 2500, 10_000, 50_000]
    assert default_chips("GBP") == default_chips("USD") == default_chips("EUR")
    assert default_chips("BHD") == [1000, 5000, 10_000, 25_000, 100_000, 500_000]  # three decimals
    assert default_chips("JPY") == [100, 500, 1000, 2500, 10_000, 50_000]  # no decimals; 100 yen upwards
    for currency in ("EUR", "BHD", "JPY", "SEK"):
        chips = default_chips(currency)
        assert not [p for p in validate_config(game_code="uth", config={**XTREME, "hand_mode": "shared",
                    "limits": {"ante": {"min": chips[0], "max": chips[-1]}}, "pay_tables": {"ante_plus": 1},
                    "wheel": {}, "progressives": {}, "mandatory_wagers": [], "chips": chips},
                    currency_unit=100) if p.field == "chips"]  # fmt: skip


def test_covered_chips_are_those_the_balance_reaches():
    chips = [100, 500, 1000, 2500]
    assert covered_chips(chips, 0) == []
    assert covered_chips(chips, 99) == []
    assert covered_chips(chips, 500) == [100, 500]
    assert covered_chips(chips, 10**9) == chips
