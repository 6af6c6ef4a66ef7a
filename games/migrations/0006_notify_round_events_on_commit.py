"""PostgreSQL: wake the websocket relays when a round-stream event commits.

A row trigger on ``ledger_event`` calls ``pg_notify('casino_round_events', '')``
for the dealer's round-stream events only (``round-<id>``, not the per-player
``round-<id>-player-<pid>`` streams): NOTIFY is transactional, so the relays
hear it when the dealer's transaction commits, and identical notifications of
one transaction fold into one. Bets and settlements' player-stream rows never
notify: a notifying commit takes PostgreSQL's notify-queue lock, and the
many-writer paths must not serialise on it (docs/websocket.md, "Delivery").
SQLite has no NOTIFY; the relay polls there.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

CHANNEL = "casino_round_events"

CREATE = f"""
CREATE OR REPLACE FUNCTION casino_notify_round_event() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('{CHANNEL}', '');
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER casino_round_event_notify
    AFTER INSERT ON ledger_event
    FOR EACH ROW
    WHEN (NEW.stream_id LIKE 'round-%' AND NEW.stream_id NOT LIKE '%-player-%')
    EXECUTE FUNCTION casino_notify_round_event();
"""
DROP = """
DROP TRIGGER IF EXISTS casino_round_event_notify ON ledger_event;
DROP FUNCTION IF EXISTS casino_notify_round_event();
"""


def forwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE, params=None)


def backwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0005_poker_tables"),
        ("ledger", "0001_squashed_0011_event_mac"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
