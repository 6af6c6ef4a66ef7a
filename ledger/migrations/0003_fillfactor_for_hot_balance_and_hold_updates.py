"""Leave free space in the pages of the two tables whose rows are updated on
every bet and settlement (account balances, hold status), so PostgreSQL can
update them in place (HOT: no new index entries, no index to clean up).
Only a storage parameter: existing rows and data stay as they are."""

from django.db import migrations


def _set(fillfactor: int):  # type: ignore[no-untyped-def]
    def run(apps, schema_editor):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor != "postgresql":
            return
        for table in ("ledger_account", "ledger_hold"):
            schema_editor.execute(f"ALTER TABLE {table} SET (fillfactor = {fillfactor})")

    return run


class Migration(migrations.Migration):
    dependencies = [("ledger", "0002_append_only_triggers")]

    operations = [migrations.RunPython(_set(50), _set(100))]
