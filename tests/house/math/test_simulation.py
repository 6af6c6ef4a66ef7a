"""Simulation: the vectorised settlement is live settlement's, runs are reproducible."""

from __future__ import annotations

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command

from games.cards.batch import evaluate_batch
from games.cards.cards import Card
from games.house.math.deals import Deal, deal_batch, settle_deals
from games.house.math.simulation import simulate
from games.house.math.strategy import DEFAULT_STRATEGY, STRATEGIES
from games.house.rules.definitions import Play, settle_round
from games.house.rules.registry import GAMES


def test_deal_batch_gives_nine_distinct_cards_per_round():
    cards = deal_batch(np.random.default_rng(1), 20_000)
    assert cards.shape == (20_000, 9)
    ordered = np.sort(cards, axis=1)
    assert not np.any(ordered[:, 1:] == ordered[:, :-1])
    # Every card shows up in every position.
    for position in range(9):
        assert len(np.unique(cards[:, position])) == 52


@pytest.mark.parametrize(("game", "strategy"), [(g, s) for g, names in STRATEGIES.items() for s in names])
def test_vectorised_settlement_equals_live_settlement(game, strategy):
    definition = GAMES[game]
    tables = definition.default_pay_tables()
    cards = deal_batch(np.random.default_rng(7), 400)
    player, dealer, board = cards[:, :2], cards[:, 2:4], cards[:, 4:]
    player_rank = np.asarray(evaluate_batch(np.concatenate([player, board], axis=1)), dtype=np.int64)
    dealer_rank = np.asarray(evaluate_batch(np.concatenate([dealer, board], axis=1)), dtype=np.int64)
    multiplier, folded = STRATEGIES[game][strategy](Deal(player, dealer, board, player_rank))
    settled = settle_deals(definition, tables, player_rank, dealer_rank, multiplier, folded)
    for i in range(len(cards)):
        live = settle_round(
            definition,
            tables=tables,
            player=[Card.from_index(int(c)) for c in player[i]],
            dealer=[Card.from_index(int(c)) for c in dealer[i]],
            board=[Card.from_index(int(c)) for c in board[i]],
            stakes={"ante": 100},
            decisions=Play((), int(multiplier[i]), bool(folded[i])),
        )
        for wager, (stake, returned) in settled.items():
            if stake[i] == 0:
                with pytest.raises(KeyError):
                    live.wager(wager)
                continue
            result = live.wager(wager)
            assert result.stake == round(stake[i] * 100)
            # 3:2 on 100 is exact, so the float path and the integer path agree exactly.
            assert result.returned == round(returned[i] * 100), (wager, i)


def test_simulation_is_reproducible_and_reports_intervals():
    first = simulate("uth", rounds=30_000, seed=11, batch=10_000)
    again = simulate("uth", rounds=30_000, seed=11, batch=10_000)
    other = simulate("uth", rounds=30_000, seed=12, batch=10_000)
    assert first.as_dict() | {"seconds": 0} == again.as_dict() | {"seconds": 0}
    assert first.rtp_per_ante != other.rtp_per_ante
    low, high = first.ci95_per_ante
    assert low < first.rtp_per_ante < high
    low, high = first.ci95_per_total_wagered
    assert low < first.rtp_per_total_wagered < high
    # Total wagered per round: ante + ante plus + the call, 2 to 6 antes.
    assert 2 < first.mean_total_wagered < 6
    assert sum(first.decisions.values()) == pytest.approx(1)
    assert first.rtp_per_ante == pytest.approx(sum(first.per_wager_return.values()) - first.mean_total_wagered + 1)


def test_simulate_command_prints_the_json_line():
    out = StringIO()
    call_command("simulate", "casino_holdem", "--rounds", "20000", "--seed", "3", stdout=out)
    body = json.loads(out.getvalue().strip().splitlines()[-1])
    assert body["rounds"] == 20000
    assert body["strategy"] == DEFAULT_STRATEGY["casino_holdem"]
    assert {"rtp_per_ante", "rtp_per_total_wagered", "ci95_per_ante"} <= set(body)
    low, high = body["ci95_per_ante"]
    assert low < body["rtp_per_ante"] < high


def test_rtp_command_prints_the_json_line():
    out = StringIO()
    call_command("rtp", "xtreme", "hole_card_bonus", "--paytable", "3", stdout=out)
    body = json.loads(out.getvalue().strip().splitlines()[-1])
    assert body["paytable"] == "xtreme.hole_card_bonus.3"
    assert body["rtp_exact"] == "199/221"  # (6*31 + 12*21 + 36*11 + 72*5) / 1326
    assert {line["outcome"] for line in body["outcomes"]} >= {"pair_of_aces", "pair"}
