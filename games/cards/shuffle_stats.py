"""Statistical evidence that a shuffle is fair: card-by-position frequencies and chi-square tests.

After N shuffles of the 52-card deck, a fair shuffle puts each card in each
position N/52 times on average. Two tests on the 52 x 52 table of counts:

- the whole table: sum of (observed - expected)^2 / expected over all 2,704
  cells, against chi-square with (52 - 1)^2 = 2,601 degrees of freedom (rows
  and columns both sum to N);
- each card and each position on its own (104 tests of 51 degrees of freedom),
  with a Bonferroni correction so the family of tests holds the same level.

Critical values and p-values use the Wilson-Hilferty normal approximation of
chi-square (accurate to well under 1 % at these degrees of freedom) and the
standard library's ``NormalDist``, so no statistics package is needed.

Also here: the two classic broken shuffles the tests must catch (the naive
"swap with any index" shuffle and a modulo-biased draw), and a counting
helper that works for any shuffle function.
"""

from __future__ import annotations

import math
from collections.abc import Callable, MutableSequence, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
import numpy.typing as npt

from .cards import Card
from .shuffle import RandomSource, fisher_yates

DECK_SIZE = 52
Shuffle = Callable[[MutableSequence[int], RandomSource], None]


def chi2_critical(df: int, level: float = 0.99) -> float:
    """The chi-square value exceeded with probability ``1 - level`` (Wilson-Hilferty)."""
    z = NormalDist().inv_cdf(level)
    h = 2.0 / (9.0 * df)
    return float(df * (1.0 - h + z * math.sqrt(h)) ** 3)


def chi2_survival(statistic: float, df: int) -> float:
    """P(chi-square with ``df`` degrees of freedom >= statistic) (Wilson-Hilferty)."""
    if statistic <= 0:
        return 1.0
    h = 2.0 / (9.0 * df)
    z = ((statistic / df) ** (1.0 / 3.0) - (1.0 - h)) / math.sqrt(h)
    return 1.0 - NormalDist().cdf(z)


def position_counts(shuffle: Shuffle, rng: RandomSource, shuffles: int) -> npt.NDArray[np.int64]:
    """counts[card, position] over ``shuffles`` shuffles of the ordered deck 0..51 by ``shuffle``."""
    orders = np.empty((shuffles, DECK_SIZE), dtype=np.int64)
    deck = list(range(DECK_SIZE))
    for row in range(shuffles):
        deck.sort()
        shuffle(deck, rng)
        orders[row] = deck
    cells = orders * DECK_SIZE + np.arange(DECK_SIZE)  # card * 52 + position
    return np.bincount(cells.ravel(), minlength=DECK_SIZE * DECK_SIZE).reshape(DECK_SIZE, DECK_SIZE)


@dataclass(frozen=True)
class FairnessReport:
    shuffles: int
    level: float
    table_statistic: float
    table_df: int
    table_critical: float
    table_p_value: float
    worst_line_statistic: float
    worst_line: str
    line_df: int
    line_critical: float
    lines_failed: int

    @property
    def table_passes(self) -> bool:
        return self.table_statistic <= self.table_critical

    @property
    def lines_pass(self) -> bool:
        return self.lines_failed == 0

    @property
    def passes(self) -> bool:
        return self.table_passes and self.lines_pass

    def as_dict(self) -> dict[str, Any]:
        return {
            "shuffles": self.shuffles,
            "level": self.level,
            "table_chi2": round(self.table_statistic, 2),
            "table_df": self.table_df,
            "table_critical": round(self.table_critical, 2),
            "table_p_value": round(self.table_p_value, 6),
            "line_df": self.line_df,
            "line_critical_bonferroni": round(self.line_critical, 2),
            "worst_line": self.worst_line,
            "worst_line_chi2": round(self.worst_line_statistic, 2),
            "lines_failed": self.lines_failed,
            "passes": self.passes,
        }


def fairness_report(counts: npt.NDArray[np.int64], level: float = 0.99) -> FairnessReport:
    """Chi-square tests of a card x position count table at ``level`` (see the module docstring)."""
    shuffles = int(counts[0].sum())
    expected = shuffles / DECK_SIZE
    contributions = (counts - expected) ** 2 / expected
    table_statistic = float(contributions.sum())
    table_df = (DECK_SIZE - 1) ** 2
    line_df = DECK_SIZE - 1
    lines = 2 * DECK_SIZE
    line_level = 1.0 - (1.0 - level) / lines  # Bonferroni: the family of 104 tests at ``level``
    line_critical = chi2_critical(line_df, line_level)
    by_card = contributions.sum(axis=1)
    by_position = contributions.sum(axis=0)
    worst_card = int(np.argmax(by_card))
    worst_position = int(np.argmax(by_position))
    if by_card[worst_card] >= by_position[worst_position]:
        worst_line, worst = f"card {Card.from_index(worst_card)}", float(by_card[worst_card])
    else:
        worst_line, worst = f"position {worst_position}", float(by_position[worst_position])
    return FairnessReport(
        shuffles=shuffles,
        level=level,
        table_statistic=table_statistic,
        table_df=table_df,
        table_critical=chi2_critical(table_df, level),
        table_p_value=chi2_survival(table_statistic, table_df),
        worst_line_statistic=worst,
        worst_line=worst_line,
        line_df=line_df,
        line_critical=line_critical,
        lines_failed=int((by_card > line_critical).sum() + (by_position > line_critical).sum()),
    )


# --- deliberately broken shuffles (for showing that the test has teeth) -----------------------


def naive_swap_shuffle(items: MutableSequence[Any], rng: RandomSource) -> None:
    """BROKEN on purpose: swap each position with any position (n^n paths onto n! orders)."""
    n = len(items)
    for i in range(n):
        j = rng.randbelow(n)
        items[i], items[j] = items[j], items[i]


def modulo_biased_shuffle(items: MutableSequence[Any], rng: RandomSource) -> None:
    """BROKEN on purpose: Fisher-Yates with ``random byte % (i + 1)`` draws (modulo bias)."""
    for i in range(len(items) - 1, 0, -1):
        j = rng.randbelow(256) % (i + 1)
        items[i], items[j] = items[j], items[i]


SHUFFLES: dict[str, Shuffle] = {
    "fisher_yates": fisher_yates,
    "naive_swap": naive_swap_shuffle,
    "modulo_biased": modulo_biased_shuffle,
}


def deck_order_counts(orders: Sequence[Sequence[int]]) -> npt.NDArray[np.int64]:
    """counts[card, position] from already-shuffled decks (e.g. decks dealt by live tables)."""
    array = np.asarray(orders, dtype=np.int64)
    cells = array * DECK_SIZE + np.arange(DECK_SIZE)
    return np.bincount(cells.ravel(), minlength=DECK_SIZE * DECK_SIZE).reshape(DECK_SIZE, DECK_SIZE)
