"""Operator services for house-banked tables: create, configure (versioned), open, close.

Each function is keyword-only, runs in one transaction, locks the table row, and
records an ``operator.action`` event with the operator's identity
(``casino.audit``) in that transaction, with ``metadata.table_id`` so a
table-filtered audit export carries it.

Versioning: every configuration change writes a new immutable
``TableConfigVersion`` (the whole configuration, the changes from the previous
version, who, when, why) and bumps ``HouseTable.config_version``. A round copies
the configuration and records the version when it opens (``rounds._open_round``),
so a change never alters a past round or the round in progress: it applies from
the next round.

Only the configuration columns are written (``UPDATE ... SET`` those, under the
row lock): the dealer's projection columns (phase, phase_seq, deadline, current
round) on the same row are never overwritten from a stale admin form.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction

from casino.audit import operator_actor, record_operator_action
from casino.errors import DomainError
from games.house.models import HouseTable, TableConfigVersion
from games.house.round.state import PER_SEAT_MAX
from games.house.rules.table_config import CONFIG_FIELDS, Problem, config_changes, default_chips, validate_config
from games.house.services.rounds import TableTick, start_table, tick_of
from games.tables import pacing
from ledger.currencies import MINOR_UNITS

Operator = AbstractBaseUser | AnonymousUser
# A code goes into game numbers (``CODE-YYYYMMDD-HHMMSS``): letters and digits only.
CODE_PATTERN = re.compile(r"^[A-Za-z0-9]{1,12}$")


class InvalidTableConfig(DomainError, code="invalid_table_config"):
    """The configuration breaks a rule (each problem names its field); nothing changed."""


class InvalidTableIdentity(DomainError, code="invalid_table_identity"):
    """Code, game or currency of a new table is unusable (code taken, unknown game or currency)."""


class TableIdentityFixed(DomainError, code="table_identity_fixed", http_status=409):
    """A table's code, game and currency are fixed when it is created (its game numbers, house and pool accounts)."""


# Not configuration: fixed at creation (``create_table``).
IDENTITY_FIELDS = ("code", "game", "currency")


class ConfigChangedMeanwhile(DomainError, code="config_changed_meanwhile", http_status=409):
    """Another change was saved since the form was loaded; reload and redo it."""


class TableAlreadyOpen(DomainError, code="table_already_open", http_status=409):
    """The table is open already."""


class TableAlreadyClosed(DomainError, code="table_already_closed", http_status=409):
    """The table is closed already."""


def config_of(table: HouseTable) -> dict[str, Any]:
    """The table's current configuration (``CONFIG_FIELDS``) as plain data."""
    return {name: getattr(table, name) for name in CONFIG_FIELDS}


def _refuse_problems(problems: list[Problem], table: str) -> None:
    if problems:
        raise InvalidTableConfig(
            "; ".join(p.message for p in problems),
            table=table,
            problems=[{"field": p.field, "code": p.code, "message": p.message} for p in problems],
        )


def check_config(*, game_code: str, currency: str, config: Mapping[str, Any], table: str = "") -> None:
    """``InvalidTableConfig`` naming every problem, or nothing (see ``validate_config``)."""
    unit = 10 ** MINOR_UNITS.get(currency, 2)
    _refuse_problems(validate_config(game_code=game_code, config=config, currency_unit=unit, per_seat_max=PER_SEAT_MAX),
                     table)  # fmt: skip


def with_defaults(config: Mapping[str, Any], currency: str) -> dict[str, Any]:
    """``config`` with the settings it leaves out that have a default: the
    currency's chip set (``default_chips``), no mandatory wager, multi-play allowed."""
    defaults = {"chips": default_chips(currency), "mandatory_wagers": [], "multi_play": True}
    return {**defaults, **{name: value for name, value in config.items() if value is not None or name not in defaults}}


def _record_version(
    *,
    table: HouseTable,
    version: int,
    config: Mapping[str, Any],
    changes: Mapping[str, Any],
    operator: Operator | None,
    reason: str,
    event_position: int | None,
    now: datetime,
) -> TableConfigVersion:
    return TableConfigVersion.objects.create(
        table=table,
        version=version,
        config=dict(config),
        changes=dict(changes),
        reason=reason,
        created_by_id=operator.pk if operator is not None and operator.is_authenticated else None,
        actor=operator_actor(operator) if operator is not None else "system",
        event_position=event_position,
        created_at=now,
    )


def ensure_baseline(*, table: HouseTable, now: datetime) -> TableConfigVersion:
    """The version row of the table's current configuration, recorded by ``system``
    if the table was made outside these services (demo seed, fixtures). Exact:
    every change goes through ``configure_table``, which calls this first."""
    existing = TableConfigVersion.objects.filter(table=table, version=table.config_version).first()
    if existing is not None:
        return existing
    return _record_version(
        table=table, version=table.config_version, config=config_of(table), changes={}, operator=None,
        reason="baseline: the configuration the table was created with outside the admin", event_position=None,
        now=now,
    )  # fmt: skip


def create_table(
    *,
    operator: Operator,
    code: str,
    game_code: str,
    currency: str,
    config: Mapping[str, Any],
    reason: str = "",
    now: datetime,
) -> HouseTable:
    """Create a closed table at configuration version 1 (``table.create`` event);
    chips, mandatory wagers and multi-play left out get their defaults (``with_defaults``).

    Refuses ``invalid_table_identity`` (code not 1-12 letters/digits or taken,
    unknown currency) and ``invalid_table_config``; nothing is written then."""
    if not CODE_PATTERN.match(code):
        raise InvalidTableIdentity("a table code is 1 to 12 letters and digits", field="code", value=code)
    if currency not in MINOR_UNITS:
        raise InvalidTableIdentity(f"unknown currency {currency!r}", field="currency", value=currency)
    config = with_defaults(config, currency)
    check_config(game_code=game_code, currency=currency, config=config, table=code)
    with transaction.atomic():
        if HouseTable.objects.filter(code=code).exists():
            raise InvalidTableIdentity(f"table code {code} is taken", field="code", value=code)
        table = HouseTable.objects.create(
            code=code, game=game_code, currency=currency, is_open=False, config_version=1, **dict(config)
        )
        event = record_operator_action(
            operator=operator, action="table.create", target=f"table:{code}", reason=reason,
            details={"table_id": table.pk, "code": code, "game": game_code, "currency": currency, "version": 1,
                     "config": dict(config)},
            metadata={"table_id": table.pk},
        )  # fmt: skip
        _record_version(
            table=table, version=1, config=config, changes={}, operator=operator, reason=reason,
            event_position=event.position, now=now,
        )  # fmt: skip
    return table


def configure_table(
    *,
    table_id: int,
    operator: Operator,
    config: Mapping[str, Any],
    reason: str = "",
    expected_version: int | None = None,
    now: datetime,
) -> TableConfigVersion | None:
    """Change a table's configuration: a new version (``table.configure`` event with
    the version and the changes), in force from the next round the table opens.

    ``None`` and nothing written when nothing differs. ``expected_version``: the
    version the operator's form showed; another version saved since is refused
    (``config_changed_meanwhile``) rather than silently overwritten. Invalid
    configurations are refused (``invalid_table_config``) and change nothing, and
    so is a new code, game or currency (``table_identity_fixed``): never, so not
    while a round is open or anyone is seated either."""
    with transaction.atomic():
        table = pacing.lock_table(HouseTable, table_id)
        fixed = sorted(name for name in IDENTITY_FIELDS if name in config and config[name] != getattr(table, name))
        if fixed:
            raise TableIdentityFixed(table=table.code, fields=fixed)
        if expected_version is not None and expected_version != table.config_version:
            raise ConfigChangedMeanwhile(
                table=table.code, expected_version=expected_version, version=table.config_version
            )
        new = {name: config.get(name, getattr(table, name)) for name in CONFIG_FIELDS}
        if not config_changes(config_of(table), new):
            return None
        if not new["chips"]:  # a table row written without a chip set (fixtures) gets its currency's
            new["chips"] = default_chips(table.currency)
        check_config(game_code=table.game, currency=table.currency, config=new, table=table.code)
        changes = config_changes(config_of(table), new)
        ensure_baseline(table=table, now=now)
        version = table.config_version + 1
        HouseTable.objects.filter(pk=table.pk).update(**new, config_version=version, updated_at=now)
        event = record_operator_action(
            operator=operator, action="table.configure", target=f"table:{table.code}", reason=reason,
            details={"table_id": table.pk, "code": table.code, "version": version, "changes": changes},
            metadata={"table_id": table.pk},
        )  # fmt: skip
        return _record_version(
            table=table, version=version, config=new, changes=changes, operator=operator, reason=reason,
            event_position=event.position, now=now,
        )  # fmt: skip


def open_table(*, table_id: int, operator: Operator, now: datetime) -> TableTick:
    """Open the table (``table.open`` event) and deal its first round now; the
    caller schedules the returned tick (``games.house.services.dealer.operator_open``). A table
    whose last round is still finishing after a close simply keeps dealing.
    Refuses ``table_already_open``, and a configuration a round cannot run on."""
    with transaction.atomic():
        table = pacing.lock_table(HouseTable, table_id)
        if table.is_open:
            raise TableAlreadyOpen(table=table.code)
        # A table row written without a chip set (fixtures) takes any positive amount (docs/rounds.md).
        current = {**config_of(table), "chips": table.chips or default_chips(table.currency)}
        check_config(game_code=table.game, currency=table.currency, config=current, table=table.code)
        HouseTable.objects.filter(pk=table.pk).update(is_open=True, updated_at=now)
        record_operator_action(
            operator=operator, action="table.open", target=f"table:{table.code}",
            details={"table_id": table.pk, "code": table.code, "config_version": table.config_version,
                     "phase": table.phase},
            metadata={"table_id": table.pk},
        )  # fmt: skip
        tick = start_table(table_id=table.pk, now=now)
        return tick


def close_table(*, table_id: int, operator: Operator, now: datetime) -> TableTick:
    """Close the table (``table.close`` event): the round in progress finishes
    (the dealer keeps advancing it), then no new round opens and the table idles."""
    with transaction.atomic():
        table = pacing.lock_table(HouseTable, table_id)
        if not table.is_open:
            raise TableAlreadyClosed(table=table.code)
        HouseTable.objects.filter(pk=table.pk).update(is_open=False, updated_at=now)
        table.is_open = False
        record_operator_action(
            operator=operator, action="table.close", target=f"table:{table.code}",
            details={"table_id": table.pk, "code": table.code, "phase": table.phase,
                     "round_in_progress": table.current_round_id if table.phase not in ("idle", "", "between") else ""},
            metadata={"table_id": table.pk},
        )  # fmt: skip
        return tick_of(table)
