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
    # The last migrations the squashes replace, not the squashes: Django points these at the
    # squashes when a database has applied all of the migrations a squash replaces, or none
    # of them; on a database part way through them it stops (NodeNotFoundError naming the
    # squash) instead of leaving that app's squash out of the plan without a word.
    dependencies = [
        ("games", "0016_deal_keys"),
        ("live", "0001_initial"),
        ("ledger", "0011_event_mac"),
        ("casino", "0005_cashier_stream_version"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(live_to_games, games_to_live)]
