"""Which connection runs what: the application on ``default`` (``DATABASE_URL``,
the runtime role in production), migrations on ``owner`` (``DATABASE_OWNER_URL``,
the role that owns the tables; the same URL when unset).

``manage.py migrate`` (``casino/management/commands/migrate.py``) migrates the
owner's alias unless told another, and while it runs ``MigrationRouter`` sends
every ORM query there as well: a data migration that queries through the ORM
without ``.using(...)`` (games 0004) then runs as the owner, inside the
migration's transaction, rather than as the runtime role on a second
connection that cannot see the tables the migration has just created.

Imported by the settings: nothing here may import Django's models.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

OWNER_ALIAS = "owner"

_migrating: ContextVar[str | None] = ContextVar("casino_migrating_alias", default=None)


@contextmanager
def migrating(alias: str) -> Iterator[None]:
    """Route the ORM's reads and writes to ``alias`` until the block ends."""
    token = _migrating.set(alias)
    try:
        yield
    finally:
        _migrating.reset(token)


class MigrationRouter:
    """The alias being migrated while ``migrate`` runs; otherwise no opinion
    (Django then uses ``default``)."""

    def db_for_read(self, model: Any, **hints: Any) -> str | None:
        return _migrating.get()

    def db_for_write(self, model: Any, **hints: Any) -> str | None:
        return _migrating.get()
