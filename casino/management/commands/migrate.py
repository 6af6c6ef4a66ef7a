"""``manage.py migrate``, run as the tables' owner: Django's command with
``--database`` defaulting to the ``owner`` alias (``DATABASE_OWNER_URL``, or
``DATABASE_URL`` when unset) and the ORM routed there while it runs
(``casino.db_routing``). The runtime role cannot run DDL, so migrations never
use its connection; rerun ``setup_db_roles`` afterwards to grant it the new tables.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser
from django.core.management.commands.migrate import Command as DjangoMigrate

from casino.db_routing import OWNER_ALIAS, migrating


class Command(DjangoMigrate):
    help = DjangoMigrate.help + " Runs as the owner (DATABASE_OWNER_URL) unless --database says otherwise."

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.set_defaults(database=OWNER_ALIAS)
        # argparse has no public way to reword an inherited option's help.
        database = parser._option_string_actions["--database"]
        database.help = f'The database to migrate. Defaults to "{OWNER_ALIAS}": DATABASE_OWNER_URL, else DATABASE_URL.'

    def handle(self, *args: Any, **options: Any) -> None:
        with migrating(options["database"]):
            super().handle(*args, **options)
