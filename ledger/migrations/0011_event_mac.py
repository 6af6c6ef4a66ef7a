"""Event MACs (docs/ledger.md, "Event MACs"): ``ledger_event.mac`` (null on the
events before the ``mac`` integrity epoch of migration 0010; nothing is
rewritten), ``ledger_seal.epochs`` (the epochs a seal signs), and the integrity
epochs append-only like the events (``ledger.triggers.EPOCH_TABLES``)."""

from typing import Any

from django.db import migrations, models

from ledger import triggers


def install(apps: Any, schema_editor: Any) -> None:
    triggers.run_epoch_guards(schema_editor.connection.cursor(), schema_editor.connection.vendor, install=True)


def uninstall(apps: Any, schema_editor: Any) -> None:
    triggers.run_epoch_guards(schema_editor.connection.cursor(), schema_editor.connection.vendor, install=False)


class Migration(migrations.Migration):
    dependencies = [("ledger", "0010_integrity_epoch")]

    operations = [
        migrations.AddField(
            model_name="event", name="mac", field=models.CharField(max_length=64, null=True, blank=True)
        ),
        migrations.AddField(model_name="seal", name="epochs", field=models.TextField(null=True, blank=True)),
        migrations.RunPython(install, uninstall),
    ]
