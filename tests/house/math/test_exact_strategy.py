"""The optimal strategies (games.house.math.exact_strategy) read the exact analysis's tables.

A reduced exact analysis (two flop classes) is compared with the lookups on
suit-renamed situations and with brute force at the river; the shipped tables
(from the complete analysis) agree with it on those flop and board classes (flop
and river decisions are local: a reduced analysis decides them exactly); and a
seeded simulation with the shipped tables agrees with the exact RTP.
"""

from __future__ import annotations

import io
import json
from fractions import Fraction
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command

from games.house.math import exact_main as em
from games.house.math import exact_strategy as es
from games.house.math.simulation import simulate
from games.house.math.strategy import DEFAULT_STRATEGY, STRATEGIES
from tests.house.math.test_exact_main import _brute_dealer_returns, _returns_per_result

FLOP_CLASSES = [5, 300]


@cache
def _reduced(game_code: str) -> em.ExactMainResult:
    return em.exact_main_rtp(game_code, flop_classes=FLOP_CLASSES)


def _situations(seed: int, n: int) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """(flop class, hole cards, turn and river) drawn for the reduced analysis's flops."""
    rng = np.random.default_rng(seed)
    reps = em.suit_classes(3).reps
    out = []
    for i in range(n):
        f = FLOP_CLASSES[i % len(FLOP_CLASSES)]
        rest = np.setdiff1d(np.arange(52), reps[f])
        cards = rng.choice(rest, 4, replace=False)
        out.append((f, cards[:2], cards[2:]))
    return out


def test_the_defaults_are_the_exact_strategies_and_the_learned_ones_stay_selectable():
    assert DEFAULT_STRATEGY == {"uth": "uth_exact", "casino_holdem": "ch_exact", "xtreme": "uth_exact"}
    assert {"uth_table", "uth_basic"} <= set(STRATEGIES["uth"])
    assert {"ch_table", "ch_basic"} <= set(STRATEGIES["casino_holdem"])


@pytest.mark.parametrize("game_code", ["uth", "casino_holdem"])
def test_lookups_of_suit_renamed_situations_give_the_analysis_decisions(game_code):
    result = _reduced(game_code)
    tables = es.tables_from_result(result)
    cp = em.card_perms().astype(np.int64)
    reps = em.suit_classes(3).reps
    rng = np.random.default_rng(4)
    situations = _situations(5, 120)
    perms = rng.integers(0, 24, len(situations))
    player = np.array([cp[p][hole] for (_, hole, _), p in zip(situations, perms, strict=True)])
    flops = np.array([cp[p][reps[f]] for (f, _, _), p in zip(situations, perms, strict=True)])
    want = [result.flop_decisions[f, em.pair_index()[hole[0], hole[1]]] == 0 for f, hole, _ in situations]
    assert list(tables.flop_bets(player, flops)) == want
    if game_code == "uth":
        by_hand = {row["hand"]: row["decision"] for row in result.preflop}
        names = [by_hand[em.hand_name(int(a), int(b))] for a, b in player]
        assert list(tables.preflop_multiplier(player)) == [
            4 if n == "call4x" else 3 if n == "call3x" else 0 for n in names
        ]


def test_river_lookups_equal_brute_force():
    tables = es.tables_from_result(_reduced("uth"))
    names, _, fold = _returns_per_result("uth")
    base = len(names) - 1
    reps = em.suit_classes(3).reps
    cp = em.card_perms().astype(np.int64)
    calls = 0
    for i, (f, hole, turn_river) in enumerate(_situations(6, 24)):
        board = np.concatenate([reps[f], turn_river])
        returns = _brute_dealer_returns("uth", [int(c) for c in hole], [int(c) for c in board])
        call_net = sum(returns[:base]) + returns[-1] - (base + 1) * 990
        fold_net = sum(fold) * 990 - base * 990
        perm = cp[i % 24]
        got = tables.river_calls(perm[hole][None], perm[board][None])[0]
        assert got == (call_net > fold_net), (hole, board)
        calls += int(got)
    assert 0 < calls < 24  # both decisions seen


@pytest.mark.parametrize(("game_code", "name"), [("uth", "uth"), ("casino_holdem", "casino_holdem")])
def test_the_shipped_tables_agree_with_a_reduced_analysis_on_its_classes(game_code, name):
    shipped = es.exact_tables(name)
    reduced = es.tables_from_result(_reduced(game_code))
    assert np.array_equal(shipped.flop[FLOP_CLASSES], reduced.flop[FLOP_CLASSES])
    assert shipped.flop.shape == (1755, 166)
    if game_code == "uth":
        boards = em.suit_classes(5)
        touched = np.unique(
            np.concatenate(
                [boards.class_of[em.colex(em.flop_boards(em.suit_classes(3).reps[f])[1])] for f in FLOP_CLASSES]
            )
        )
        assert np.array_equal(shipped.river[touched], reduced.river[touched])
        assert shipped.river.shape == (134_459, 136)
        hclass, _ = em.hand_classes()
        sizes = np.bincount(hclass, minlength=169)
        assert int(sizes[shipped.preflop == 4].sum()) == 500  # the 4x hands: 500 of 1,326 combinations
        assert not (shipped.preflop == 3).any()
    assert (
        Fraction(shipped.rtp_per_ante)
        == {
            "uth": Fraction(2267173853027, 2317817502000),
            "casino_holdem": Fraction(61849287523, 63213204600),
        }[game_code]
    )


ROUNDS = 1_000_000  # a few seconds each; the 95 % interval is about +-0.9 % (UTH) and +-0.5 % (CH) of the ante


@pytest.mark.parametrize(
    ("game_code", "tables"), [("uth", "uth"), ("casino_holdem", "casino_holdem"), ("xtreme", "uth")]
)
def test_simulation_with_the_exact_strategy_agrees_with_the_exact_rtp(game_code, tables):
    summary = json.loads(es.exact_tables(tables).summary)
    result = simulate(game_code, rounds=ROUNDS, seed=25)
    assert result.strategy == DEFAULT_STRATEGY[game_code]
    lo, hi = result.ci95_per_ante
    assert lo < summary["rtp_per_ante"] < hi
    lo, hi = result.ci95_per_total_wagered
    assert lo < summary["rtp_per_total"] < hi
    # The decisions' shares: within 5 standard errors of the exact shares.
    shares = summary["decisions"]
    exact = (
        {"4x": shares["call4x"], "2x": shares["flop_call2x"], "1x": shares["river_call"], "fold": shares["river_fold"]}
        if tables == "uth"
        else {"2x": shares["flop_call"], "fold": shares["flop_fold"]}
    )
    for key, p in exact.items():
        assert abs(result.decisions.get(key, 0.0) - p) < 5 * (p * (1 - p) / ROUNDS) ** 0.5, key


def test_timeout_costs_are_consistent():
    ch = _reduced("casino_holdem")
    assert ch.timeouts["always"] == {"rtp_per_ante": 0, "rtp_per_total": 0}
    (point,) = ch.timeouts["points"]
    # Casino Hold'em: folding every flop returns nothing, so the timeout costs the whole RTP.
    assert point["street"] == "flop"
    assert point["per_round"] == ch.rtp_per_ante - 0
    uth = _reduced("uth")
    assert uth.timeouts["always"] == {"rtp_per_ante": -1, "rtp_per_total": 0}  # ante and blind lost
    preflop, flop, river = uth.timeouts["points"]
    # (hole, flop) situations per starting hand: its pairs off each flop class's representative, times the class size.
    flops = em.suit_classes(3)
    pairs = em.all_combinations(52, 2).astype(np.int64)
    hclass, names = em.hand_classes()
    weight = np.zeros(len(names), dtype=np.int64)
    for f in FLOP_CLASSES:
        off = ~np.isin(pairs, flops.reps[f]).any(axis=1)
        np.add.at(weight, hclass[off], int(flops.orbit[f]))
    total = int(weight.sum())
    w = {names[k]: int(weight[k]) for k in range(len(names))}
    checked = sum(w[r["hand"]] for r in uth.preflop if r["decision"] == "check")
    assert preflop["reached"] == 1
    assert flop["reached"] == Fraction(checked, total)
    assert flop["reached"] == uth.decisions["flop_call2x"] + uth.decisions["flop_check"]
    assert river["reached"] == uth.decisions["flop_check"]  # checked twice
    gap = sum((max(r["net_exact"].values()) - r["net_exact"]["check"]) * w[r["hand"]] for r in uth.preflop)
    assert preflop["per_round"] == gap / total
    assert preflop["per_round"] > 0
    for p in (flop, river):
        assert p["per_situation"] > 0
        assert p["per_round"] == p["per_situation"] * p["reached"]


def test_the_certification_pack_shows_the_exact_figures_and_strategy_tables(tmp_path: Path):
    results = tmp_path / "main"
    for code in ("uth", "casino_holdem"):
        call_command("rtp", code, "main", "--flop-classes", "5,300", "--out", str(results / code), stdout=io.StringIO())
    document = json.loads((results / "uth" / "main_rtp.json").read_text())
    assert document["format"] == "casino.main_rtp/1"
    (entry,) = document["results"]
    assert Fraction(entry["rtp_per_ante"]) == _reduced("uth").rtp_per_ante
    names = [t["name"] for t in entry["strategy"]]
    assert names == ["preflop", "flop (compact rule)", "river (compact rule)", "timeout defaults", "full tables"]
    assert len(entry["strategy"][0]["rows"]) == 169
    out = tmp_path / "pack"
    call_command("certification_report", out=out, main_results=results, shuffles=520, stdout=io.StringIO())
    report = json.loads((out / "report.json").read_text())
    html = (out / "index.html").read_text()
    for code in ("uth", "casino_holdem"):
        main = next(g for g in report["games"] if g["game"] == code)["main"]
        assert main["supplied"] is True
        assert main["results"][0]["strategy"][0]["rows"][0][0] == "AA"
    assert "timeout defaults" in html
    assert "river (compact rule)" in html
    assert entry["rtp_per_ante"] in html
