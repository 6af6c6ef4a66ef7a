"""``manage.py verify_export DIR``: the offline verifier (``tools/verify_export.py``), no database used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from compliance.exports import public_key_hex
from tools.verify_export import verify_export


class Command(BaseCommand):
    help = "Verify an audit export: manifest signature, files, hash chains and seals (no database)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory", type=Path)
        parser.add_argument(
            "--no-pin", action="store_true", help="accept any signing key (default: this installation's)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        report = verify_export(
            options["directory"],
            public_key=None if options["no_pin"] else public_key_hex(),
            seal_key=settings.CASINO_SEAL_KEY.encode() if settings.CASINO_SEAL_KEY else None,
        )
        for note in report.notes:
            self.stdout.write(f"note: {note}")
        if report.problems:
            for problem in report.problems[1:]:
                self.stderr.write(f"also: {problem}")
            raise CommandError(f"export verification failed: {report.problems[0]}")
        self.stdout.write("export verified")
