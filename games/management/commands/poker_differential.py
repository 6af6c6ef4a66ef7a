"""``manage.py poker_differential --hands N --seed S``: the big run of the
differential test against pokerkit (the test suite plays a few thousand)."""

from __future__ import annotations

import json
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    help = "Play random legal hold'em hands through our engine and pokerkit; fail on any disagreement."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--hands", type=int, default=20_000)
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument(
            "--pokerkit-played",
            type=int,
            default=0,
            help="also N hands per PHH variant (NT, FT) that pokerkit plays by itself, replayed from PHH",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        from games.poker.tooling.differential import DifferentialMismatch, run_differential, run_pokerkit_replay

        started = time.perf_counter()
        try:
            report = run_differential(
                options["hands"],
                seed=options["seed"],
                progress=lambda done: self.stdout.write(f"{done} hands agree"),
            )
            replayed = run_pokerkit_replay(options["pokerkit_played"], seed=options["seed"])
        except DifferentialMismatch as exc:
            raise CommandError(str(exc)) from exc
        seconds = time.perf_counter() - started
        summary = {
            "hands": report.hands,
            "seed": options["seed"],
            "by_variant": dict(report.by_variant),
            "showdowns": report.showdowns,
            "side_pots": report.side_pots,
            "raked": report.raked,
            "known_differences": dict(report.known),
            "pokerkit_rules": report.pokerkit_rules,
            "per_pot_odd_chips": report.per_pot_odd_chips,
            "pokerkit_played": {
                "played": dict(replayed.played),
                "exact": dict(replayed.exact),
                "raises_over_table_cap": replayed.raises_over_table_cap,
            },
            "seconds": round(seconds, 1),
        }
        self.stdout.write(json.dumps(summary))
