from typing import Any

from django.db import migrations, models
from django.db.models import Max


def backfill(apps: Any, schema_editor: Any) -> None:
    """The rows written before the projector: their stream's version, so the next event's expected version is right."""
    transactions = apps.get_model("casino", "CashierTransaction")
    events = apps.get_model("ledger", "Event")
    for txn in transactions.objects.only("id").iterator():
        version = events.objects.filter(stream_id=f"cashier-{txn.id}").aggregate(v=Max("version"))["v"] or 0
        transactions.objects.filter(pk=txn.pk).update(stream_version=version)


class Migration(migrations.Migration):
    dependencies = [
        ("casino", "0004_rg_limits_per_currency_play_sessions"),
        ("ledger", "0001_squashed_0011_event_mac"),
    ]

    operations = [
        migrations.AddField(
            model_name="cashiertransaction",
            name="stream_version",
            field=models.PositiveIntegerField(
                default=0, help_text="The version of its stream's last event applied (casino.projectors)."
            ),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
