"""``manage.py poker_export HAND_ID [--output FILE]``: write a played hand as
PHH (the engine's ``write_phh``), to stdout or ``FILE``. The file replays
through ``poker_replay`` (and pokerkit) to the same final stacks; PHH carries
no rake, so ``poker_replay --rake`` with the table's rule reproduces it.

A voided hand (operator malfunction control) is refused (``poker_hand_voided``):
it has no result, every chip went back, and a PHH file of its actions would
replay to stacks that were never paid."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from casino.errors import DomainError
from games.poker.engine.phh import write_phh
from games.poker.errors import HandVoided
from games.poker.models import PokerHand
from games.poker.services.tables import engine_events, load_hand


class Command(BaseCommand):
    help = "Write a played poker hand as a PHH (Poker Hand History) file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("hand_id", help="the hand's id (its game number, e.g. NL1-20261122-134501)")
        parser.add_argument("--output", "-o", default=None, help="write to this file (default: stdout)")

    def handle(self, *args: Any, **options: Any) -> None:
        hand = PokerHand.objects.select_related("table").filter(hand_id=options["hand_id"]).first()
        if hand is None:
            raise CommandError(f"poker_hand_not_found: no hand {options['hand_id']!r}")
        if hand.status == "voided":
            refused = HandVoided()
            raise CommandError(f"{refused.code}: {hand.hand_id}: {refused.message} Nothing to export.")
        _, _, recorded = load_hand(hand.hand_id)
        extra = {"currency": hand.currency}
        try:
            text = write_phh(engine_events(recorded), extra=extra)
        except DomainError as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from exc
        if options["output"]:
            Path(options["output"]).write_text(text, encoding="utf-8")
            self.stdout.write(f"wrote {options['output']}")
        else:
            self.stdout.write(text)
