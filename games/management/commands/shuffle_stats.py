"""``manage.py shuffle_stats --shuffles N``: chi-square evidence that the production shuffle is fair."""

from __future__ import annotations

import json
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from games.cards.shuffle import RandomSource, SecureRandomSource, SeededRandomSource
from games.cards.shuffle_stats import SHUFFLES, fairness_report, position_counts


class Command(BaseCommand):
    help = (
        "Shuffle the deck N times and chi-square test each card's frequency in each position at the given "
        "level (default 99 %). Uses the production secure generator unless --seed is given. "
        "--shuffle naive_swap|modulo_biased runs a deliberately broken shuffle to show the test catches it. "
        "Prints JSON; exits non-zero when the test fails."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--shuffles", type=int, default=100_000)
        parser.add_argument("--shuffle", choices=sorted(SHUFFLES), default="fisher_yates")
        parser.add_argument("--seed", type=int, default=None, help="repeatable Mersenne Twister source (tests only)")
        parser.add_argument("--level", type=float, default=0.99)

    def handle(self, *args: Any, **options: Any) -> None:
        shuffles = options["shuffles"]
        if shuffles < 52 * 5:
            raise CommandError("use at least 260 shuffles (five expected per cell)")
        seed = options["seed"]
        rng: RandomSource = SecureRandomSource() if seed is None else SeededRandomSource(seed)
        started = time.perf_counter()
        counts = position_counts(SHUFFLES[options["shuffle"]], rng, shuffles)
        report = fairness_report(counts, options["level"])
        result = {
            "shuffle": options["shuffle"],
            "source": "secure" if seed is None else f"seeded:{seed}",
            **report.as_dict(),
            "seconds": round(time.perf_counter() - started, 2),
        }
        self.stdout.write(json.dumps(result))
        if not report.passes:
            raise CommandError("the shuffle failed the chi-square test")
