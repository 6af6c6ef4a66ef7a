"""Pytest plugin (loaded with ``-p tests.services`` before Django is set up):
point the suite at real PostgreSQL and Redis.

- ``DATABASE_URL`` / ``REDIS_URL`` set: used as given.
- unset: the local services (127.0.0.1:5432, 127.0.0.1:6379) are used when they
  answer; otherwise the suite falls back to SQLite and the in-memory layer.
- ``CI=true``: no fallback. A service that does not answer, or a SQLite
  ``DATABASE_URL``, stops the run with an error naming it.

Tests marked ``postgres`` are skipped on SQLite, but only outside CI.

Under pytest-xdist (``make test`` runs ``-n 2``) each worker process gets its
own services, set here before Django reads its settings:

- PostgreSQL: the same server, a test database of the worker's own
  (pytest-django's ``test_casino_gw0``; scratch databases are named after it).
  One worker's open transactions do not hold back the other's seals, exports or
  websocket feed: the ledger's safe bound waits only on this database's
  transactions (``ledger.services.events.safe_txid_bound``, docs/ledger.md).
- Redis: worker ``gwN`` uses database number ``base + 1 + N``, where ``base`` is
  the number in ``REDIS_URL`` (``redis://127.0.0.1:6379/7``: gw0 on 8, gw1 on 9),
  so the channel layer's groups, Celery's queues and results of one worker are
  never another's. ``CELERY_BROKER_URL`` / ``CELERY_RESULT_BACKEND``, when set to
  Redis, move the same way. A number past 15 (Redis' default 16 databases) stops
  the run: pick a lower base.
- ``var/``: logs, the SQLite fallback and the filesystem broker go to
  ``var/xdist/gwN/`` (``CASINO_VAR_DIR``, so the servers and workers the tests
  start write there too); tests name files through ``settings.VAR_DIR``.

Every run (each xdist worker) gets an empty Prometheus multi-process directory,
``<its var/>/prometheus-test`` (``PROMETHEUS_MULTIPROC_DIR``, ``casino.metrics``).
"""

from __future__ import annotations

import hashlib
import os
import socket
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

# Database 1, so a developer's running system on database 0 is left alone.
LOCAL_REDIS_URL = "redis://127.0.0.1:6379/1"
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
ROOT = Path(__file__).resolve().parent.parent
# Named after this checkout (pytest-django tests in ``test_casino_<hash>``), so two
# checkouts on one host never share, or drop, each other's test databases.
CHECKOUT = hashlib.sha256(str(ROOT).encode()).hexdigest()[:8]
LOCAL_DATABASE_URL = f"postgres://postgres@127.0.0.1:5432/casino_{CHECKOUT}"
# "gw0", "gw1", ... in a pytest-xdist worker (set before this plugin is imported); None otherwise.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
REDIS_DATABASES = 16  # Redis' default ``databases``


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


def worker_index(worker: str | None = XDIST_WORKER) -> int | None:
    """0 for ``gw0``, 1 for ``gw1``...; None outside a pytest-xdist worker."""
    return int(worker.removeprefix("gw")) if worker else None


def redis_url_for_worker(url: str, index: int) -> str:
    """``url`` on database ``base + 1 + index`` (``base``: the URL's database, 0 when it names none)."""
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    number = base + 1 + index
    if number >= REDIS_DATABASES:
        raise ValueError(
            f"xdist worker gw{index} would use Redis database {number} (base {base} + 1 + {index}), "
            f"past the last one ({REDIS_DATABASES - 1}): set REDIS_URL to a lower database number"
        )
    return urlunsplit(parts._replace(path=f"/{number}"))


def _isolate_worker(index: int) -> list[str]:
    """Give this xdist worker its own Redis database and ``var/`` directory
    (module docstring); pytest-django gives it its own test database."""
    for name in ("REDIS_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND"):
        url = os.environ.get(name, "")
        if url.startswith(("redis://", "rediss://")):
            try:
                os.environ[name] = redis_url_for_worker(url, index)
            except ValueError as error:
                return [str(error)]
    base_var = Path(os.environ.get("CASINO_VAR_DIR") or ROOT / "var")
    var_dir = base_var / "xdist" / f"gw{index}"
    var_dir.mkdir(parents=True, exist_ok=True)
    os.environ["CASINO_VAR_DIR"] = str(var_dir)
    return []


def _fresh_metrics_dir() -> None:
    """Prometheus' multi-process directory of this run (``casino.metrics``):
    ``prometheus-test/`` in this process's ``var/`` (a ``make run`` beside the
    tests keeps ``var/prometheus/``), emptied, and exported before Django (and
    prometheus_client) read it, so the servers and workers the tests start
    write there too."""
    directory = Path(os.environ.get("CASINO_VAR_DIR") or ROOT / "var") / "prometheus-test"
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.db"):
        stale.unlink(missing_ok=True)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(directory)


_PROBLEMS = _choose_services()
_INDEX = worker_index()
if _INDEX is not None:
    _PROBLEMS += _isolate_worker(_INDEX)
_fresh_metrics_dir()


def pytest_configure(config: pytest.Config) -> None:
    if _PROBLEMS:
        raise pytest.UsageError("the test services are not usable: " + "; ".join(_PROBLEMS))


def pytest_report_header(config: pytest.Config) -> list[str]:
    lines = [
        f"database: {os.environ.get('DATABASE_URL') or 'SQLite (embedded default)'}",
        f"redis: {os.environ.get('REDIS_URL') or 'none (in-memory layer, filesystem broker)'}",
    ]
    if config.pluginmanager.hasplugin("xdist") and getattr(config.option, "numprocesses", None):
        lines.append(
            "xdist: each worker gwN has its own test database (test_<name>_gwN), "
            "Redis database (base + 1 + N) and var/xdist/gwN/"
        )
    return lines


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    on_postgres = (os.environ.get("DATABASE_URL") or "").startswith("postgres")
    if on_postgres or IN_CI:
        return
    skip = pytest.mark.skip(reason="needs PostgreSQL (runs in CI; set DATABASE_URL)")
    for item in items:
        if "postgres" in item.keywords:
            item.add_marker(skip)
