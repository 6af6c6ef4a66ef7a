"""``manage.py bench evaluator``: batch, scalar and memory figures of the hand evaluator, side by side
with phevaluator (C extension) and treys, plus an agreement check against phevaluator.

Options (``-o KEY=VALUE``): ``peer_first_cards`` (default 1: the peer evaluates
every hand whose lowest card is among the first N cards from ``slice_from``,
18,009,460 hands for N = 1 from card 0, the same hands as ours, and its time is
scaled to all 133,784,560; 52 runs the peer on every hand), ``slice_from``
(default 0: the index of the peer's first lowest card; a high one makes the slice
small: 462 hands from card 40), ``full_enumeration`` (default 1: our batch ranks
every C(52,7) hand and checks the published category table; 0 ranks only the
peer's slice and scales its time the same way, for the test suite's smoke run),
``scalar_hands`` (200,000), ``treys_hands`` (20,000), ``agreement_hands``
(1,000,000), ``simulate_rounds`` (10,000,000: the UTH simulation, its time
scaled to 10 million when fewer; 0 skips it), ``seed`` (2026).
"""

from __future__ import annotations

import itertools
import resource
import time
from math import comb
from typing import Any

import numpy as np

from casino.bench import BenchResult, Writer, benchmark
from games.cards.batch import (
    PUBLISHED_CATEGORY_COUNTS,
    category_counts,
    enumerate_ranks,
    evaluate_batch,
    random_hands,
)
from games.cards.cards import Card
from games.cards.evaluator import evaluate, rank7_indices, rank_of, tables

ALL_SEVEN = comb(52, 7)
_PH_SUIT = {"c": 0, "d": 1, "h": 2, "s": 3}


def _ph_ids() -> list[int]:
    """phevaluator's card id for each of our card indices."""
    return [(card.rank - 2) * 4 + _PH_SUIT[card.suit] for card in (Card.from_index(i) for i in range(52))]


def _rss_mib() -> float:
    """Peak resident set size of this process so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _current_rss_mib() -> float:
    """Resident set size now (Linux /proc; the peak elsewhere)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize() / 2**20
    except OSError:
        return _rss_mib()


def _rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


def simulate_uth_10m_seconds(*, out: Writer, seed: int, rounds: int = 10_000_000) -> float | None:
    """Seconds to simulate 10 million rounds of Ultimate Texas Hold'em with the default
    strategy, through ``games.house.math.simulation.simulate`` (what ``manage.py simulate`` runs);
    ``rounds`` fewer than that are timed and scaled to 10 million."""
    from games.house.math.simulation import simulate

    result = simulate("uth", rounds=rounds, seed=seed)
    out.write(
        f"simulate uth {rounds:,} rounds ({result.strategy}): {result.seconds:.1f} s, RTP per ante "
        f"{result.rtp_per_ante:.4%}, per total wagered {result.rtp_per_total_wagered:.4%}\n"
    )
    return result.seconds * 10_000_000 / rounds


@benchmark("evaluator")
def bench_evaluator(
    *,
    out: Writer,
    peer_first_cards: int = 1,
    slice_from: int = 0,
    full_enumeration: int = 1,
    scalar_hands: int = 200_000,
    treys_hands: int = 20_000,
    agreement_hands: int = 1_000_000,
    simulate_rounds: int = 10_000_000,
    seed: int = 2026,
    **options: Any,
) -> BenchResult:
    """Hand evaluator: all 7-card hands (batch) vs phevaluator's C loop, scalar evals/s, tables, agreement."""
    from phevaluator import _pheval, evaluate_cards
    from treys import Card as TreysCard
    from treys import Evaluator as TreysEvaluator

    rows: list[list[Any]] = []
    figures: dict[str, Any] = {}
    rss_before = _current_rss_mib()

    # --- tables -------------------------------------------------------------------------------
    started = time.perf_counter()
    t = tables()
    evaluate("As Ks Qs Js Ts 2c 3d")  # also builds the scalar views
    build_seconds = time.perf_counter() - started
    tables_mib = t.nbytes / 2**20
    tables_rss_delta = _current_rss_mib() - rss_before
    figures["tables_rss_delta_mib"] = round(tables_rss_delta, 1)
    figures["tables_build_seconds"] = round(build_seconds, 3)
    figures["tables_mib"] = round(tables_mib, 2)
    out.write(f"tables: {tables_mib:.1f} MiB built in {build_seconds:.2f} s\n")

    # The peer's slice: the hands whose lowest card is in ``lowest`` (all of them from card 0 with 46 cards).
    first = max(0, min(slice_from, 45))
    lowest = range(first, max(first + 1, min(first + peer_first_cards, 46)))
    full = bool(full_enumeration)

    # --- batch: every 7-card hand (or, not full, the peer's slice, scaled like the peer) ------
    started = time.perf_counter()
    cpu_started = time.process_time()
    histogram = enumerate_ranks(7) if full else enumerate_ranks(7, first_cards=lowest)
    batch_seconds = time.perf_counter() - started
    batch_cpu = time.process_time() - cpu_started
    batch_hands = int(histogram.sum())
    batch_all7 = batch_seconds * ALL_SEVEN / batch_hands
    # The published category table is for all hands: checked only when all were ranked.
    table_ok = (
        (category_counts(histogram) == PUBLISHED_CATEGORY_COUNTS[7] and batch_hands == ALL_SEVEN) if full else None
    )
    figures["batch_hands_measured"] = batch_hands
    figures["batch_all7_seconds"] = round(batch_all7, 3)
    figures["batch_all7_cpu_seconds"] = round(batch_cpu * ALL_SEVEN / batch_hands, 3)
    figures["batch_all7_scaled"] = batch_hands != ALL_SEVEN
    figures["batch_all7_hands_per_s"] = round(_rate(ALL_SEVEN, batch_all7))
    figures["all7_category_table_matches"] = table_ok
    kind = "measured" if batch_hands == ALL_SEVEN else f"scaled to all: {batch_all7:.1f} s"
    label = "ours: batch, all C(52,7)" if full else f"ours: batch, lowest card {lowest.start}..{lowest.stop - 1}"
    rows.append([label, batch_hands, batch_seconds, _rate(batch_hands, batch_seconds), kind])
    out.write(
        f"batch: {batch_hands:,} hands in {batch_seconds:.2f} s (cpu {batch_cpu:.2f} s); category table ok={table_ok}\n"
    )

    # --- peer: phevaluator's C evaluator in a Python loop, on the same hands ------------------
    ph7 = _pheval.evaluate_7cards
    ph_ids = _ph_ids()
    peer_histogram = np.zeros(7463, dtype=np.int64)
    peer_counts = [0] * 7463
    peer_hands = 0
    started = time.perf_counter()
    for c1 in lowest:
        for rest in itertools.combinations(ph_ids[c1 + 1 :], 6):
            peer_counts[ph7(ph_ids[c1], *rest)] += 1
    peer_measured = time.perf_counter() - started
    peer_hands = sum(peer_counts)
    peer_histogram[1:] = np.array(peer_counts[1:][::-1])  # phevaluator: 1 = best -> our 7462
    ours_same = histogram if not full else enumerate_ranks(7, first_cards=lowest)
    peer_agrees = bool(np.array_equal(ours_same, peer_histogram))
    peer_all7 = peer_measured * ALL_SEVEN / peer_hands
    figures["peer_hands_measured"] = peer_hands
    figures["peer_measured_seconds"] = round(peer_measured, 3)
    figures["peer_all7_seconds"] = round(peer_all7, 2)
    figures["peer_all7_scaled"] = peer_hands != ALL_SEVEN
    figures["peer_same_hands_histogram_matches"] = peer_agrees
    figures["batch_ratio"] = round(peer_all7 / batch_all7, 1)
    rows.append(
        [
            "phevaluator C, loop",
            peer_hands,
            peer_measured,
            _rate(peer_hands, peer_measured),
            "measured" if peer_hands == ALL_SEVEN else f"scaled to all: {peer_all7:.1f} s",
        ]
    )
    out.write(
        f"peer: {peer_hands:,} hands in {peer_measured:.2f} s -> all {peer_all7:.1f} s; same ranks={peer_agrees}\n"
    )

    # --- scalar: 7-card evaluations from Python -----------------------------------------------
    rng = np.random.default_rng(seed)
    hands = random_hands(rng, scalar_hands)
    index_hands = [tuple(int(i) for i in row) for row in hands]
    card_hands = [tuple(Card.from_index(i) for i in row) for row in index_hands]
    ph_hands = [tuple(ph_ids[i] for i in row) for row in index_hands]

    def timed(label: str, call: Any, inputs: list[Any], star: bool = True) -> float:
        begin = time.perf_counter()
        if star:
            for item in inputs:
                call(*item)
        else:
            for item in inputs:
                call(item)
        seconds = time.perf_counter() - begin
        rate = _rate(len(inputs), seconds)
        rows.append([label, len(inputs), seconds, rate, "scalar"])
        return rate

    figures["scalar_evals_per_s"] = round(timed("ours: rank7_indices(i1..i7)", rank7_indices, index_hands))
    figures["scalar_rank_of_per_s"] = round(timed("ours: rank_of(cards)", rank_of, card_hands, star=False))
    figures["scalar_evaluate_per_s"] = round(
        timed("ours: evaluate(cards) + best five", evaluate, card_hands[: scalar_hands // 10], star=False)
    )
    figures["phevaluator_public_per_s"] = round(timed("phevaluator.evaluate_cards", evaluate_cards, ph_hands))
    figures["phevaluator_c_per_s"] = round(timed("phevaluator _pheval.evaluate_7cards", ph7, ph_hands))
    treys = TreysEvaluator()
    treys_inputs = [[TreysCard.new(str(card)) for card in row] for row in card_hands[:treys_hands]]
    figures["treys_per_s"] = round(
        timed("treys Evaluator.evaluate", lambda cards: treys.evaluate(cards[:2], cards[2:]), treys_inputs, False)
    )

    # --- batch over arbitrary hands + agreement with phevaluator ------------------------------
    agreement = random_hands(rng, agreement_hands)
    started = time.perf_counter()
    ours = evaluate_batch(agreement).astype(np.int64)
    batch_random_seconds = time.perf_counter() - started
    rows.append(["ours: evaluate_batch(N x 7 random)", agreement_hands, batch_random_seconds, 0, "batch"])
    rows[-1][3] = _rate(agreement_hands, batch_random_seconds)
    ph_id_table = np.array(ph_ids)
    disagreements = 0
    for chunk in range(0, agreement_hands, 100_000):  # chunks keep the Python lists small
        rows_ph = ph_id_table[agreement[chunk : chunk + 100_000]].tolist()
        theirs = np.fromiter((ph7(*row) for row in rows_ph), dtype=np.int64, count=len(rows_ph))
        disagreements += int(np.count_nonzero(ours[chunk : chunk + 100_000] != 7463 - theirs))
    figures["evaluate_batch_random_per_s"] = round(_rate(agreement_hands, batch_random_seconds))
    figures["agreement_hands"] = agreement_hands
    figures["agreement_disagreements"] = disagreements
    out.write(f"agreement with phevaluator on {agreement_hands:,} random hands: {disagreements} disagreements\n")

    # --- simulation (math helper) -------------------------------------------------------------
    # 0 skips it (the smoke run: the strategy's first use builds its tables, seconds that a small run cannot scale).
    simulated = simulate_uth_10m_seconds(out=out, seed=seed, rounds=simulate_rounds) if simulate_rounds > 0 else None
    figures["simulate_uth_rounds"] = simulate_rounds
    figures["simulate_uth_10m_seconds"] = None if simulated is None else round(simulated, 2)

    figures["rss_before_mib"] = round(rss_before, 1)
    figures["rss_peak_mib"] = round(_rss_mib(), 1)
    notes = [
        f"lookup tables {tables_mib:.1f} MiB (NumPy arrays); resident set grew {tables_rss_delta:.0f} MiB "
        f"building them ({build_seconds:.2f} s); peak RSS of the whole benchmark {_rss_mib():.0f} MiB",
        "batch = every one of the C(52,7) hands ranked and counted (NumPy, one process)"
        if full
        else "batch = the peer's slice only (full_enumeration=0), its time scaled to all hands like the peer's",
        "the peer loops over the same hands in lexicographic order; its time is scaled when not run on all",
    ]
    return BenchResult(
        "Hand evaluator (7 cards)", ["what", "hands", "seconds", "hands_per_s", "kind"], rows, figures, notes
    )
