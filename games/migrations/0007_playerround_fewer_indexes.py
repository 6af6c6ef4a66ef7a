"""Player-round rows: drop the three single-column key indexes (the composite
indexes "one_player_round", "player_round_table" and "player_round_history"
lead with the same columns), and leave free space in the table's pages so the
settlement's update of every row, which changes no indexed column, is a HOT
update (no new index entries). Both cut the writes of a 10,000-player round."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def _fillfactor(value: int):  # type: ignore[no-untyped-def]
    def run(apps, schema_editor):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(f"ALTER TABLE games_playerround SET (fillfactor = {value})")

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0006_notify_round_events_on_commit"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="playerround",
            name="player",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="house_rounds",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AlterField(
            model_name="playerround",
            name="round",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="players",
                to="games.houseround",
            ),
        ),
        migrations.AlterField(
            model_name="playerround",
            name="table",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="player_rounds",
                to="games.housetable",
            ),
        ),
        migrations.RunPython(_fillfactor(70), _fillfactor(100)),
    ]
