"""The shuffle (RULES.md: unbiased Fisher-Yates on a cryptographically secure generator, no modulo bias)."""

from __future__ import annotations

import itertools
import math
import secrets
from collections import Counter

import pytest

from games.cards.cards import FULL_DECK
from games.cards.shuffle import (
    RandomSource,
    SecureRandomSource,
    SeededRandomSource,
    default_source,
    fisher_yates,
    shuffled,
    shuffled_deck,
)
from games.cards.shuffle_stats import (
    chi2_critical,
    chi2_survival,
    fairness_report,
    modulo_biased_shuffle,
    naive_swap_shuffle,
    position_counts,
)


class ScriptedSource:
    """Replays a fixed sequence of draws and records the bounds asked for."""

    def __init__(self, draws):
        self.draws = list(draws)
        self.bounds: list[int] = []

    def randbelow(self, n: int) -> int:
        self.bounds.append(n)
        value = self.draws.pop(0)
        assert 0 <= value < n
        return value


def _all_draw_paths(shuffle, n):
    """Every permutation produced by every possible sequence of draws: an exact distribution."""
    probe = ScriptedSource([0] * 64)
    shuffle(list(range(n)), probe)
    results: Counter[tuple[int, ...]] = Counter()
    for draws in itertools.product(*(range(bound) for bound in probe.bounds)):
        deck = list(range(n))
        shuffle(deck, ScriptedSource(draws))
        results[tuple(deck)] += 1
    return results


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_fisher_yates_maps_draws_one_to_one_onto_all_orders(n):
    # n!/(n!) paths: each order exactly once, so a uniform randbelow gives a uniform shuffle.
    outcomes = _all_draw_paths(fisher_yates, n)
    assert len(outcomes) == math.factorial(n)
    assert set(outcomes.values()) == {1}


def test_naive_swap_shuffle_is_exactly_non_uniform():
    outcomes = _all_draw_paths(naive_swap_shuffle, 3)  # 27 paths onto 6 orders cannot be uniform
    assert sum(outcomes.values()) == 27
    assert len(set(outcomes.values())) > 1


def test_shuffle_draws_one_uniform_index_per_position():
    source = ScriptedSource([0] * 51)
    deck = shuffled_deck(source)
    assert source.bounds == list(range(52, 1, -1))
    assert sorted(deck) == list(FULL_DECK)


def test_production_default_is_the_secure_source():
    source = default_source()
    assert isinstance(source, SecureRandomSource)
    assert isinstance(source._system, secrets.SystemRandom)
    assert isinstance(SecureRandomSource(), RandomSource)
    deck = shuffled_deck()
    assert sorted(deck) == list(FULL_DECK)


def test_seeded_source_repeats_and_differs_by_seed():
    assert shuffled_deck(SeededRandomSource(42)) == shuffled_deck(SeededRandomSource(42))
    assert shuffled_deck(SeededRandomSource(42)) != shuffled_deck(SeededRandomSource(43))
    assert shuffled("abc", SeededRandomSource(1)) in [list(p) for p in itertools.permutations("abc")]


@pytest.mark.parametrize("source", [SecureRandomSource(), SeededRandomSource(5)])
def test_randbelow_stays_in_range_and_refuses_empty(source):
    assert {source.randbelow(3) for _ in range(300)} == {0, 1, 2}
    assert source.randbelow(1) == 0
    with pytest.raises(ValueError, match="n >= 1"):
        source.randbelow(0)


def test_chi_square_approximation_matches_tabulated_values():
    # Tabulated 99 % points: df 51 -> 77.386, df 100 -> 135.807; df 2601 -> about 2771.7.
    assert chi2_critical(51) == pytest.approx(77.386, rel=1e-3)
    assert chi2_critical(100) == pytest.approx(135.807, rel=1e-3)
    assert chi2_critical(2601) == pytest.approx(2771.7, rel=1e-3)
    assert chi2_survival(chi2_critical(51), 51) == pytest.approx(0.01, rel=1e-6)


SHUFFLES_IN_TEST = 6_000


def test_fair_shuffle_passes_chi_square_at_99_percent():
    counts = position_counts(fisher_yates, SeededRandomSource(2026), SHUFFLES_IN_TEST)
    assert counts.sum() == SHUFFLES_IN_TEST * 52
    assert (counts.sum(axis=0) == SHUFFLES_IN_TEST).all()
    report = fairness_report(counts, 0.99)
    assert report.passes, report.as_dict()


def test_secure_source_is_far_from_rejection():
    # Random by design: only a failure at the 1-in-a-million level fails this test.
    report = fairness_report(position_counts(fisher_yates, SecureRandomSource(), SHUFFLES_IN_TEST), 0.999999)
    assert report.passes, report.as_dict()


@pytest.mark.parametrize("broken", [naive_swap_shuffle, modulo_biased_shuffle])
def test_biased_shuffles_are_caught_by_the_same_test(broken):
    report = fairness_report(position_counts(broken, SeededRandomSource(2026), SHUFFLES_IN_TEST), 0.99)
    assert not report.passes
    assert report.table_p_value < 0.01
