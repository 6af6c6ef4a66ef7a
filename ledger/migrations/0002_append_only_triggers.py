"""Database-enforced append-only events, transfers and seals (ledger.triggers)."""

from django.db import migrations

from ledger import triggers


def install(apps, schema_editor):
    triggers.run(schema_editor.connection.cursor(), schema_editor.connection.vendor, install=True)


def uninstall(apps, schema_editor):
    triggers.run(schema_editor.connection.cursor(), schema_editor.connection.vendor, install=False)


class Migration(migrations.Migration):
    dependencies = [("ledger", "0001_initial")]
    operations = [migrations.RunPython(install, uninstall)]
