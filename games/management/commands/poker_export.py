"""``manage.py poker_export HAND_ID [--output FILE]``: write a played hand as
PHH (the engine's ``write_phh``), to stdout or ``FILE``. The file replays
through ``poker_replay`` (and pokerkit) to the same final stacks; PHH carries
no rake, so ``poker_replay --rake`` with the table's rule reproduces it.

``manage.py poker_export --tournament ID --output DIR``: every finished hand of
the tournament's tables, one ``HAND_ID.phh`` file each in ``DIR``. A
tournament hand exports like a ring hand, with the blinds and antes it was
dealt at (its ``poker.hand_started`` event) and the tournament's PHH fields
(``games.poker.tournament.export``: ``event``, ``level``, ``table``,
``seat_count``, ``_tournament``, ``_chips``); it has no ``currency``: its
stacks are tournament chips, never money.

A voided hand (operator malfunction control) is refused (``poker_hand_voided``):
it has no result, every chip went back, and a PHH file of its actions would
replay to stacks that were never paid. ``--tournament`` skips voided hands and
the hand in play."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from casino.errors import DomainError
from games.poker import event_types as et
from games.poker.engine.events import HandStarted
from games.poker.engine.phh import write_phh
from games.poker.errors import HandVoided
from games.poker.models import PokerHand
from games.poker.services.tables import engine_events, load_hand
from games.poker.tournament.export import tournament_fields
from games.poker.tournament.models import Tournament


def hand_phh(hand: PokerHand) -> str:
    """The PHH text of a played (not voided) hand."""
    _, _, recorded = load_hand(hand.hand_id)
    events = engine_events(recorded)
    if hand.table.tournament_id is None:
        extra: dict[str, Any] = {"currency": hand.currency}
    else:
        started = events[0] if events else None
        if not isinstance(started, HandStarted):
            raise CommandError(f"poker_hand_incomplete: {hand.hand_id} has no poker.hand_started event")
        first = next(e.position for e in recorded if e.type in et.ENGINE_EVENT_TYPES)
        extra = tournament_fields(hand, started, first)
    try:
        return write_phh(events, extra=extra)
    except DomainError as exc:
        raise CommandError(f"{exc.code}: {exc.message}") from exc


class Command(BaseCommand):
    help = "Write a played poker hand (or a tournament's hands) as PHH (Poker Hand History) files."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "hand_id", nargs="?", default=None, help="the hand's id (its game number, e.g. NL1-20261122-134501)"
        )
        parser.add_argument("--output", "-o", default=None, help="write to this file (default: stdout)")
        parser.add_argument(
            "--tournament", type=int, default=None, help="every finished hand of this tournament, into --output DIR"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["tournament"] is not None:
            self._tournament(options["tournament"], options["hand_id"], options["output"])
            return
        if options["hand_id"] is None:
            raise CommandError("give a HAND_ID or --tournament ID")
        hand = PokerHand.objects.select_related("table", "table__tournament").filter(hand_id=options["hand_id"]).first()
        if hand is None:
            raise CommandError(f"poker_hand_not_found: no hand {options['hand_id']!r}")
        if hand.status == "voided":
            refused = HandVoided()
            raise CommandError(f"{refused.code}: {hand.hand_id}: {refused.message} Nothing to export.")
        text = hand_phh(hand)
        if options["output"]:
            Path(options["output"]).write_text(text, encoding="utf-8")
            self.stdout.write(f"wrote {options['output']}")
        else:
            self.stdout.write(text)

    def _tournament(self, tournament_id: int, hand_id: str | None, output: str | None) -> None:
        if hand_id is not None:
            raise CommandError("give a HAND_ID or --tournament ID, not both")
        if not output:
            raise CommandError("--tournament needs --output DIR (one file per hand)")
        if not Tournament.objects.filter(pk=tournament_id).exists():
            raise CommandError(f"tournament_not_found: no tournament {tournament_id}")
        hands = (
            PokerHand.objects.select_related("table", "table__tournament")
            .filter(table__tournament_id=tournament_id, status="complete")
            .order_by("started_at", "id")
        )
        directory = Path(output)
        directory.mkdir(parents=True, exist_ok=True)
        written = 0
        for hand in hands:
            (directory / f"{hand.hand_id}.phh").write_text(hand_phh(hand), encoding="utf-8")
            written += 1
        self.stdout.write(f"wrote {written} hands to {directory}")
