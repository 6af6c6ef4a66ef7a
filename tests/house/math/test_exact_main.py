"""Exact main-game returns (games.house.math.exact_main) in a reduced, exact form.

The full analyses (every hole pair, flop, turn, river and dealer hand) take a
minute or two and several GiB (docs/game-math.md records them); here the same
code runs on one board, one flop class or two, and is compared with brute force
written separately from the rules: the scalar evaluator, each main wager's
``MainRule`` and pay table, the dealer's qualifier, the decision multipliers.
"""

from __future__ import annotations

import csv
import gzip
import io
import itertools
import json
from fractions import Fraction

import numpy as np
import pytest
from django.core.management import call_command

from games.cards.batch import evaluate_batch
from games.cards.cards import parse_cards
from games.cards.evaluator import category_of_rank, rank_indices
from games.house.math import exact_main as em
from games.house.rules.definitions import Action, WagerKind
from games.house.rules.registry import game


def _returns_per_result(
    game_code: str,
) -> tuple[list[str], dict[tuple[str, bool, str], list[Fraction]], list[Fraction]]:
    """Per (result, dealer qualified, player category): each main wager's return per unit
    staked (the decision wager last), straight from the definition; and on a fold."""
    definition = game(game_code)
    wagers = [w for w in definition.wagers if w.main_rule is not None and w.kind is not WagerKind.DECISION]
    wagers.append(definition.wager(definition.decision_wager))
    value = {Action.EVEN: Fraction(2), Action.PUSH: Fraction(1), Action.LOSE: Fraction(0)}
    table: dict[tuple[str, bool, str], list[Fraction]] = {}
    for result in ("win", "tie", "lose"):
        for qualified in (True, False):
            for category in ("royal_flush", "straight_flush", "four_of_a_kind", "full_house", "flush", "straight",
                             "three_of_a_kind", "two_pair", "pair", "high_card"):  # fmt: skip
                row = []
                for w in wagers:
                    assert w.main_rule is not None
                    action = w.main_rule.action(result, qualified)
                    if action is Action.TABLE:
                        row.append(definition.pay_table(w.name).pay_for(category).return_multiple)
                    else:
                        row.append(value[action])
                table[result, qualified, category] = row
    assert all(w.main_rule is not None for w in wagers)
    fold = [value[w.main_rule.fold] for w in wagers[:-1] if w.main_rule is not None]
    return [w.name for w in wagers], table, fold


def _brute_dealer_returns(game_code: str, hole: list[int], board: list[int]) -> list[Fraction]:
    """Each main wager's return per unit, summed over the 990 dealer hands (brute force)."""
    definition = game(game_code)
    threshold = definition.qualifier.threshold_rank()
    _, table, _ = _returns_per_result(game_code)
    player = rank_indices([*hole, *board])
    category = category_of_rank(player).value
    rest = [c for c in range(52) if c not in hole and c not in board]
    totals = [Fraction(0)] * len(table["win", True, category])
    for d1, d2 in itertools.combinations(rest, 2):
        dealer = rank_indices([d1, d2, *board])
        result = "win" if player > dealer else "tie" if player == dealer else "lose"
        row = table[result, dealer >= threshold, category]
        totals = [t + r for t, r in zip(totals, row, strict=True)]
    return totals


def _spec(game_code: str) -> em.MainGame:
    return em.main_game(game(game_code))


@pytest.mark.parametrize("game_code", ["uth", "casino_holdem"])
def test_the_river_view_of_one_board_equals_brute_force_for_every_hole_pair(game_code):
    spec = _spec(game_code)
    classes = em.suit_classes(5)
    board_class = 12345
    board = [int(c) for c in classes.reps[board_class]]
    river = em.river_view(spec, only=np.array([board_class]))
    row = river.packed[board_class]
    threshold = game(game_code).qualifier.threshold_rank()
    _, table, fold = _returns_per_result(game_code)
    rest = [c for c in range(52) if c not in board]
    ranks = {pair: rank_indices([*pair, *board]) for pair in itertools.combinations(rest, 2)}
    pidx = em.pair_index()
    for hole, player in ranks.items():
        category = category_of_rank(player).value
        counts: dict[tuple[str, bool], int] = {}
        for dealer_pair, dealer in ranks.items():
            if set(dealer_pair) & set(hole):
                continue
            key = ("win" if player > dealer else "tie" if player == dealer else "lose", dealer >= threshold)
            counts[key] = counts.get(key, 0) + 1
        assert sum(counts.values()) == 990
        expected = [sum((n * table[r, q, category][w] for (r, q), n in counts.items()), Fraction(0))
                    for w in range(len(spec.wagers))]  # fmt: skip
        packed = np.array([row[pidx[hole]]])
        got = [Fraction(int(river.packing.unpack(packed, w)[0]), spec.scale) for w in range(len(spec.wagers))]
        assert got == expected, (hole, got, expected)
        lose = sum(n for (r, _), n in counts.items() if r == "lose")
        assert int(river.packing.unpack(packed, len(spec.wagers))[0]) == lose
        if spec.river:
            multiplier = spec.river[0][1]
            call_net = sum(expected[:-1]) + multiplier * expected[-1] - (len(fold) + multiplier) * 990
            fold_net = sum(fold) * 990 - len(fold) * 990
            assert bool(row[pidx[hole]] >> river.packing.call_shift & 1) == (call_net > fold_net)


@pytest.mark.parametrize(
    ("game_code", "hole", "flop"),
    [("uth", "Kh Qh", "Jh Th 3c"), ("casino_holdem", "9d 8c", "7c 6h Ks"), ("uth", "7s 2d", "Ac 7c 4h")],
)
def test_one_hole_and_flop_enumerated_completely_equals_brute_force(game_code, hole, flop):
    """Every turn, river and dealer hand (1,081 x 990) for one hole pair and one flop,
    the river decided by brute force too; the flop is not its class's representative,
    so the suit permutation to it is exercised."""
    spec = _spec(game_code)
    hole_cards = [c.index for c in parse_cards(hole)]
    flop_cards = sorted(c.index for c in parse_cards(flop))
    flops = em.suit_classes(3)
    where = em.colex(np.array([flop_cards]))[0]
    f, perm = int(flops.class_of[where]), int(flops.perm_of[where])
    assert sorted(flops.reps[f].tolist()) != flop_cards  # the flop is not its class's representative
    boards = em.suit_classes(5).class_of[em.colex(em.flop_boards(flops.reps[f])[1])]
    river = em.river_view(spec, only=boards.astype(np.int64))
    view = em.flop_view(spec, river, only=[f])
    options, nets, choice = em.flop_decision(spec, view)
    mapped = int(em.pair_perms()[perm, em.pair_index()[hole_cards[0], hole_cards[1]]])

    # Brute force: every turn/river, every dealer hand.
    names, _, fold = _returns_per_result(game_code)
    base = len(names) - 1
    rest = [c for c in range(52) if c not in hole_cards and c not in flop_cards]
    bet_sums = [Fraction(0)] * len(names)
    check_net = Fraction(0)
    river_calls = 0
    for turn, last in itertools.combinations(rest, 2):
        returns = _brute_dealer_returns(game_code, hole_cards, [*flop_cards, turn, last])
        bet_sums = [s + r for s, r in zip(bet_sums, returns, strict=True)]
        if spec.river:
            m = spec.river[0][1]
            call = sum(returns[:-1]) + m * returns[-1] - (base + m) * 990
            folded = sum(fold) * 990 - base * 990
            river_calls += call > folded
            check_net += max(call, folded)
    deals = 1081 * 990
    assert [Fraction(int(view.returns[w, f, mapped]), spec.scale) for w in range(len(names))] == bet_sums
    for i, (_, m) in enumerate(spec.flop):
        expected = sum(bet_sums[:-1]) + m * bet_sums[-1] - (base + m) * deals
        assert Fraction(int(nets[i, f, mapped]), spec.scale) == expected
    if spec.flop_folds:
        other = sum(fold) * deals - base * deals
    else:
        other = check_net
        assert int(view.river_calls[f, mapped]) == river_calls
    assert Fraction(int(nets[-1, f, mapped]), spec.scale) == other
    values = [Fraction(int(nets[i, f, mapped]), spec.scale) for i in range(len(options))]
    best = max(values)
    assert values[int(choice[f, mapped])] == best


def test_the_counts_cover_every_deal_once():
    assert em.ALL_DEALS == 1326 * 2_118_760 * 990
    assert int(em.suit_classes(5).orbit.sum()) == 2_598_960
    assert len(em.suit_classes(5).reps) == 134_459
    assert len(em.suit_classes(3).reps) == 1_755
    assert int(em.suit_classes(3).orbit.sum()) == 22_100
    classes, names = em.hand_classes()
    assert len(names) == 169
    assert np.bincount(classes).tolist().count(6) == 13
    assert np.bincount(classes).sum() == 1326


def test_the_strategy_tables_have_the_documented_format(tmp_path):
    out = io.StringIO()
    call_command("rtp", "uth", "main", "--flop-classes", "0,1754", "--out", str(tmp_path), stdout=out)
    body = json.loads(out.getvalue().strip().splitlines()[-1])
    for key in ("rtp_per_ante", "rtp_per_total", "house_edge", "element_of_risk", "rtp_per_ante_exact",
                "rtp_per_total_exact", "hands_enumerated", "seconds"):  # fmt: skip
        assert key in body
    assert body["complete"] is False
    assert Fraction(body["rtp_per_ante_exact"]) == pytest.approx(body["rtp_per_ante"])
    summary = json.loads((tmp_path / "main_rtp.json").read_text())
    assert summary["format"] == "casino.main_rtp/1"
    assert set(summary["files"]) == set(em.STRATEGY_FORMAT)
    assert summary["summary"]["rtp_per_ante_exact"] == body["rtp_per_ante_exact"]
    assert set(summary["rules"]) == {"preflop", "flop", "river"}
    assert set(summary["rules"]["preflop"]) == {"call4x", "call3x", "check"}
    assert {r["made_hand"] for r in summary["rules"]["river"]} <= set(em.CATEGORIES)
    rows = list(csv.reader((tmp_path / "preflop.csv").open()))
    assert rows[0] == ["hand", "combos", "decision", "net_call4x", "net_call3x", "net_check"]
    assert all(r[2] in ("call4x", "call3x", "check") for r in rows[1:])
    with gzip.open(tmp_path / "flop.csv.gz", "rt") as handle:
        lines = handle.read().splitlines()
    assert lines[0] == "flop,weight,hole,decision"
    flops = em.suit_classes(3)
    assert len(lines) == 1 + 2 * 1176
    first = lines[1].split(",")
    assert first[0] == em.card_text(flops.reps[0])
    assert first[1] == str(flops.orbit[0])
    assert first[3] in ("call2x", "check")
    flop = np.load(tmp_path / "flop.npz")
    assert flop["reps"].shape == (1755, 3)
    assert flop["decision"].shape == (1755, 1326)
    assert flop["pairs"].shape == (1326, 2)
    assert list(flop["options"]) == ["call2x", "check"]
    assert (flop["decision"][0] >= 0).sum() == 1176
    assert (flop["decision"][1] == -1).all()
    river = np.load(tmp_path / "river.npz")
    assert river["reps"].shape == (134_459, 5)
    assert river["call"].shape == (134_459, 166)
    assert river["orbit"].sum() == 2_598_960


def _brute_flop_values(game_code: str, hole: list[int], flop: list[int]) -> dict[str, Fraction]:
    """Net of each preflop option (and of the flop's best, "check") for one actual hole
    pair and flop, over every turn, river and dealer hand: brute force with the batch
    evaluator, the decisions taken from the rules' returns (UTH)."""
    definition = game(game_code)
    names, table, fold = _returns_per_result(game_code)
    scale = 2  # the 3:2 flush
    threshold = definition.qualifier.threshold_rank()
    categories = list(em.CATEGORIES)
    # mult[w, result(0 win, 1 tie, 2 lose), qualified(0 yes, 1 no), category] scaled to integers
    mult = np.zeros((len(names), 3, 2, len(categories)), dtype=np.int64)
    for (result, qualified, category), row in table.items():
        for w, value in enumerate(row):
            mult[w, ("win", "tie", "lose").index(result), 0 if qualified else 1, categories.index(category)] = int(
                value * scale
            )
    rest = np.setdiff1d(np.arange(52), [*hole, *flop])
    tr = np.array(list(itertools.combinations(range(47), 2)))
    keep = np.ones((len(tr), 47), dtype=bool)
    keep[np.arange(len(tr)), tr[:, 0]] = False
    keep[np.arange(len(tr)), tr[:, 1]] = False
    others = rest[np.nonzero(keep)[1].reshape(len(tr), 45)]
    boards = np.concatenate([np.broadcast_to(flop, (len(tr), 3)), rest[tr]], axis=1)
    player = evaluate_batch(np.concatenate([np.broadcast_to(hole, (len(tr), 2)), boards], axis=1)).astype(np.int64)
    d = others[:, np.array(list(itertools.combinations(range(45), 2)))]  # (1081, 990, 2)
    seven = np.concatenate([np.broadcast_to(boards[:, None, :], (len(tr), 990, 5)), d], axis=2)
    dealer = evaluate_batch(seven.reshape(-1, 7)).astype(np.int64).reshape(len(tr), 990)
    results = np.where(player[:, None] > dealer, 0, np.where(player[:, None] == dealer, 1, 2))
    unqualified = np.where(dealer >= threshold, 0, 1)
    player_category = np.array([categories.index(category_of_rank(int(r)).value) for r in player])
    returns = mult[:, results, unqualified, player_category[:, None]].sum(axis=2)  # (wagers, 1081)
    unit = 990 * scale
    base = len(names) - 1
    river_call = returns[:base].sum(axis=0) + returns[-1] - (base + 1) * unit
    river_fold = int(sum(fold) * scale) * 990 - base * unit
    check = np.maximum(river_call, river_fold).sum()
    sums = returns.sum(axis=1)
    net = {m: int(sums[:base].sum() + m * sums[-1] - (base + m) * unit * len(tr)) for m in (4, 3, 2)}
    total = unit * len(tr)
    return {
        "call4x": Fraction(net[4], total),
        "call3x": Fraction(net[3], total),
        "check": Fraction(max(net[2], int(check)), total),
    }


def test_one_starting_hand_over_every_flop_of_one_class_equals_brute_force():
    """The preflop step on a reduced, exact analysis (one flop class): for AA, every
    actual hole pair and every actual flop of the class of 2s 2h 2d, every turn, river
    and dealer hand, each brute-forced and averaged; equal to the analysis's exact
    preflop nets, which it gets from the class representative through suit renaming."""
    flops = em.suit_classes(3)
    flop_class = int(flops.class_of[em.colex(np.array([sorted(c.index for c in parse_cards("2s 2h 2d"))]))[0]])
    result = em.exact_main_rtp("uth", flop_classes=[flop_class])
    row = next(r for r in result.preflop if r["hand"] == "AA")
    members = [sorted(s) for s in itertools.combinations(range(52), 3)]
    actual_flops = [f for f in members if flops.class_of[em.colex(np.array([f]))[0]] == flop_class]
    assert len(actual_flops) == flops.orbit[flop_class] == 4
    totals = {"call4x": Fraction(0), "call3x": Fraction(0), "check": Fraction(0)}
    count = 0
    for hole in itertools.combinations([c.index for c in parse_cards("As Ah Ad Ac")], 2):
        for flop in actual_flops:
            for option, value in _brute_flop_values("uth", list(hole), flop).items():
                totals[option] += value
            count += 1
    assert count == 24
    assert row["net_exact"] == {option: value / count for option, value in totals.items()}
