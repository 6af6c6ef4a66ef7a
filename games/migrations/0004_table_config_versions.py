"""Versioned table configuration: ``TableConfigVersion`` (immutable: the database
refuses UPDATE), the version a round opened with, and a baseline version for every
existing table (its configuration as it stands, recorded by ``system``)."""

from typing import Any

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.utils import timezone

CONFIG_FIELDS = ("name", "hand_mode", "max_seats", "limits", "pay_tables", "wheel", "progressives",
                 "betting_seconds", "warning_seconds", "decision_seconds", "deal_pause_seconds",
                 "between_rounds_seconds")  # fmt: skip
POSTGRES_IMMUTABLE = [
    """
    CREATE OR REPLACE FUNCTION games_config_version_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'games: % on % is forbidden (configuration versions are immutable)', TG_OP, TG_TABLE_NAME
            USING ERRCODE = 'restrict_violation';
    END
    $$
    """,
    "CREATE TRIGGER games_tableconfigversion_immutable BEFORE UPDATE ON games_tableconfigversion "
    "FOR EACH ROW EXECUTE FUNCTION games_config_version_immutable()",
]
POSTGRES_DROP = [
    "DROP TRIGGER IF EXISTS games_tableconfigversion_immutable ON games_tableconfigversion",
    "DROP FUNCTION IF EXISTS games_config_version_immutable()",
]
SQLITE_IMMUTABLE = [
    "CREATE TRIGGER games_tableconfigversion_immutable BEFORE UPDATE ON games_tableconfigversion "
    "BEGIN SELECT RAISE(ABORT, 'games: UPDATE on games_tableconfigversion is forbidden (immutable)'); END",
]
SQLITE_DROP = ["DROP TRIGGER IF EXISTS games_tableconfigversion_immutable"]


def _run(schema_editor: Any, statements: dict[str, list[str]]) -> None:
    with schema_editor.connection.cursor() as cursor:
        for sql in statements.get(schema_editor.connection.vendor, []):
            cursor.execute(sql)


def install(apps: Any, schema_editor: Any) -> None:
    _run(schema_editor, {"postgresql": POSTGRES_IMMUTABLE, "sqlite": SQLITE_IMMUTABLE})
    table_model = apps.get_model("games", "HouseTable")
    version_model = apps.get_model("games", "TableConfigVersion")
    for table in table_model.objects.all():
        version_model.objects.create(
            table=table, version=table.config_version, config={f: getattr(table, f) for f in CONFIG_FIELDS},
            changes={}, reason="baseline: the configuration before versioning", actor="system",
            created_at=timezone.now(),
        )  # fmt: skip


def uninstall(apps: Any, schema_editor: Any) -> None:
    _run(schema_editor, {"postgresql": POSTGRES_DROP, "sqlite": SQLITE_DROP})


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0003_playerround_undecided_index"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="houseround",
            name="config_version",
            field=models.PositiveIntegerField(
                default=0, help_text="The table's configuration version the round opened with (0: before versioning)."
            ),
        ),
        migrations.CreateModel(
            name="TableConfigVersion",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("version", models.PositiveIntegerField()),
                ("config", models.JSONField()),
                (
                    "changes",
                    models.JSONField(
                        blank=True, default=dict, help_text="field -> {from, to} against the previous version"
                    ),
                ),
                ("reason", models.CharField(blank=True, default="", max_length=200)),
                (
                    "actor",
                    models.CharField(help_text="user:<id>, or system for a baseline recorded later", max_length=64),
                ),
                (
                    "event_position",
                    models.BigIntegerField(blank=True, help_text="The operator.action event recording it.", null=True),
                ),
                ("created_at", models.DateTimeField()),
                (
                    "created_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "table",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="config_versions",
                        to="games.housetable",
                    ),
                ),
            ],
            options={
                "ordering": ["table", "-version"],
                "constraints": [models.UniqueConstraint(fields=("table", "version"), name="one_config_version")],
            },
        ),
        migrations.RunPython(install, uninstall),
    ]
