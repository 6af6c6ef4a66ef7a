"""``manage.py seal``: seal the events committed since the last seal."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from ledger.services.seals import seal


class Command(BaseCommand):
    help = "Record a signed Merkle root over the events committed since the last seal."

    def handle(self, *args: Any, **options: Any) -> None:
        record = seal()
        if record is None:
            self.stdout.write("nothing to seal")
            return
        self.stdout.write(
            f"seal {record.id}: {record.event_count} events, txid [{record.from_txid}, {record.to_txid}), "
            f"root {record.merkle_root}"
        )
