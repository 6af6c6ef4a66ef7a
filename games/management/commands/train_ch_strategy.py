"""``manage.py train_ch_strategy --rounds N --seed S``: derive the Casino Hold'em call table."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from games.house.math.strategy import CH_TABLE_PATH, train_ch_call_table


class Command(BaseCommand):
    help = "Derive the ch_table strategy (call when calling's simulated mean beats folding, per flop class)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--rounds", type=int, default=40_000_000)
        parser.add_argument("--seed", type=int, default=3003)
        parser.add_argument("--output", default=str(CH_TABLE_PATH))

    def handle(self, *args: Any, **options: Any) -> None:
        table = train_ch_call_table(
            options["rounds"], options["seed"], progress=lambda done: self.stderr.write(f"{done:,}\r", ending="")
        )
        with open(options["output"], "w") as handle:
            handle.write(table.to_json() + "\n")
        share = float(table.coarse.mean())
        self.stdout.write(
            f"wrote {options['output']}: {table.rounds:,} rounds, seed {table.seed}, coarse call share {share:.3f}"
        )
