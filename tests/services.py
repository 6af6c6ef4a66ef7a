"""Pytest plugin (loaded with ``-p tests.services`` before Django is set up):
point the suite at real PostgreSQL and Redis.

- ``DATABASE_URL`` / ``REDIS_URL`` set: used as given.
- unset: the local services (127.0.0.1:5432, 127.0.0.1:6379) are used when they
  answer; otherwise the suite falls back to SQLite and the in-memory layer.
- ``CI=true``: no fallback. A service that does not answer, or a SQLite
  ``DATABASE_URL``, stops the run with an error naming it.

Tests marked ``postgres`` are skipped on SQLite, but only outside CI.
"""

from __future__ import annotations

import os
import socket
from urllib.parse import urlsplit

import pytest

LOCAL_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/casino"
# Database 1, so a developer's running system on database 0 is left alone.
LOCAL_REDIS_URL = "redis://127.0.0.1:6379/1"
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def _answers(url: str, default_port: int) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or default_port), timeout=1):
            return True
    except OSError:
        return False


def _choose_services() -> list[str]:
    problems: list[str] = []
    database_url = os.environ.get("DATABASE_URL")
    if not database_url and _answers(LOCAL_DATABASE_URL, 5432):
        os.environ["DATABASE_URL"] = database_url = LOCAL_DATABASE_URL
    if IN_CI:
        if not database_url or not database_url.startswith("postgres"):
            problems.append(f"PostgreSQL is required in CI (DATABASE_URL={database_url!r})")
        elif not _answers(database_url, 5432):
            problems.append(f"PostgreSQL does not answer at {urlsplit(database_url).netloc}")
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url and _answers(LOCAL_REDIS_URL, 6379):
        os.environ["REDIS_URL"] = redis_url = LOCAL_REDIS_URL
    if IN_CI and (not redis_url or not _answers(redis_url, 6379)):
        problems.append(f"Redis is required in CI and does not answer (REDIS_URL={redis_url!r})")
    return problems


_PROBLEMS = _choose_services()


def pytest_configure(config: pytest.Config) -> None:
    if _PROBLEMS:
        raise pytest.UsageError("CI=true and the real services are missing: " + "; ".join(_PROBLEMS))


def pytest_report_header(config: pytest.Config) -> list[str]:
    return [
        f"database: {os.environ.get('DATABASE_URL') or 'SQLite (embedded default)'}",
        f"redis: {os.environ.get('REDIS_URL') or 'none (in-memory layer, filesystem broker)'}",
    ]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    on_postgres = (os.environ.get("DATABASE_URL") or "").startswith("postgres")
    if on_postgres or IN_CI:
        return
    skip = pytest.mark.skip(reason="needs PostgreSQL (runs in CI; set DATABASE_URL)")
    for item in items:
        if "postgres" in item.keywords:
            item.add_marker(skip)
