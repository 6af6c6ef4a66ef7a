"""The ledger's schema in one migration: migrations 0001 to 0011 squashed (issue 34).

It ``replaces`` them, so a database that has applied all eleven records this one
as applied and runs nothing; a fresh database gets the same schema they built.
The tables are created in their final shape (the columns in the order the old
migrations left them: ``ledger_event.mac`` and ``ledger_seal.epochs`` last), then
the SQL of the old migrations runs in its final form:

- the append-only guards and ``ledger_event.txid``'s default (0002) and the
  integrity epochs' guards (0011): ``ledger/triggers.py``, PostgreSQL and SQLite;
- PostgreSQL only: fillfactor 50 on ``ledger_account`` and ``ledger_hold`` (0003),
  the function ``ledger_bet_refused`` (0004), no ``varchar_pattern_ops`` index
  beside the idempotency key (0005); the event's ``data`` and ``metadata`` are
  ``json`` (0006: ``VerbatimJSONField`` makes that column type from the start);
- the integrity epochs ``legs`` and ``mac`` recorded at the next event (0010): a
  row each on every database, at event 1 on a fresh one.

Upgrading: a database must have applied ledger 0011 (and the other apps' last
migrations before the squash) before it takes this code: one part way through the
old migrations is neither "all applied" nor "none applied", and Django then cannot
use this migration while the files it replaces are gone."""

from typing import Any

import django.db.models.deletion
from django.db import migrations, models
from django.utils import timezone

import ledger.models
from ledger import triggers

FILLFACTOR_TABLES = ("ledger_account", "ledger_hold")
FEATURES = ("legs", "mac")


def install(apps: Any, schema_editor: Any) -> None:
    vendor = schema_editor.connection.vendor
    with schema_editor.connection.cursor() as cursor:
        triggers.run(cursor, vendor, install=True)
        triggers.run_epoch_guards(cursor, vendor, install=True)
    if vendor != "postgresql":
        return
    for table in FILLFACTOR_TABLES:
        schema_editor.execute(f"ALTER TABLE {table} SET (fillfactor = 50)")
    schema_editor.execute(triggers.BET_REFUSED_FUNCTION)
    # Keys are only looked up by equality (the primary key serves that), so the
    # ``varchar_pattern_ops`` index Django adds beside a text primary key goes.
    # CreateModel queues its indexes until the migration ends: make them now.
    while schema_editor.deferred_sql:
        schema_editor.execute(schema_editor.deferred_sql.pop(0))
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'ledger_idempotency' AND indexname LIKE %s",
            ["%\\_like"],
        )
        names = [row[0] for row in cursor.fetchall()]
    for name in names:
        schema_editor.execute(f'DROP INDEX IF EXISTS "{name}"')


def uninstall(apps: Any, schema_editor: Any) -> None:
    vendor = schema_editor.connection.vendor
    with schema_editor.connection.cursor() as cursor:
        triggers.run_epoch_guards(cursor, vendor, install=False)
        triggers.run(cursor, vendor, install=False)
    if vendor == "postgresql":
        schema_editor.execute("DROP FUNCTION IF EXISTS ledger_bet_refused(bigint, bigint)")


def record_epochs(apps: Any, schema_editor: Any) -> None:
    """Where money legs in event data and event MACs start (docs/ledger.md, "Events before legs and MACs")."""
    Event = apps.get_model("ledger", "Event")
    IntegrityEpoch = apps.get_model("ledger", "IntegrityEpoch")
    db = schema_editor.connection.alias
    last = Event.objects.using(db).aggregate(last=models.Max("id"))["last"] or 0
    at = timezone.now()
    for feature in FEATURES:
        IntegrityEpoch.objects.using(db).create(feature=feature, first_event_id=last + 1, recorded_at=at)


class Migration(migrations.Migration):
    initial = True

    replaces = [
        ("ledger", "0001_initial"),
        ("ledger", "0002_append_only_triggers"),
        ("ledger", "0003_fillfactor_for_hot_balance_and_hold_updates"),
        ("ledger", "0004_bet_refusal_function"),
        ("ledger", "0005_idempotency_key_without_pattern_index"),
        ("ledger", "0006_event_json_stored_verbatim"),
        ("ledger", "0007_suspense_account_kind"),
        ("ledger", "0008_tournament_pool_account_kind"),
        ("ledger", "0009_tournament_chips_account_kind"),
        ("ledger", "0010_integrity_epoch"),
        ("ledger", "0011_event_mac"),
    ]

    dependencies = []

    operations = [
        migrations.CreateModel(
            name="IdempotencyRecord",
            fields=[
                ("key", models.CharField(max_length=200, primary_key=True, serialize=False)),
                ("command", models.CharField(max_length=50)),
                ("request_hash", models.CharField(max_length=64)),
                ("result", models.JSONField(blank=True, null=True)),
                ("created_at", models.DateTimeField()),
            ],
            options={
                "db_table": "ledger_idempotency",
            },
        ),
        migrations.CreateModel(
            name="Account",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("key", models.CharField(max_length=200, unique=True)),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("wallet", "player wallet"),
                            ("held", "player stakes in play"),
                            ("house", "house (per table or game)"),
                            ("pool", "progressive pool"),
                            ("poker_seat", "poker seat (chips on the table)"),
                            ("poker_pot", "poker pot"),
                            ("rake", "rake"),
                            ("cashier", "cashier (external money)"),
                            ("suspense", "cashier suspense (received, owed back to the provider)"),
                            ("tournament_pool", "poker tournament prize pool"),
                            ("tournament_chips", "poker tournament chip bank (chips in play, negative)"),
                        ],
                        max_length=20,
                    ),
                ),
                ("owner", models.CharField(max_length=100)),
                ("currency", models.CharField(max_length=3)),
                ("may_go_negative", models.BooleanField(default=False)),
                ("balance", models.BigIntegerField(default=0)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "db_table": "ledger_account",
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("may_go_negative", True), ("balance__gte", 0), _connector="OR"),
                        name="ledger_account_no_overdraft",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="Event",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("txid", models.BigIntegerField()),
                ("stream_id", models.CharField(max_length=200)),
                ("version", models.PositiveIntegerField()),
                ("type", models.CharField(max_length=100)),
                ("schema_version", models.PositiveSmallIntegerField(default=1)),
                ("data", ledger.models.VerbatimJSONField()),
                ("metadata", ledger.models.VerbatimJSONField(default=dict)),
                ("recorded_at", models.DateTimeField()),
                ("prev_hash", models.CharField(max_length=64)),
                ("hash", models.CharField(max_length=64)),
                ("mac", models.CharField(blank=True, max_length=64, null=True)),
            ],
            options={
                "db_table": "ledger_event",
                "indexes": [models.Index(fields=["txid", "id"], name="ledger_event_global_idx")],
                "constraints": [
                    models.UniqueConstraint(fields=("stream_id", "version"), name="ledger_event_stream_version_uniq"),
                    models.CheckConstraint(
                        condition=models.Q(("version__gte", 1)), name="ledger_event_version_positive"
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="Seal",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("from_txid", models.BigIntegerField()),
                ("to_txid", models.BigIntegerField()),
                ("event_count", models.BigIntegerField()),
                ("last_event_id", models.BigIntegerField(blank=True, null=True)),
                ("merkle_root", models.CharField(max_length=64)),
                ("prev_root", models.CharField(max_length=64)),
                ("algorithm", models.CharField(default="HMAC-SHA256", max_length=20)),
                ("signature", models.CharField(max_length=128)),
                ("created_at", models.DateTimeField()),
                ("epochs", models.TextField(blank=True, null=True)),
            ],
            options={
                "db_table": "ledger_seal",
                "constraints": [models.UniqueConstraint(fields=("from_txid",), name="ledger_seal_from_uniq")],
            },
        ),
        migrations.CreateModel(
            name="Transfer",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("amount", models.BigIntegerField()),
                ("currency", models.CharField(max_length=3)),
                ("kind", models.CharField(max_length=16)),
                ("hold_id", models.UUIDField(blank=True, null=True)),
                ("created_at", models.DateTimeField()),
                (
                    "credit_account",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="ledger.account",
                    ),
                ),
                (
                    "debit_account",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="ledger.account",
                    ),
                ),
                (
                    "event",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="ledger.event",
                    ),
                ),
            ],
            options={
                "db_table": "ledger_transfer",
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("amount__gt", 0)), name="ledger_transfer_amount_positive"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("debit_account", models.F("credit_account")), _negated=True),
                        name="ledger_transfer_two_accounts",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="StatementLine",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("amount", models.BigIntegerField()),
                ("balance_after", models.BigIntegerField()),
                ("created_at", models.DateTimeField()),
                (
                    "account",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="ledger.account",
                    ),
                ),
                (
                    "event",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="ledger.event",
                    ),
                ),
                (
                    "transfer",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="ledger.transfer",
                    ),
                ),
            ],
            options={
                "db_table": "ledger_statement_line",
                "indexes": [models.Index(fields=["account", "id"], name="ledger_statement_account_idx")],
            },
        ),
        migrations.CreateModel(
            name="Hold",
            fields=[
                ("id", models.UUIDField(primary_key=True, serialize=False)),
                ("amount", models.BigIntegerField()),
                ("currency", models.CharField(max_length=3)),
                (
                    "status",
                    models.CharField(
                        choices=[("pending", "Pending"), ("posted", "Posted"), ("voided", "Voided")],
                        default="pending",
                        max_length=8,
                    ),
                ),
                ("posted_amount", models.BigIntegerField(blank=True, null=True)),
                (
                    "destination",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="ledger.account",
                    ),
                ),
                (
                    "escrow",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="ledger.account",
                    ),
                ),
                (
                    "opened_event",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="ledger.event",
                    ),
                ),
                (
                    "resolved_event",
                    models.ForeignKey(
                        blank=True,
                        db_constraint=False,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="ledger.event",
                    ),
                ),
                (
                    "source",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="ledger.account",
                    ),
                ),
            ],
            options={
                "db_table": "ledger_hold",
                "constraints": [
                    models.CheckConstraint(condition=models.Q(("amount__gt", 0)), name="ledger_hold_amount_positive")
                ],
            },
        ),
        migrations.CreateModel(
            name="IntegrityEpoch",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("feature", models.CharField(max_length=32)),
                ("first_event_id", models.BigIntegerField()),
                ("recorded_at", models.DateTimeField()),
            ],
            options={
                "db_table": "ledger_integrity_epoch",
            },
        ),
        migrations.RunPython(install, uninstall),
        migrations.RunPython(record_epochs, migrations.RunPython.noop),
    ]
