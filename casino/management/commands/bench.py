"""``manage.py bench NAME`` runs one benchmark; ``bench all`` runs every one."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from casino.bench import machine, registry, render_table


class Command(BaseCommand):
    help = "Run a benchmark (or 'all'): a human table, then one JSON line of figures."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", nargs="?", default="list", help="benchmark name, 'all' or 'list'")
        parser.add_argument(
            "--option",
            "-o",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="benchmark option (integers are converted), repeatable",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        benchmarks = registry()
        name = options["name"]
        if name == "list":
            for bench_name, func in benchmarks.items():
                doc = (func.__doc__ or "").strip().splitlines()
                self.stdout.write(f"{bench_name:14} {doc[0] if doc else ''}")
            return
        names = list(benchmarks) if name == "all" else [name]
        unknown = [n for n in names if n not in benchmarks]
        if unknown:
            raise CommandError(f"unknown benchmark {unknown[0]!r}; known: {', '.join(benchmarks)}")
        kwargs = dict(_parse_option(item) for item in options["option"])
        combined: dict[str, Any] = {}
        for bench_name in names:
            result = benchmarks[bench_name](out=self.stdout, **kwargs)
            render_table(result, self.stdout)
            self.stdout.write("")
            combined[bench_name] = result.figures
        figures = combined[names[0]] if len(names) == 1 else combined
        self.stdout.write(json.dumps({**figures, "machine": machine()}))


def _parse_option(item: str) -> tuple[str, Any]:
    key, sep, value = item.partition("=")
    if not sep:
        raise CommandError(f"option {item!r} is not KEY=VALUE")
    try:
        return key, int(value)
    except ValueError:
        try:
            return key, float(value)
        except ValueError:
            return key, value
