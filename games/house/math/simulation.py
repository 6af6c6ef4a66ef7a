"""Main-game simulation: many rounds, vectorised with NumPy and the batch evaluator.

``simulate(game, rounds=..., seed=..., strategy=...)`` deals each round from a
freshly shuffled deck (a partial Fisher-Yates shuffle per round, driven by NumPy's
seeded PCG64 generator: reproducible, and not the live secure generator), lets
the strategy decide, and settles the main wagers with the game definition's own
rule tables (``MainRule``) and pay tables: the same data live settlement reads.
Dealing and settling are ``deals.dealt_rounds`` and ``deals.settle_deals``, which
the strategy training uses too.

RTP per ante = 1 + mean net / ante; RTP per total wagered = total returned /
total staked (ante, automatic wager and call/play). 95 % intervals: normal
approximation on the per-round net (per ante) and the delta method (per total).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from games.house.math.deals import FloatArray, dealt_rounds, settle_deals
from games.house.math.strategy import DEFAULT_STRATEGY, STRATEGIES
from games.house.rules.registry import game

DEFAULT_BATCH = 250_000


@dataclass
class SimulationResult:
    game: str
    strategy: str
    rounds: int
    seed: int
    rtp_per_ante: float
    ci95_per_ante: tuple[float, float]
    rtp_per_total_wagered: float
    ci95_per_total_wagered: tuple[float, float]
    mean_total_wagered: float  # in antes
    per_wager_return: dict[str, float]  # mean returned per round, in antes
    decisions: dict[str, float]  # share of rounds per call multiplier / fold
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "strategy": self.strategy,
            "rounds": self.rounds,
            "seed": self.seed,
            "rtp_per_ante": self.rtp_per_ante,
            "ci95_per_ante": list(self.ci95_per_ante),
            "rtp_per_total_wagered": self.rtp_per_total_wagered,
            "ci95_per_total_wagered": list(self.ci95_per_total_wagered),
            "mean_total_wagered_in_antes": self.mean_total_wagered,
            "per_wager_return_in_antes": self.per_wager_return,
            "decisions": self.decisions,
            "seconds": round(self.seconds, 2),
        }


def simulate(
    game_code: str,
    *,
    rounds: int,
    seed: int,
    strategy: str | None = None,
    batch: int = DEFAULT_BATCH,
    progress: Callable[[int], None] | None = None,
) -> SimulationResult:
    """Play ``rounds`` main-game rounds with ``strategy`` (the game's default if None)."""
    import time

    definition = game(game_code)
    name = strategy or DEFAULT_STRATEGY[game_code]
    try:
        decide = STRATEGIES[game_code][name]
    except KeyError:
        raise ValueError(f"unknown strategy {name!r} for {game_code}; known: {sorted(STRATEGIES[game_code])}") from None
    tables = definition.default_pay_tables()
    started = time.perf_counter()
    sums = {"net": 0.0, "net2": 0.0, "staked": 0.0, "staked2": 0.0, "returned": 0.0, "cross": 0.0, "returned2": 0.0}
    per_wager: dict[str, float] = {}
    decision_counts: dict[str, int] = {}
    done = 0
    for deal, dealer_rank in dealt_rounds(rounds, seed, batch):
        multiplier, folded = decide(deal)
        settled = settle_deals(definition, tables, deal.player_rank, dealer_rank, multiplier, folded)
        staked: FloatArray = np.sum([s for s, _ in settled.values()], axis=0)
        returned: FloatArray = np.sum([r for _, r in settled.values()], axis=0)
        net = returned - staked
        sums["net"] += float(net.sum())
        sums["net2"] += float((net * net).sum())
        sums["staked"] += float(staked.sum())
        sums["staked2"] += float((staked * staked).sum())
        sums["returned"] += float(returned.sum())
        sums["returned2"] += float((returned * returned).sum())
        sums["cross"] += float((returned * staked).sum())
        for wager, (_, r) in settled.items():
            per_wager[wager] = per_wager.get(wager, 0.0) + float(r.sum())
        for m in (4, 3, 2, 1):
            decision_counts[f"{m}x"] = decision_counts.get(f"{m}x", 0) + int((multiplier == m).sum())
        decision_counts["fold"] = decision_counts.get("fold", 0) + int(folded.sum())
        done += len(deal.player)
        if progress is not None:
            progress(done)
    return _result(game_code, name, rounds, seed, sums, per_wager, decision_counts, time.perf_counter() - started)


def _result(
    game_code: str,
    name: str,
    n: int,
    seed: int,
    sums: dict[str, float],
    per_wager: dict[str, float],
    decision_counts: dict[str, int],
    seconds: float,
) -> SimulationResult:
    mean_net = sums["net"] / n
    var_net = max(sums["net2"] / n - mean_net**2, 0.0)
    half = 1.96 * math.sqrt(var_net / n)
    ratio = sums["returned"] / sums["staked"]
    mean_staked = sums["staked"] / n
    # Delta method for a ratio of means: Var(R - ratio * S) / (n * mean(S)^2).
    var_d = (
        sums["returned2"] / n
        - 2 * ratio * sums["cross"] / n
        + ratio**2 * sums["staked2"] / n
        - (sums["returned"] / n - ratio * mean_staked) ** 2
    )
    half_total = 1.96 * math.sqrt(max(var_d, 0.0) / n) / mean_staked
    return SimulationResult(
        game=game_code,
        strategy=name,
        rounds=n,
        seed=seed,
        rtp_per_ante=1 + mean_net,
        ci95_per_ante=(1 + mean_net - half, 1 + mean_net + half),
        rtp_per_total_wagered=ratio,
        ci95_per_total_wagered=(ratio - half_total, ratio + half_total),
        mean_total_wagered=mean_staked,
        per_wager_return={k: v / n for k, v in per_wager.items()},
        decisions={k: v / n for k, v in decision_counts.items() if v},
        seconds=seconds,
    )
