"""``manage.py simulate GAME --rounds N --seed S [--strategy NAME]``: main-game RTP by simulation."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from games.house.math.simulation import simulate
from games.house.math.strategy import DEFAULT_STRATEGY, STRATEGIES


class Command(BaseCommand):
    help = (
        "Simulate main-game rounds with a documented strategy; prints RTP per ante and per total wagered "
        "with 95 % intervals, last line JSON."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("game", choices=sorted(STRATEGIES))
        parser.add_argument("--rounds", type=int, default=1_000_000)
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--strategy", help="default: " + ", ".join(f"{g}={s}" for g, s in DEFAULT_STRATEGY.items()))
        parser.add_argument("--batch", type=int, default=250_000, help="rounds per vectorised batch")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["rounds"] <= 0:
            raise CommandError("--rounds must be positive")
        try:
            result = simulate(
                options["game"],
                rounds=options["rounds"],
                seed=options["seed"],
                strategy=options["strategy"],
                batch=options["batch"],
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        lo, hi = result.ci95_per_ante
        tlo, thi = result.ci95_per_total_wagered
        self.stdout.write(f"{result.game} strategy {result.strategy}: {result.rounds:,} rounds, seed {result.seed}")
        self.stdout.write(f"RTP per ante:           {result.rtp_per_ante:.4%}  (95 % CI {lo:.4%} .. {hi:.4%})")
        self.stdout.write(
            f"RTP per total wagered:  {result.rtp_per_total_wagered:.4%}  (95 % CI {tlo:.4%} .. {thi:.4%})"
        )
        self.stdout.write(f"mean total wagered: {result.mean_total_wagered:.4f} antes; decisions {result.decisions}")
        self.stdout.write(f"{result.seconds:.1f} s")
        body = result.as_dict()
        body["ci95_per_ante"] = [lo, hi]
        self.stdout.write(json.dumps(body))
