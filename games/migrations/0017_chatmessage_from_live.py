"""The table chat moves from the ``live`` app into ``games`` (games/tables/chat.py),
keeping its table ``live_chatmessage`` and its index names.

It replaces ``live.0001_initial``: on a database that applied that migration the
table is already there, so Django records this one as applied and runs nothing;
on a fresh database it creates the table, as ``live.0001_initial`` did."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    replaces = [("live", "0001_initial")]

    dependencies = [
        ("games", "0016_deal_keys"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="ChatMessage",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("text", models.CharField(max_length=280)),
                ("sent_at", models.DateTimeField(db_index=True)),
                (
                    "player",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="chat_messages",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "table",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="chat_messages", to="games.housetable"
                    ),
                ),
            ],
            options={
                "db_table": "live_chatmessage",
                "ordering": ["-sent_at", "-id"],
                "indexes": [models.Index(fields=["table", "-sent_at"], name="chat_table_recent")],
            },
        ),
    ]
