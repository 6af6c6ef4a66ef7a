"""``ledger_bet_refused(claimed, held)``: raises inside the one-statement bet
(``open_hold`` outside a transaction, run in autocommit) when the key was
claimed but the hold could not be opened, so the whole statement, and with it
the idempotency claim and the event, rolls back. Only adds a function."""

from django.db import migrations

from ledger import triggers


def install(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(triggers.BET_REFUSED_FUNCTION)


def uninstall(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP FUNCTION IF EXISTS ledger_bet_refused(bigint, bigint)")


class Migration(migrations.Migration):
    dependencies = [("ledger", "0003_fillfactor_for_hot_balance_and_hold_updates")]
    operations = [migrations.RunPython(install, uninstall)]
