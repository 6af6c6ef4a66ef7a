"""``manage.py export_audit --from ... --to ... [--table T] [--player P] --format jsonl|csv --out DIR``."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from casino.errors import DomainError
from compliance.exports import ExportFilters, export_audit


def parse_moment(text: str) -> datetime:
    """An ISO 8601 date or date-time; naive values are UTC."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise CommandError(f"not an ISO 8601 date or time: {text!r}") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class Command(BaseCommand):
    help = "Export the events, ledger entries and seals of a period with a signed manifest."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--from", dest="start", required=True, help="period start (inclusive), ISO 8601")
        parser.add_argument("--to", dest="end", required=True, help="period end (exclusive), ISO 8601")
        parser.add_argument("--table", help="only events and entries of this table id")
        parser.add_argument("--player", help="only events and entries of this player (user id)")
        parser.add_argument("--format", dest="file_format", choices=["jsonl", "csv"], default="jsonl")
        parser.add_argument("--out", required=True, type=Path, help="output directory (created; must be empty)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            result = export_audit(
                start=parse_moment(options["start"]),
                end=parse_moment(options["end"]),
                filters=ExportFilters(table=options["table"], player=options["player"]),
                file_format=options["file_format"],
                out=options["out"],
            )
        except DomainError as exc:
            raise CommandError(f"{exc.code}: {exc}") from None
        counts = result.manifest["counts"]
        self.stdout.write(
            f"exported {counts['events']} events ({counts['events_in_period']} in the period), "
            f"{counts['entries']} entries, {counts['seals']} seals to {result.directory}"
        )
        self.stdout.write(f"public key: {result.manifest['signature']['public_key']}")
