"""The chat's content type follows the model: ``live | chatmessage`` becomes
``games | chatmessage`` (same row, so its permissions, the groups and users
holding them, and the admin log's entries keep pointing at it). Only when the
``live`` row exists and no ``games`` one does; a fresh database has neither
(content types are created after ``migrate``), so nothing happens there."""

from typing import Any

from django.db import migrations


def _relabel(apps: Any, schema_editor: Any, old: str, new: str) -> None:
    content_types = apps.get_model("contenttypes", "ContentType").objects.using(schema_editor.connection.alias)
    if not content_types.filter(app_label=new, model="chatmessage").exists():
        content_types.filter(app_label=old, model="chatmessage").update(app_label=new)


def live_to_games(apps: Any, schema_editor: Any) -> None:
    _relabel(apps, schema_editor, "live", "games")


def games_to_live(apps: Any, schema_editor: Any) -> None:
    _relabel(apps, schema_editor, "games", "live")


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0017_chatmessage_from_live"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(live_to_games, games_to_live)]
