"""The casino app's schema in one migration: migrations 0001 to 0005 squashed (issue 34).

It ``replaces`` them, so a database that has applied all five records this one as
applied and runs nothing; a fresh database gets the same tables (the columns in
the order the old migrations left them). Their backfills had rows to fill only on
the databases that ran them; 0004's (a responsible-gaming row's limits move under
its currency) is kept, elidable, because a test holds it to its rule.

Upgrading: a database must have applied casino 0005 (and the other apps' last
migrations before the squash) before it takes this code: one part way through the
old migrations is neither "all applied" nor "none applied", and Django then cannot
use this migration while the files it replaces are gone."""

from typing import Any

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def limits_per_currency(apps: Any, schema_editor: Any) -> None:
    """Limits set before they were per currency move under the row's currency (nothing set is lost)."""
    ResponsibleGaming = apps.get_model("casino", "ResponsibleGaming")
    for row in ResponsibleGaming.objects.exclude(limits={}).only("pk", "currency", "limits"):
        limits = row.limits or {}
        if limits and not all(isinstance(v, dict) and k.isupper() and len(k) == 3 for k, v in limits.items()):
            row.limits = {row.currency: limits}
            row.save(update_fields=["limits"])


class Migration(migrations.Migration):
    initial = True

    replaces = [
        ("casino", "0001_initial"),
        ("casino", "0002_responsiblegaming_cashiertransaction"),
        ("casino", "0003_cashier_refund_due_state"),
        ("casino", "0004_rg_limits_per_currency_play_sessions"),
        ("casino", "0005_cashier_stream_version"),
    ]

    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="PlayerProfile",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("hide_chat", models.BooleanField(default=False, help_text="Hide other players' chat messages.")),
                ("show_side_bets", models.BooleanField(default=True, help_text="Show the optional side-bet spots.")),
                ("sound_on", models.BooleanField(default=True, help_text="Game sound and dealer's voice.")),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "user",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="player_profile",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "verbose_name": "player profile",
            },
        ),
        migrations.CreateModel(
            name="ResponsibleGaming",
            fields=[
                (
                    "user",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.PROTECT,
                        primary_key=True,
                        related_name="responsible_gaming",
                        serialize=False,
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                ("currency", models.CharField(max_length=3)),
                ("limits", models.JSONField(blank=True, default=dict)),
                ("session_limit_minutes", models.PositiveIntegerField(blank=True, null=True)),
                ("reality_check_minutes", models.PositiveIntegerField(blank=True, null=True)),
                ("session_started_at", models.DateTimeField(blank=True, null=True)),
                ("last_reality_check_at", models.DateTimeField(blank=True, null=True)),
                (
                    "exclusion",
                    models.CharField(
                        blank=True,
                        choices=[("self_exclusion", "self-exclusion"), ("cool_off", "cool-off")],
                        max_length=20,
                    ),
                ),
                ("excluded_until", models.DateTimeField(blank=True, null=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("last_wager_at", models.DateTimeField(blank=True, null=True)),
            ],
            options={
                "verbose_name": "responsible-gaming settings",
                "verbose_name_plural": "responsible-gaming settings",
            },
        ),
        migrations.CreateModel(
            name="CashierTransaction",
            fields=[
                ("id", models.UUIDField(primary_key=True, serialize=False)),
                (
                    "kind",
                    models.CharField(choices=[("deposit", "Deposit"), ("withdrawal", "Withdrawal")], max_length=10),
                ),
                ("amount", models.BigIntegerField()),
                ("currency", models.CharField(max_length=3)),
                (
                    "state",
                    models.CharField(
                        choices=[
                            ("requested", "Requested"),
                            ("approved", "Approved"),
                            ("paid", "Paid"),
                            ("rejected", "Rejected"),
                            ("refund_due", "Refund Due"),
                            ("refunded", "Refunded"),
                        ],
                        default="requested",
                        max_length=10,
                    ),
                ),
                ("external_reference", models.CharField(max_length=100, unique=True)),
                ("hold_id", models.UUIDField(blank=True, null=True)),
                ("reason", models.CharField(blank=True, max_length=200)),
                ("decided_by", models.CharField(blank=True, max_length=100)),
                ("created_at", models.DateTimeField()),
                ("updated_at", models.DateTimeField()),
                (
                    "player",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="cashier_transactions",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "stream_version",
                    models.PositiveIntegerField(
                        default=0, help_text="The version of its stream's last event applied (casino.projectors)."
                    ),
                ),
            ],
            options={
                "permissions": [("decide_cashiertransaction", "Can approve or reject cashier transactions")],
                "indexes": [models.Index(fields=["player", "kind", "created_at"], name="cashier_player_kind_time_idx")],
                "constraints": [
                    models.CheckConstraint(condition=models.Q(("amount__gt", 0)), name="cashier_amount_positive")
                ],
            },
        ),
        migrations.RunPython(limits_per_currency, migrations.RunPython.noop, elidable=True),
    ]
