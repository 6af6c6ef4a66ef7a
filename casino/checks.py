"""Production settings checks, run by ``manage.py check --deploy``.

They refuse the settings that are fine for the embedded default but wrong for
real money: the SQLite database, no Redis, a debug build, the certification
switch that lets a test lab script the shoe, the demo's bots, a missing seal key. And they warn
when the application's database role could rewrite the ledger.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, Tags, Warning, register
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

from casino.db_roles import audit_role
from games.cards.vault import keyring_from_config

# Finding kinds of casino.db_roles.RoleAudit and their check ids.
ROLE_FINDING_IDS = {"elevated": "casino.W001", "owner": "casino.W002", "create": "casino.W003", "grants": "casino.W004"}


@register(Tags.security, deploy=True)
def check_production_settings(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    errors: list[Error] = []
    if settings.CASINO_ALLOW_SCRIPTED_SHOE:
        errors.append(
            Error(
                "CASINO_ALLOW_SCRIPTED_SHOE is on: outcomes can be forced.",
                hint="Only a certification test build may set it; unset it in production.",
                id="casino.E001",
            )
        )
    if settings.CASINO_DEMO_BOTS:
        errors.append(
            Error(
                "CASINO_DEMO_BOTS is on: bots register into and play the demo Sit & Go.",
                hint="The make run demo's bots (games.poker.demo_bots); unset it in production.",
                id="casino.E010",
            )
        )
    if settings.CASINO_ALLOW_SIMULATOR:
        errors.append(
            Error(
                "CASINO_ALLOW_SIMULATOR is on: manage.py simulate_faults may run against this database.",
                hint="The fault simulator is a development tool (docs/simulation.md); unset it in production.",
                id="casino.E008",
            )
        )
    if not settings.PRODUCTION:
        errors.append(
            Error(
                "CASINO_PRODUCTION is not set: the embedded default's settings are in force.",
                hint=(
                    "Set CASINO_PRODUCTION=true with DATABASE_URL, REDIS_URL, DJANGO_SECRET_KEY, CASINO_SEAL_KEY "
                    "and CASINO_EVENT_MAC_KEY."
                ),
                id="casino.E002",
            )
        )
        return errors
    if connections["default"].vendor != "postgresql":
        errors.append(Error("Production needs PostgreSQL (DATABASE_URL=postgres://...).", id="casino.E003"))
    if not settings.REDIS_URL:
        errors.append(Error("Production needs Redis for Celery and Channels (REDIS_URL).", id="casino.E004"))
    if not settings.CASINO_SEAL_KEY or len(settings.CASINO_SEAL_KEY) < 32:
        errors.append(Error("CASINO_SEAL_KEY must be set to at least 32 characters.", id="casino.E005"))
    mac_key = settings.CASINO_EVENT_MAC_KEY
    if not mac_key or len(mac_key) < 32 or mac_key == settings.CASINO_SEAL_KEY:
        errors.append(
            Error(
                "CASINO_EVENT_MAC_KEY must be set to at least 32 characters, distinct from CASINO_SEAL_KEY.",
                hint='The key of the events\' MACs (docs/ledger.md, "Event MACs"); keep it out of the database.',
                id="casino.E011",
            )
        )
    if len(settings.CASINO_EXPORT_SIGNING_KEY) != 64:
        errors.append(Error("CASINO_EXPORT_SIGNING_KEY must be an Ed25519 seed of 64 hex digits.", id="casino.E006"))
    try:
        keyring_from_config(settings.CASINO_CARD_KEY, settings.CASINO_CARD_KEYS_RETIRED)
    except ValueError as exc:
        errors.append(
            Error(
                f"CASINO_CARD_KEY / CASINO_CARD_KEYS_RETIRED: {exc}.",
                hint="Set CASINO_CARD_KEY to 64 hex digits (e.g. `openssl rand -hex 32`); docs/fairness.md.",
                id="casino.E012",
            )
        )
    if len(settings.CASINO_PSP_CALLBACK_KEY) < 32:
        errors.append(Error("CASINO_PSP_CALLBACK_KEY must be set to at least 32 characters.", id="casino.E007"))
    return errors


@register(Tags.security, deploy=True)
def check_database_role(app_configs: Any = None, **kwargs: Any) -> list[Warning]:
    """Warn when the role the application connects as (``DATABASE_URL``) could
    rewrite the ledger: a superuser, the owner of its tables, or grants that
    differ from ``setup_db_roles``' (a table a migration added since).

    It queries the database, which Django's own checks do only when asked with
    ``--database``: ``check --deploy`` is run where the production database
    answers, and this is what it must see (PostgreSQL only)."""
    if connections[DEFAULT_DB_ALIAS].vendor != "postgresql":
        return []
    try:
        audit = audit_role()
    except DatabaseError as exc:
        return [Warning(f"Could not inspect the database role: {exc}".strip(), id="casino.W005")]
    hint = (
        "Run the application as a role of its own (DATABASE_URL) that owns nothing, and run "
        "manage.py setup_db_roles as the owner (DATABASE_OWNER_URL) after every migrate (README, Production)."
    )
    return [Warning(finding.message, hint=hint, id=ROLE_FINDING_IDS[finding.kind]) for finding in audit.findings()]
