"""``manage.py verify_ledger``: exit non-zero naming the first bad event."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from casino import metrics
from ledger.services.seals import seal_key
from ledger.services.verify import verify_ledger


class Command(BaseCommand):
    help = (
        "Walk every stream's hash chain, every seal, the money invariants and the checks the apps register, and "
        "compare the read models with their rebuild from the log (unless --no-projections)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--no-projections", action="store_true", help="Skip the comparison of the read models with their rebuild."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        problems = verify_ledger(key=seal_key(), projections=not options["no_projections"])
        metrics.ledger_verified(problems=len(problems))  # casino_ledger_verify_ok, for the scrape
        for problem in problems[:50]:
            self.stderr.write(str(problem))
        if problems:
            first = problems[0]
            named = f"first bad event: {first.event_id}; " if first.event_id is not None else ""
            raise CommandError(f"ledger verification FAILED ({len(problems)} problems); {named}{first}")
        what = "" if options["no_projections"] else " and the projections equal their rebuild"
        self.stdout.write(f"ledger verified: chains, seals, money invariants and the registered checks hold{what}")
