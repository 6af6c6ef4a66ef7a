"""Event data and metadata as PostgreSQL ``json`` (the canonical text kept as
written) instead of ``jsonb`` (rebuilt into a binary form on every insert).

On PostgreSQL the columns change type in place: the table and its indexes are
rewritten under an ACCESS EXCLUSIVE lock, so on a large ledger run it in a
maintenance window (bets and reads wait for the whole rewrite). Existing rows
keep ``jsonb``'s normalised text. Elsewhere only Django's state changes: SQLite
stores JSON as text either way, and Django's SQLite ``AlterField`` would
rebuild the table (by our reading of ``_remake_table``, taking its append-only
triggers with it). Reversible while no event holds an escaped NUL, which
``ledger.canonical`` refuses."""

from django.db import migrations

import ledger.models

_TO = "ALTER TABLE ledger_event ALTER COLUMN data TYPE {t} USING data::{t}, ALTER COLUMN metadata TYPE {t} USING metadata::{t}"


def to_json(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(_TO.format(t="json"))


def to_jsonb(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(_TO.format(t="jsonb"))


class Migration(migrations.Migration):
    dependencies = [("ledger", "0005_idempotency_key_without_pattern_index")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(to_json, to_jsonb)],
            state_operations=[
                migrations.AlterField(model_name="event", name="data", field=ledger.models.VerbatimJSONField()),
                migrations.AlterField(
                    model_name="event", name="metadata", field=ledger.models.VerbatimJSONField(default=dict)
                ),
            ],
        )
    ]
