"""``manage.py hand_rank As Ks Qs Js Ts 2c 3d``: the value of 5 to 7 cards as JSON."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from casino.errors import DomainError
from games.cards.evaluator import evaluate


class Command(BaseCommand):
    help = "Evaluate 5, 6 or 7 cards (e.g. As Ks Qs Js Ts 2c 3d): prints category, rank (1..7462) and best five."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("cards", nargs="+", help="cards in two-character notation, e.g. As Td 9c")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            value = evaluate(" ".join(options["cards"]))
        except DomainError as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from exc
        except ValueError as exc:
            raise CommandError(f"invalid_hand: {exc}") from exc
        self.stdout.write(json.dumps(value.as_dict()))
