"""``manage.py train_uth_strategy``: derive the UTH/Xtreme ``uth_table`` strategy."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from games.house.math.strategy import UTH_TABLE_PATH, train_uth_table


class Command(BaseCommand):
    help = "Derive the uth_table strategy (river, then flop, then preflop classes) from simulated rounds."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--river-rounds", type=int, default=20_000_000)
        parser.add_argument("--flop-rounds", type=int, default=40_000_000)
        parser.add_argument("--preflop-rounds", type=int, default=10_000_000)
        parser.add_argument("--seed", type=int, default=4004)
        parser.add_argument("--output", default=str(UTH_TABLE_PATH))

    def handle(self, *args: Any, **options: Any) -> None:
        table = train_uth_table(
            (options["river_rounds"], options["flop_rounds"], options["preflop_rounds"]),
            options["seed"],
            progress=lambda stage, done: self.stderr.write(f"{stage} {done:,}\r", ending=""),
        )
        with open(options["output"], "w") as handle:
            handle.write(table.to_json() + "\n")
        self.stdout.write(
            f"wrote {options['output']}: rounds {table.rounds}, seed {table.seed}, "
            f"preflop 4x classes {int(table.preflop.sum())} of {len(table.preflop)}"
        )
