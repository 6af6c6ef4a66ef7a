"""``manage.py seed_demo``: the embedded default's demo logins and tables."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from casino.demo import seed_demo


class Command(BaseCommand):
    help = "Create the demo operator, the demo player and the demo tables (idempotent)."

    def handle(self, *args: Any, **options: Any) -> None:
        for line in seed_demo():
            self.stdout.write(line)
