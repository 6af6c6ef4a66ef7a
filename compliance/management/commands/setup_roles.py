"""``manage.py setup_roles``: create or update the operator and compliance groups (idempotent)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from compliance.roles import setup_roles


class Command(BaseCommand):
    help = "Create or update the least-privilege role groups (operator, compliance)."

    def handle(self, *args: Any, **options: Any) -> None:
        for name, count in setup_roles().items():
            self.stdout.write(f"group {name}: {count} permissions")
