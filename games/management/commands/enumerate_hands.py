"""``manage.py enumerate_hands --cards 5|7``: evaluate every hand and count each category."""

from __future__ import annotations

import json
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from games.cards.batch import PUBLISHED_CATEGORY_COUNTS, category_counts, enumerate_ranks, expected_hand_count


class Command(BaseCommand):
    help = (
        "Evaluate all C(52,5) or C(52,7) hands and print the count of each category as JSON "
        "(royal flushes apart from other straight flushes), checked against the published table."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cards", type=int, choices=[5, 6, 7], default=7)

    def handle(self, *args: Any, **options: Any) -> None:
        k = options["cards"]
        started = time.perf_counter()
        histogram = enumerate_ranks(k)
        seconds = time.perf_counter() - started
        counts = {category.value: count for category, count in category_counts(histogram).items()}
        total = sum(counts.values())
        published = PUBLISHED_CATEGORY_COUNTS.get(k)
        result: dict[str, Any] = {
            "cards": k,
            "counts": counts,
            "total": total,
            "expected_total": expected_hand_count(k),
            "distinct_ranks": int((histogram > 0).sum()),
            "seconds": round(seconds, 3),
        }
        if published is not None:
            result["matches_published_table"] = counts == {c.value: n for c, n in published.items()}
        self.stdout.write(json.dumps(result))
