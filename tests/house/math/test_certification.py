"""The certification pack: its figures (exact, complete), its page (self-contained) and its command."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from html import escape
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from games.cards.cards import Card
from games.cards.shuffle import SeededRandomSource
from games.house.math.certification import (
    MAIN_RESULTS_FORMAT,
    NOT_SUPPLIED,
    InvalidMainResults,
    certification_report,
    parse_main_results,
    pay_table_hash,
    shuffle_section,
)
from games.house.math.certification_html import render_html
from games.house.rules.registry import games, pay_table

SHUFFLES = 520  # ten expected per cell: enough for the test's shape, fast

# docs/game-math.md, "Exact RTP": the exact fractions of the side-bet and bonus tables.
EXACT_RTPS = {
    "uth.best_five.1": Fraction(6455243, 6689228),
    "casino_holdem.bonus.1": Fraction(87011, 92820),
    "xtreme.player_bonus.1": Fraction(33144511, 33446140),
    "xtreme.player_bonus.2": Fraction(2523793, 2572780),
    "xtreme.player_bonus.3": Fraction(6455243, 6689228),
    "xtreme.player_bonus.4": Fraction(2457001, 2572780),
    "xtreme.hole_card_bonus.1": Fraction(211, 221),
    "xtreme.hole_card_bonus.2": Fraction(206, 221),
    "xtreme.hole_card_bonus.3": Fraction(199, 221),
}
# The same page's percentages (4 decimals): STAX fixed pays, Bonus Spin with the example wheel.
PERCENT_RTPS = {
    "xtreme.stax.1": 55.1728,
    "xtreme.stax.2": 55.1728,
    "xtreme.stax.3": 40.7640,
    "xtreme.stax.6": 53.8896,
    "xtreme.stax.7": 59.9717,
    "xtreme.stax.8": 53.2936,
    "xtreme.stax.9": 42.7294,
    "bonus_spin.1": 85.4593,
    "bonus_spin.2": 85.7809,
    "bonus_spin.5": 85.2930,
}

UTH_RESULTS: dict[str, Any] = {
    "format": MAIN_RESULTS_FORMAT,
    "game": "uth",
    "rules_version": "2026.11.1",
    "method": "test data, not a computed result",
    "results": [
        {
            "pay_tables": {"ante_plus": 1},
            "rtp_per_ante": "4891/5000",
            "rtp_per_total": 0.9947,
            "house_edge": "109/5000",
            "element_of_risk": "0.0053",
            "mean_total_wagered": "4.15",
            "outcomes": [
                {"outcome": "lose 4x", "probability": "1/2", "net": -6},
                {"outcome": "win 4x", "probability": "1/2", "net": "6"},
            ],
            "strategy": [
                {
                    "name": "preflop",
                    "title": "4x or check",
                    "columns": ["hand", "action"],
                    "rows": [["AKs", "4x"], ["72o", "check"]],
                }
            ],
        }
    ],
}


def _shuffle() -> dict[str, Any]:
    return shuffle_section(SeededRandomSource(7), "seeded Mersenne Twister (7)", SHUFFLES)


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    return certification_report(shuffle=_shuffle(), generated_at="2026-11-26T00:00:00+00:00")


@pytest.fixture(scope="module")
def supplied_report() -> dict[str, Any]:
    return certification_report(shuffle=_shuffle(), main_results={"uth": parse_main_results(UTH_RESULTS, "uth.json")})


def _side_bets(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {bet["paytable"]: bet for g in report["games"] for bet in g["side_bets"]}


def test_every_game_and_every_pay_table_is_in_the_report(report):
    assert [g["game"] for g in report["games"]] == [d.code for d in games()]
    in_report = set(_side_bets(report)) | {t["name"] for g in report["games"] for t in g["main"]["pay_tables"]}
    in_code = {t.name for d in games() for t in d.pay_tables}
    assert in_code <= in_report
    assert in_report - in_code == {"bonus_spin.1", "bonus_spin.2", "bonus_spin.5"}
    assert {t["name"] for t in report["versions"]["pay_tables"]} == in_code


def test_rtps_equal_the_exact_figures_of_game_math(report):
    bets = _side_bets(report)
    for name, exact in EXACT_RTPS.items():
        assert Fraction(bets[name]["rtp_exact"]) == exact, name
        assert bets[name]["rtp"] == pytest.approx(float(exact), abs=1e-15)
    for name, percent in PERCENT_RTPS.items():
        assert round(bets[name]["rtp"] * 100, 4) == percent, name
    assert bets["uth.best_five.1"]["rtp_exact"] == "6455243/6689228"


def test_hit_frequencies_sum_to_one_per_wager(report):
    for name, bet in _side_bets(report).items():
        assert sum(Fraction(line["probability_exact"]) for line in bet["lines"]) == 1, name
        assert sum(line["count"] for line in bet["lines"]) == bet["combinations"], name
        paying = sum(Fraction(line["probability_exact"]) for line in bet["lines"] if line["pay"] != "lose")
        assert bet["hit_frequency"] == pytest.approx(float(paying))


def test_variance_matches_an_independent_count_of_the_hole_card_bonus(report):
    # Hole Card Bonus table 1 over all 1,326 two-card hands, classified here by hand:
    # pair of aces 30, ace + K/Q/J suited 20, ace + K/Q/J 10, other pair 5 (to 1), else lose.
    returns: list[int] = []
    for a, b in combinations(range(52), 2):
        first, second = Card.from_index(a), Card.from_index(b)
        ranks = {first.rank, second.rank}
        if ranks == {14}:
            pay = 31
        elif 14 in ranks and ranks & {11, 12, 13}:
            pay = 21 if first.suit == second.suit else 11
        elif first.rank == second.rank:
            pay = 6
        else:
            pay = 0
        returns.append(pay)
    n = len(returns)
    mean = Fraction(sum(returns), n)
    variance = Fraction(sum(r * r for r in returns), n) - mean * mean
    bet = _side_bets(report)["xtreme.hole_card_bonus.1"]
    assert Fraction(bet["rtp_exact"]) == mean == Fraction(211, 221)
    assert Fraction(bet["variance_exact"]) == variance
    assert bet["standard_deviation"] == pytest.approx(float(variance) ** 0.5)


def test_bonus_spin_variance_includes_the_wheel(report):
    from games.house.rules.bonus_spin import EXAMPLE_WHEEL

    bet = _side_bets(report)["bonus_spin.1"]
    spread = EXAMPLE_WHEEL.variance_multiple()
    second = sum(
        Fraction(line["probability_exact"])
        * (Fraction(line["return_exact"]) ** 2 + (spread if line["pay"] != "lose" else 0))
        for line in bet["lines"]
    )
    assert Fraction(bet["variance_exact"]) == second - Fraction(bet["rtp_exact"]) ** 2
    assert spread > 0


def test_versions_name_the_rules_and_hash_each_pay_table(report):
    versions = report["versions"]
    assert versions["rules"] == {d.code: d.rules_version for d in games()}
    entry = next(t for t in versions["pay_tables"] if t["name"] == "uth.best_five.1")
    assert entry["sha256"] == pay_table_hash(pay_table("uth", "best_five"))
    assert len(entry["sha256"]) == 64
    assert len({t["sha256"] for t in versions["pay_tables"]}) == len(versions["pay_tables"])


def test_shuffle_section_has_its_parameters_and_results(report):
    shuffle = report["shuffle"]
    assert shuffle["parameters"]["shuffles"] == SHUFFLES
    assert shuffle["parameters"]["level"] == 0.99
    assert shuffle["parameters"]["table_df"] == 2601
    assert shuffle["parameters"]["line_df"] == 51
    result = shuffle["result"]
    assert result["table_df"] == 2601
    assert 0 <= result["table_p_value"] <= 1
    assert result["table_chi2"] > 0
    assert shuffle["source"] == "seeded Mersenne Twister (7)"
    html = render_html(report)
    section = html[html.index('id="shuffle"') : html.index('id="uth"')]
    for text in ("520", "2,601", str(result["table_chi2"]), str(result["table_p_value"]), "0.99", "seeded Mersenne"):
        assert text in section


def test_too_few_shuffles_are_refused():
    with pytest.raises(ValueError, match="at least 260 shuffles"):
        shuffle_section(SeededRandomSource(1), "seeded", 259)


def test_html_has_every_section_and_is_self_contained(report):
    html = render_html(report)
    for anchor in ("summary", "versions", "rng", "shuffle", "uth", "casino_holdem", "xtreme"):
        assert f'id="{anchor}"' in html
    assert html.count("<svg") == 1 + len(_side_bets(report))  # the RTP chart + one per table
    assert "6455243/6689228" in html
    assert "secrets.SystemRandom" in html
    assert not re.search(r"https?://", html)
    assert not re.search(r"<(script|link|img|iframe|object|embed)\b", html, re.IGNORECASE)
    assert not re.search(r"\b(src|srcset)=", html, re.IGNORECASE)
    assert "@import" not in html
    assert "url(" not in html
    json.dumps(report)  # the JSON twin holds the same mapping


def test_without_main_results_every_game_says_so(report):
    html = render_html(report)
    for g in report["games"]:
        assert g["main"]["supplied"] is False
        assert "results" not in g["main"]
    assert html.count(escape(NOT_SUPPLIED)) == len(report["games"])
    assert "NOT SUPPLIED" in html


def test_main_results_appear_when_supplied(supplied_report):
    uth = next(g for g in supplied_report["games"] if g["game"] == "uth")
    assert uth["main"]["supplied"] is True
    result = uth["main"]["results"][0]
    assert result["rtp_per_ante"] == {"value": 0.9782, "exact": "4891/5000"}
    assert result["house_edge"]["exact"] == "109/5000"
    assert result["element_of_risk"]["exact"] == "53/10000"
    html = render_html(supplied_report)
    main = html[html.index('id="uth-main"') : html.index('id="uth-side"')]
    for text in ("97.8200 %", "99.4700 %", "2.1800 %", "0.5300 %", "4891/5000", "AKs", "72o", "test data"):
        assert text in main
    assert "uth main (ante_plus 1), per ante" in html
    others = [g for g in supplied_report["games"] if g["game"] != "uth"]
    assert all(g["main"]["supplied"] is False for g in others)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"format": "other/1"}, "format"),
        ({"game": "baccarat"}, "game"),
        ({"results": [{**UTH_RESULTS["results"][0], "house_edge": "0.03"}]}, "house_edge"),
        ({"results": [{**UTH_RESULTS["results"][0], "pay_tables": {"ante_plus": 9}}]}, "ante_plus"),
        ({"results": [{**UTH_RESULTS["results"][0], "pay_tables": {"best_five": 1}}]}, "best_five"),
        ({"results": [{"rtp_per_total": "0.99"}]}, "rtp_per_ante"),
        ({"results": [{**UTH_RESULTS["results"][0], "rtp_per_ante": "abc"}]}, "rtp_per_ante"),
    ],
)
def test_invalid_main_results_are_refused(change, field):
    with pytest.raises(InvalidMainResults) as caught:
        parse_main_results({**UTH_RESULTS, **change}, "uth.json")
    assert caught.value.details["field"] == field


def test_command_writes_the_page_and_its_json_twin(tmp_path: Path):
    results = tmp_path / "main"
    results.mkdir()
    (results / "uth.json").write_text(json.dumps(UTH_RESULTS))
    out = tmp_path / "pack"
    call_command(
        "certification_report", out=out, main_results=results, shuffles=SHUFFLES, shuffle_seed=3, stdout=_Sink()
    )
    report = json.loads((out / "report.json").read_text())
    html = (out / "index.html").read_text()
    assert report["format"] == "casino.certification/1"
    assert report["shuffle"]["parameters"]["shuffles"] == SHUFFLES
    assert next(g for g in report["games"] if g["game"] == "uth")["main"]["supplied"] is True
    assert "4891/5000" in html
    assert not re.search(r"https?://", html)


def test_command_refuses_a_bad_results_directory(tmp_path: Path):
    (tmp_path / "bad.json").write_text(json.dumps({**UTH_RESULTS, "format": "x"}))
    with pytest.raises(CommandError):
        call_command("certification_report", out=tmp_path / "out", main_results=tmp_path, shuffles=SHUFFLES)
    with pytest.raises(CommandError):
        call_command("certification_report", out=tmp_path / "out", main_results=tmp_path / "none", shuffles=SHUFFLES)


class _Sink:
    def write(self, text: str) -> None:
        pass

    def flush(self) -> None:
        pass
