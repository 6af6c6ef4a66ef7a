"""Record where money legs in event data and event MACs start (docs/ledger.md,
"Events before legs and MACs"). Rewrites no event: it only notes the first
event id written under the new rules, so ``verify_ledger`` knows which events
predate them. Run at deploy, with the application stopped."""

from typing import Any

from django.db import migrations, models
from django.utils import timezone

FEATURES = ("legs", "mac")


def record_epochs(apps: Any, schema_editor: Any) -> None:
    Event = apps.get_model("ledger", "Event")
    IntegrityEpoch = apps.get_model("ledger", "IntegrityEpoch")
    db = schema_editor.connection.alias
    last = Event.objects.using(db).aggregate(last=models.Max("id"))["last"] or 0
    at = timezone.now()
    for feature in FEATURES:
        IntegrityEpoch.objects.using(db).create(feature=feature, first_event_id=last + 1, recorded_at=at)


class Migration(migrations.Migration):
    dependencies = [
        ("ledger", "0009_tournament_chips_account_kind"),
    ]

    operations = [
        migrations.CreateModel(
            name="IntegrityEpoch",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("feature", models.CharField(max_length=32)),
                ("first_event_id", models.BigIntegerField()),
                ("recorded_at", models.DateTimeField()),
            ],
            options={"db_table": "ledger_integrity_epoch"},
        ),
        migrations.RunPython(record_epochs, migrations.RunPython.noop),
    ]
