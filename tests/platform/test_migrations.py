"""The migrations (issue 34: squashed, the chat moved from the ``live`` app into ``games``).

- A freshly migrated database is what the models say: the migrations' state has
  nothing for ``makemigrations`` to add, and the test database (built by running
  the migrations) holds every managed model's table, columns, indexes and
  constraints.
- An existing database upgrades: the squashes ``replace`` every migration that
  was ever released, so a database that applied them all runs only what came
  after (the chat's content type), and one part way through them is refused
  rather than left half-built.
- The chat's content type and its permissions follow the model.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib import import_module
from typing import Any
from unittest import mock

import pytest
from django.apps import apps
from django.contrib.auth.models import Group, Permission, User
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.autodetector import MigrationAutodetector
from django.db.migrations.exceptions import NodeNotFoundError
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder
from django.db.migrations.state import ProjectState

from games.tables.chat import ChatMessage

PROJECT_APPS = ("casino", "ledger", "games", "compliance")

#: Every migration of the project's apps released before the squash (commit 38b9de1), by app.
RELEASED = {
    "casino": [
        "0001_initial",
        "0002_responsiblegaming_cashiertransaction",
        "0003_cashier_refund_due_state",
        "0004_rg_limits_per_currency_play_sessions",
        "0005_cashier_stream_version",
    ],
    "compliance": ["0001_initial"],
    "games": [
        "0001_initial",
        "0002_rounds",
        "0003_playerround_undecided_index",
        "0004_table_config_versions",
        "0005_poker_tables",
        "0006_notify_round_events_on_commit",
        "0007_playerround_fewer_indexes",
        "0008_game_choices_from_registry",
        "0009_pokerhandplayer_seat",
        "0010_presence_and_disconnection_bank",
        "0011_poker_table_raise_cap",
        "0012_poker_tournaments",
        "0013_tournament_play",
        "0014_poker_seat_hand",
        "0015_tableseat_joined_at_from_event",
        "0016_deal_keys",
    ],
    "ledger": [
        "0001_initial",
        "0002_append_only_triggers",
        "0003_fillfactor_for_hot_balance_and_hold_updates",
        "0004_bet_refusal_function",
        "0005_idempotency_key_without_pattern_index",
        "0006_event_json_stored_verbatim",
        "0007_suspense_account_kind",
        "0008_tournament_pool_account_kind",
        "0009_tournament_chips_account_kind",
        "0010_integrity_epoch",
        "0011_event_mac",
    ],
    "live": ["0001_initial"],
}
RELEASED_KEYS = [(app, name) for app, names in RELEASED.items() for name in names]

#: The squashes and what each replaces.
SQUASHES = {
    ("casino", "0001_squashed_0005_cashier_stream_version"): [("casino", n) for n in RELEASED["casino"]],
    ("ledger", "0001_squashed_0011_event_mac"): [("ledger", n) for n in RELEASED["ledger"]],
    ("games", "0001_squashed_0016_deal_keys"): [("games", n) for n in RELEASED["games"]] + [("live", "0001_initial")],
}


def project_migrations(loader: MigrationLoader) -> dict[tuple[str, str], Any]:
    return {key: migration for key, migration in loader.disk_migrations.items() if key[0] in PROJECT_APPS}


# --- a fresh database is what the models say ---------------------------------------------------


def test_the_migrations_state_is_the_models():
    """``makemigrations --check``: nothing to add for any app."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    changes = MigrationAutodetector(loader.project_state(), ProjectState.from_apps(apps)).changes(graph=loader.graph)
    assert changes == {}


@pytest.mark.django_db
def test_the_migrated_database_holds_every_models_table_columns_indexes_and_constraints():
    tables = set(connection.introspection.table_names())
    missing: list[str] = []
    with connection.cursor() as cursor:
        for model in apps.get_models():
            meta = model._meta
            if meta.app_label not in PROJECT_APPS or not meta.managed or meta.proxy:
                continue
            if meta.db_table not in tables:
                missing.append(meta.db_table)
                continue
            columns = {c.name for c in connection.introspection.get_table_description(cursor, meta.db_table)}
            assert columns == {f.column for f in meta.local_concrete_fields}, meta.db_table
            names = set(connection.introspection.get_constraints(cursor, meta.db_table))
            expected = {index.name for index in meta.indexes} | {c.name for c in meta.constraints}
            assert expected <= names, (meta.db_table, expected - names)
    assert missing == []


def test_the_chat_keeps_the_live_apps_table_and_index():
    assert ChatMessage._meta.app_label == "games"
    assert ChatMessage._meta.db_table == "live_chatmessage"
    assert [index.name for index in ChatMessage._meta.indexes] == ["chat_table_recent"]


# --- an existing database upgrades -------------------------------------------------------------


def test_every_released_migration_is_replaced_by_a_squash_on_disk():
    loader = MigrationLoader(None, ignore_no_migrations=True)
    on_disk = project_migrations(loader)
    replaces = {key: list(migration.replaces) for key, migration in on_disk.items() if migration.replaces}
    assert replaces == SQUASHES
    replaced = {key for keys in replaces.values() for key in keys}
    # Released and not replaced: only what is still on disk as it was (compliance 0001).
    assert set(RELEASED_KEYS) - replaced == {("compliance", "0001_initial")}
    assert ("compliance", "0001_initial") in on_disk
    # The replaced files are gone: the squashes are the only way to those schemas.
    assert not replaced & set(loader.disk_migrations)


@pytest.fixture
def applied_before_the_squash() -> Iterator[set[tuple[str, str]]]:
    """A database as the released code left it: every migration applied (Django's own
    and the third-party apps' as on disk, the project's as released); the set may be
    changed by the test before planning."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    applied = {key for key in loader.disk_migrations if key[0] not in PROJECT_APPS} | set(RELEASED_KEYS)

    def recorded(self: MigrationRecorder) -> dict[tuple[str, str], None]:
        return dict.fromkeys(applied)

    with mock.patch.object(MigrationRecorder, "applied_migrations", recorded):
        yield applied


def plan_for_database() -> list[tuple[str, str]]:
    """What ``migrate`` would run on the database the recorder describes."""
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    assert all(not backwards for _, backwards in plan)
    return [(migration.app_label, migration.name) for migration, _ in plan]


def test_a_database_at_the_last_released_migrations_runs_only_the_migrations_written_since(applied_before_the_squash):
    # The chat's content type (issue 34), the pending session limit's columns (issue 35) and
    # the compliance permissions' plural name (options only: no table changes), the
    # transfers' period index (issue 36), the players' settings and the tables' chips, mandatory
    # wagers and multi-play (issue 37).
    assert sorted(plan_for_database()) == [
        ("casino", "0006_rg_session_limit_pending"), ("casino", "0007_player_settings"),
        ("compliance", "0002_compliance_access_plural"),
        ("games", "0002_chatmessage_content_type"), ("games", "0003_table_chips_mandatory_multi_play"),
        ("ledger", "0012_transfer_created_idx"),
    ]  # fmt: skip
    loader = MigrationLoader(connection)
    assert set(SQUASHES) <= set(loader.applied_migrations)


@pytest.mark.parametrize(
    "unapplied",
    [("ledger", "0011_event_mac"), ("casino", "0004_rg_limits_per_currency_play_sessions"), ("live", "0001_initial")],
)
def test_a_database_part_way_through_the_released_migrations_is_refused(applied_before_the_squash, unapplied):
    applied_before_the_squash.discard(unapplied)
    with pytest.raises(NodeNotFoundError, match="some of the replaced migrations are already applied"):
        plan_for_database()


# --- the chat's content type ---------------------------------------------------------------------


@pytest.fixture
def content_type_cache() -> Iterator[None]:
    """ContentType's cache outlives a test's rolled-back rows: empty before and after."""
    ContentType.objects.clear_cache()
    yield
    ContentType.objects.clear_cache()


def relabel_chat_content_type() -> None:
    schema_editor = mock.Mock(connection=connection)
    import_module("games.migrations.0002_chatmessage_content_type").live_to_games(apps, schema_editor)
    ContentType.objects.clear_cache()


@pytest.mark.django_db
def test_the_live_chat_content_type_becomes_the_games_one_with_its_permissions(content_type_cache):
    ContentType.objects.filter(app_label="games", model="chatmessage").delete()  # as before the move
    live = ContentType.objects.create(app_label="live", model="chatmessage")
    view = Permission.objects.create(content_type=live, codename="view_chatmessage", name="Can view chat message")
    moderators = Group.objects.create(name="moderators")
    moderators.permissions.add(view)
    user = User.objects.create_user("moderator")
    user.groups.add(moderators)
    relabel_chat_content_type()
    live.refresh_from_db()
    assert (live.app_label, live.model) == ("games", "chatmessage")
    assert ContentType.objects.get_for_model(ChatMessage) == live
    assert User.objects.get(pk=user.pk).has_perm("games.view_chatmessage")


@pytest.mark.django_db
def test_an_existing_games_chat_content_type_is_left_as_it_is(content_type_cache):
    games = ContentType.objects.get_for_model(ChatMessage)
    live = ContentType.objects.create(app_label="live", model="chatmessage")
    relabel_chat_content_type()
    assert ContentType.objects.get(pk=games.pk).app_label == "games"
    assert ContentType.objects.get(pk=live.pk).app_label == "live"


# --- the players' settings (issue 37) ---------------------------------------------------------------


@pytest.mark.django_db
def test_the_one_sound_switch_becomes_both_sound_switches():
    """``sound_on`` was "game sound and dealer's voice": a player who muted it has both muted after
    ``casino.0007``, one who did not has both on; backwards, sound is on where either is."""
    before, after = ("casino", "0006_rg_session_limit_pending"), ("casino", "0007_player_settings")
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no pending trigger events before ALTER TABLE
    executor = MigrationExecutor(connection)
    executor.migrate([before])
    old_profiles = executor.loader.project_state([before]).apps.get_model("casino", "PlayerProfile")
    muted, loud = (User.objects.create_user(name) for name in ("muted", "loud"))
    old_profiles.objects.create(user_id=muted.pk, sound_on=False)
    old_profiles.objects.create(user_id=loud.pk, sound_on=True)
    executor = MigrationExecutor(connection)
    executor.migrate([after])
    new_profiles = executor.loader.project_state([after]).apps.get_model("casino", "PlayerProfile")
    switches = dict(new_profiles.objects.values_list("user_id", "dealer_voice_on"))
    assert switches == {muted.pk: False, loud.pk: True}
    assert dict(new_profiles.objects.values_list("user_id", "game_sound_on")) == switches
    new_profiles.objects.filter(user_id=loud.pk).update(game_sound_on=False)  # the voice alone still on
    executor = MigrationExecutor(connection)
    executor.migrate([before])
    assert dict(old_profiles.objects.values_list("user_id", "sound_on")) == {muted.pk: False, loud.pk: True}
    MigrationExecutor(connection).migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


# --- the tables' chips (issue 37) ------------------------------------------------------------------


@pytest.mark.django_db
def test_existing_tables_get_their_currencys_default_chips_and_keep_a_set_they_have() -> None:
    from games.house.models import HouseTable
    from games.house.rules.table_config import default_chips

    euro = HouseTable.objects.create(code="MIGEUR", name="e", game="uth", currency="EUR")
    yen = HouseTable.objects.create(code="MIGJPY", name="y", game="uth", currency="JPY")
    kept = HouseTable.objects.create(code="MIGKEPT", name="k", game="uth", currency="EUR", chips=[100, 200])
    schema_editor = mock.Mock(connection=connection)
    import_module("games.migrations.0003_table_chips_mandatory_multi_play").give_default_chips(apps, schema_editor)
    for table in (euro, yen, kept):
        table.refresh_from_db()
    assert euro.chips == default_chips("EUR") == [100, 500, 1000, 2500, 10_000, 50_000]
    assert yen.chips == default_chips("JPY")
    assert kept.chips == [100, 200]
    assert (euro.mandatory_wagers, euro.multi_play) == ([], True)
