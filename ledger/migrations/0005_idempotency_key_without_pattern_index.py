"""Drop the ``varchar_pattern_ops`` index Django adds beside a text primary key
on PostgreSQL (``ledger_idempotency_key_…_like``): keys are only ever looked up
by equality, which the primary key serves, and every bet inserts a key, so the
extra index was one more B-tree insert per bet for no reader."""

from django.db import migrations


def drop(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'ledger_idempotency' AND indexname LIKE %s",
            ["%\\_like"],
        )
        names = [row[0] for row in cursor.fetchall()]
    for name in names:
        schema_editor.execute(f'DROP INDEX IF EXISTS "{name}"')


def restore(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "CREATE INDEX IF NOT EXISTS ledger_idempotency_key_like ON ledger_idempotency (key varchar_pattern_ops)"
        )


class Migration(migrations.Migration):
    dependencies = [("ledger", "0004_bet_refusal_function")]
    operations = [migrations.RunPython(drop, restore)]
