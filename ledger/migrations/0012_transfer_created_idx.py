"""An index on ``ledger_transfer.created_at`` for the reports and the operator's
dashboard (issue 36): they read transfers by period.

On PostgreSQL it is built ``CONCURRENTLY`` (so the migration does not block bets
on a large ledger while it builds; hence ``atomic = False``); on SQLite, plainly."""

from __future__ import annotations

from typing import Any

from django.db import migrations, models

INDEX = models.Index(fields=["created_at"], name="ledger_transfer_created_idx")


def create(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS ledger_transfer_created_idx ON ledger_transfer (created_at)"
        )
    else:
        schema_editor.add_index(apps.get_model("ledger", "Transfer"), INDEX)


def drop(apps: Any, schema_editor: Any) -> None:
    schema_editor.execute("DROP INDEX IF EXISTS ledger_transfer_created_idx")


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("ledger", "0001_squashed_0011_event_mac"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.AddIndex(model_name="transfer", index=INDEX)],
            database_operations=[migrations.RunPython(create, drop)],
        ),
    ]
