"""``manage.py seal``: seal the events committed since the last seal; exit
non-zero naming the first event without a valid MAC, if the seal stopped at one."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ledger.errors import SealRefused
from ledger.services.seals import seal


class Command(BaseCommand):
    help = "Record a signed Merkle root over the events committed since the last seal."

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            record = seal()
        except SealRefused as refused:
            raise CommandError(f"seal refused: {refused.message}") from refused
        if record is None:
            self.stdout.write("nothing to seal")
            return
        self.stdout.write(
            f"seal {record.id}: {record.event_count} events, txid [{record.from_txid}, {record.to_txid}), "
            f"root {record.merkle_root}"
        )
