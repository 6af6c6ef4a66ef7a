"""``manage.py verify_ledger``: exit non-zero naming the first bad event."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ledger.services.seals import seal_key
from ledger.services.verify import verify_ledger


class Command(BaseCommand):
    help = "Walk every stream's hash chain, every seal, the money invariants and the checks the apps register."

    def handle(self, *args: Any, **options: Any) -> None:
        problems = verify_ledger(key=seal_key())
        for problem in problems[:50]:
            self.stderr.write(str(problem))
        if problems:
            first = problems[0]
            named = f"first bad event: {first.event_id}; " if first.event_id is not None else ""
            raise CommandError(f"ledger verification FAILED ({len(problems)} problems); {named}{first}")
        self.stdout.write("ledger verified: chains, seals, money invariants and the registered checks hold")
