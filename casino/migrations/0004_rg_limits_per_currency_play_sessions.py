"""Responsible gaming: limits per currency (the existing ones move under the
row's currency, nothing set is lost) and the play session's last wager."""

from __future__ import annotations

from typing import Any

from django.db import migrations, models


def limits_per_currency(apps: Any, schema_editor: Any) -> None:
    ResponsibleGaming = apps.get_model("casino", "ResponsibleGaming")
    for row in ResponsibleGaming.objects.exclude(limits={}).only("pk", "currency", "limits"):
        limits = row.limits or {}
        if limits and not all(isinstance(v, dict) and k.isupper() and len(k) == 3 for k, v in limits.items()):
            row.limits = {row.currency: limits}
            row.save(update_fields=["limits"])


def limits_in_one_currency(apps: Any, schema_editor: Any) -> None:
    ResponsibleGaming = apps.get_model("casino", "ResponsibleGaming")
    for row in ResponsibleGaming.objects.exclude(limits={}).only("pk", "currency", "limits"):
        row.limits = dict((row.limits or {}).get(row.currency) or {})
        row.save(update_fields=["limits"])


class Migration(migrations.Migration):
    dependencies = [("casino", "0003_cashier_refund_due_state")]

    operations = [
        migrations.AddField(
            model_name="responsiblegaming",
            name="last_wager_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(limits_per_currency, limits_in_one_currency),
    ]
