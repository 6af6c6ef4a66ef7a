"""``manage.py setup_db_roles``: create or update the runtime database role
(``DATABASE_URL``'s user) with exactly its grants, as the owner
(``DATABASE_OWNER_URL``). Idempotent; rerun after every ``migrate``."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import DEFAULT_DB_ALIAS, connections

from casino.db_roles import setup_runtime_role
from casino.errors import DomainError


class Command(BaseCommand):
    help = (
        "Create or update the runtime database role (the user of DATABASE_URL): it owns nothing, may only append "
        "to the ledger's history and holds exactly the runtime grants. Runs as DATABASE_OWNER_URL; rerun after "
        "every migrate."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        runtime = connections[DEFAULT_DB_ALIAS].settings_dict
        try:
            grants = setup_runtime_role(role=runtime["USER"], password=runtime["PASSWORD"] or None)
        except DomainError as exc:
            for finding in exc.details.get("findings", []):
                self.stderr.write(finding)
            raise CommandError(f"{exc.code}: {exc}") from None
        verb = "created" if grants.created else "updated"
        self.stdout.write(
            f"runtime role {grants.role} {verb}: grants on {len(grants.tables)} tables, "
            f"USAGE on {grants.sequences} sequences, idle_in_transaction_session_timeout "
            f"{grants.idle_in_transaction_ms} ms"
        )
        for table, access in grants.tables.items():
            self.stdout.write(f"  {table}: {access}")
