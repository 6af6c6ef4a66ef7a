"""Settings from the environment, the two database URLs, and the production check (`check --deploy`)."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection

from casino.db_routing import OWNER_ALIAS, migrating
from casino.management.commands.migrate import Command as MigrateCommand
from casino.processes import database_url_of
from casino.settings import database_from_url, owner_database

from .conftest import RuntimeRole

ROOT = Path(__file__).resolve().parents[2]


def test_postgres_url_becomes_a_psycopg_database():
    db = database_from_url("postgres://casino:s%40cret@db.internal:6543/casino_prod?sslmode=require")
    assert db["ENGINE"] == "casino.db_backends.postgresql"
    assert (db["USER"], db["PASSWORD"], db["HOST"], db["PORT"], db["NAME"]) == (
        "casino",
        "s@cret",
        "db.internal",
        "6543",
        "casino_prod",
    )
    assert db["OPTIONS"] == {"sslmode": "require"}


def test_sqlite_url_uses_wal_and_immediate_transactions(tmp_path):
    db = database_from_url(f"sqlite:///{tmp_path}/x.sqlite3")
    assert db["ENGINE"] == "django.db.backends.sqlite3"
    assert db["NAME"] == f"{tmp_path}/x.sqlite3"
    assert db["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert "journal_mode=WAL" in db["OPTIONS"]["init_command"]


def test_unknown_database_scheme_is_refused():
    with pytest.raises(ValueError, match="not supported"):
        database_from_url("mysql://root@localhost/casino")


def _check_deploy(**extra: str) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        # CASINO_VAR_DIR stays: an xdist worker's var/ (tests/services.py) is no setting under test.
        if not key.startswith(("CASINO_", "DJANGO_", "DEBUG", "ALLOWED_HOSTS")) or key == "CASINO_VAR_DIR"
    }
    env.update(extra)
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


PRODUCTION_ENV = {
    "CASINO_PRODUCTION": "true",
    "DJANGO_SECRET_KEY": secrets.token_urlsafe(60),
    "CASINO_SEAL_KEY": secrets.token_hex(32),
    "CASINO_EVENT_MAC_KEY": secrets.token_hex(32),
    "CASINO_EXPORT_SIGNING_KEY": secrets.token_hex(32),
    "CASINO_PSP_CALLBACK_KEY": secrets.token_hex(32),
    "CASINO_CARD_KEY": secrets.token_hex(32),
    "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/casino",
    "REDIS_URL": "redis://127.0.0.1:6379/1",
    "ALLOWED_HOSTS": "casino.example.com",
}


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=dict(os.environ, **env),
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True, databases=["default", "owner"])
def test_check_deploy_is_clean_with_the_production_variables(runtime_role: RuntimeRole):
    """README, Production, on a fresh database: migrate as the owner, then
    setup_db_roles, then the application's role passes ``check --deploy``."""
    owner = connection.settings_dict
    fresh = f"{owner['NAME']}_{secrets.token_hex(4)}"
    urls = {
        "DATABASE_URL": database_url_of({**runtime_role.settings_dict(), "NAME": fresh}),
        "DATABASE_OWNER_URL": database_url_of({**owner, "NAME": fresh}),
    }
    with connection.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{fresh}"')
    try:
        as_runtime_only = _manage("migrate", "--noinput", DATABASE_URL=urls["DATABASE_URL"], DATABASE_OWNER_URL="")
        assert as_runtime_only.returncode != 0
        assert "permission denied" in as_runtime_only.stderr
        migrated = _manage("migrate", "--noinput", **urls)
        assert migrated.returncode == 0, migrated.stderr
        granted = _manage("setup_db_roles", **urls)
        assert granted.returncode == 0, granted.stderr
        assert f"runtime role {runtime_role.name} updated" in granted.stdout
        assert "  ledger_event: SELECT, INSERT\n" in granted.stdout
        result = _check_deploy(**PRODUCTION_ENV | urls)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "no issues" in result.stdout
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{fresh}" WITH (FORCE)')


@pytest.mark.postgres
@pytest.mark.django_db
def test_check_deploy_warns_when_the_application_connects_as_the_owner():
    result = _check_deploy(**PRODUCTION_ENV | {"DATABASE_URL": database_url_of(connection.settings_dict)})
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "casino.W002" in output
    assert "table ledger_event" in output


def test_the_owner_url_defaults_to_the_application_url():
    """Migrations connect as DATABASE_OWNER_URL, and as DATABASE_URL when it is unset."""
    show = "from django.db import connections; print(*(connections[a].settings_dict['USER'] for a in connections))"
    app_url, owner_url = "postgres://app@db.internal/casino", "postgres://admin@db.internal/casino"
    one = _manage("shell", "--no-imports", "-c", show, DATABASE_URL=app_url, DATABASE_OWNER_URL="")
    assert one.stdout.split() == ["app", "app"]
    both = _manage("shell", "--no-imports", "-c", show, DATABASE_URL=app_url, DATABASE_OWNER_URL=owner_url)
    assert both.stdout.split() == ["app", "admin"]


def test_the_owners_connection_is_short_lived_and_the_test_database_under_test(monkeypatch):
    monkeypatch.setenv("DB_POOL_MAX_SIZE", "8")
    db = owner_database("postgres://admin@db.internal/casino_prod")
    assert "pool" not in db["OPTIONS"]
    assert db["CONN_MAX_AGE"] == 0
    assert db["TEST"] == {"MIRROR": "default"}


def test_migrate_runs_on_the_owners_connection_and_routes_the_orm_there():
    parser = MigrateCommand().create_parser("manage.py", "migrate")
    assert parser.parse_args([]).database == OWNER_ALIAS
    assert parser.parse_args(["--database", "default"]).database == "default"
    assert ContentType.objects.all().db == "default"
    with migrating(OWNER_ALIAS):
        assert ContentType.objects.all().db == OWNER_ALIAS
    assert ContentType.objects.all().db == "default"


def test_setup_db_roles_says_it_needs_postgresql_on_sqlite(tmp_path):
    result = _manage("setup_db_roles", DATABASE_URL=f"sqlite:///{tmp_path}/casino.sqlite3", DATABASE_OWNER_URL="")
    assert result.returncode != 0
    assert "roles_need_postgresql: Database roles need PostgreSQL" in result.stderr


def test_check_deploy_refuses_the_scripted_shoe_in_production():
    result = _check_deploy(**PRODUCTION_ENV, CASINO_ALLOW_SCRIPTED_SHOE="true")
    assert result.returncode != 0
    assert "casino.E001" in result.stderr + result.stdout


def test_check_deploy_refuses_the_demo_bots_in_production():
    result = _check_deploy(**PRODUCTION_ENV, CASINO_DEMO_BOTS="1")
    assert result.returncode != 0
    assert "casino.E010" in result.stderr + result.stdout
    assert "casino.E010" not in _check_deploy(**PRODUCTION_ENV).stdout


@pytest.mark.parametrize(
    ("card_key", "retired", "why"),
    [
        ("", "", "the card key is not set"),
        ("abc", "", "64 hexadecimal digits"),
        ("zz" * 32, "", "64 hexadecimal digits"),
        (PRODUCTION_ENV["CASINO_CARD_KEY"], "12", "64 hexadecimal digits"),
        (PRODUCTION_ENV["CASINO_CARD_KEY"], PRODUCTION_ENV["CASINO_CARD_KEY"], "also listed as retired"),
    ],
    # Named, not derived from the random key: pytest-xdist's workers must collect the same test ids.
    ids=["unset", "short", "not-hex", "malformed-retired-list", "retired-is-the-current-key"],
)
def test_check_deploy_refuses_a_missing_or_malformed_card_key_in_production(card_key, retired, why):
    """Face-down cards are sealed under keys the card key wraps (docs/fairness.md):
    production must set it, as 64 hex digits; a retired key must be a key too."""
    result = _check_deploy(**PRODUCTION_ENV | {"CASINO_CARD_KEY": card_key, "CASINO_CARD_KEYS_RETIRED": retired})
    output = result.stderr + result.stdout
    assert result.returncode != 0
    assert "casino.E012" in output
    assert why in output


@pytest.mark.parametrize(
    "mac_key", ["", "short-key", "same-as-the-seal-key"], ids=["missing", "under-32-characters", "the-seal-key"]
)
def test_check_deploy_refuses_a_missing_weak_or_reused_event_mac_key(mac_key: str):
    if mac_key == "same-as-the-seal-key":
        mac_key = PRODUCTION_ENV["CASINO_SEAL_KEY"]
    result = _check_deploy(**PRODUCTION_ENV | {"CASINO_EVENT_MAC_KEY": mac_key})
    assert result.returncode != 0
    assert "casino.E011" in result.stderr + result.stdout  # clean with a good key: test_check_deploy_is_clean_...


def test_check_deploy_refuses_sqlite_and_missing_redis_in_production():
    env = dict(PRODUCTION_ENV, DATABASE_URL="sqlite:///var/prod.sqlite3", REDIS_URL="")
    result = _check_deploy(**env)
    output = result.stderr + result.stdout
    assert result.returncode != 0
    assert "casino.E003" in output
    assert "casino.E004" in output


def test_check_deploy_refuses_the_embedded_default():
    result = _check_deploy()
    assert result.returncode != 0
    assert "casino.E002" in result.stderr + result.stdout


def test_db_pool_max_size_turns_on_psycopgs_pool_without_persistent_connections(monkeypatch):
    monkeypatch.setenv("DB_POOL_MAX_SIZE", "8")
    monkeypatch.setenv("DB_CONN_MAX_AGE", "60")
    db = database_from_url("postgres://casino@db.internal/casino_prod")
    assert db["OPTIONS"]["pool"]["max_size"] == 8
    assert db["CONN_MAX_AGE"] == 0  # Django refuses persistent connections with a pool
    monkeypatch.setenv("DB_POOL_MAX_SIZE", "0")
    db = database_from_url("postgres://casino@db.internal/casino_prod")
    assert "pool" not in db["OPTIONS"]
    assert db["CONN_MAX_AGE"] == 60
