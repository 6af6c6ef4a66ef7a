"""``manage.py rebuild_projections [--check] [--only NAME ...]``: replay the
event log into the read models (docs/ledger.md, "Projections")."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ledger.services.projections import check_money_projections, rebuild_projections
from ledger.services.projectors import rebuild, registered_projectors

MONEY = "money"


class Command(BaseCommand):
    help = (
        "Rebuild the read models from the event log: the money projections (balances, statement lines) from the "
        "transfers, and every registered projector's table. --check compares instead, names every difference "
        "and exits non-zero if there is one."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--check", action="store_true", help="Compare the rebuild with the live rows; write nothing."
        )
        parser.add_argument(
            "--only", action="append", metavar="NAME",
            help=f"Only this projection (repeatable): {MONEY} or a projector's name.",
        )  # fmt: skip

    def handle(self, *args: Any, **options: Any) -> None:
        only: list[str] = options["only"] or []
        check: bool = options["check"]
        names = [name for name in only if name != MONEY]
        unknown = set(names) - set(registered_projectors())
        if unknown:
            known = ", ".join([MONEY, *registered_projectors()])
            raise CommandError(f"no such projection: {', '.join(sorted(unknown))} (known: {known})")
        differences: list[str] = []
        if not only or MONEY in only:
            if check:
                differences += check_money_projections()
            else:
                self.stdout.write(f"{MONEY}: {rebuild_projections()} statement lines written")
        if not only or names:
            result = rebuild(check=check, only=names or None)
            differences += [str(d) for d in result.differences]
            for name, rows in result.rows.items():
                self.stdout.write(
                    f"{name}: {rows} rows {'rebuilt' if check else 'written'} from {result.events} events"
                )
        for difference in differences:
            self.stderr.write(difference)
        if check and differences:
            raise CommandError(f"projections differ from their rebuild ({len(differences)} differences)")
        if check:
            self.stdout.write("projections equal their rebuild from the log")
        elif differences:
            self.stdout.write(f"{len(differences)} differences repaired")
