"""A runtime database role on the test database, and the default connection as it."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from psycopg import sql

from casino.db_roles import setup_runtime_role
from casino.processes import database_url_of


@dataclass(frozen=True)
class RuntimeRole:
    name: str
    password: str

    def settings_dict(self) -> dict[str, Any]:
        """A ``DATABASES`` entry: the test database, as this role."""
        return {**connections[DEFAULT_DB_ALIAS].settings_dict, "USER": self.name, "PASSWORD": self.password}

    @property
    def url(self) -> str:
        return database_url_of(self.settings_dict())


def unique_role_name(purpose: str) -> str:
    """Roles are server-wide: a name no parallel run (or other engineer) uses."""
    return f"casino_test_{purpose}_{os.getpid()}_{secrets.token_hex(4)}"


def drop_role(name: str) -> None:
    """Drop ``name`` and what it holds in the test database (grants, owned objects)."""
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [name])
        if cursor.fetchone():
            cursor.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(name)))
            cursor.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(name)))


@pytest.fixture
def runtime_role(transactional_db: Any) -> Iterator[RuntimeRole]:
    """A runtime role made by ``setup_db_roles``' service on the test database
    (committed, so other connections see it), dropped afterwards."""
    role = RuntimeRole(unique_role_name("runtime"), secrets.token_urlsafe(16))
    try:
        setup_runtime_role(role=role.name, password=role.password)
        yield role
    finally:
        drop_role(role.name)


@contextmanager
def connected_as(role: RuntimeRole) -> Iterator[BaseDatabaseWrapper]:
    """Django's default connection, in this thread, logged in as ``role``: the
    services' own SQL then runs with that role's privileges."""
    owner = connections[DEFAULT_DB_ALIAS]
    runtime = type(owner)(role.settings_dict(), alias=DEFAULT_DB_ALIAS)
    connections[DEFAULT_DB_ALIAS] = runtime
    try:
        yield runtime
    finally:
        runtime.close()
        connections[DEFAULT_DB_ALIAS] = owner
