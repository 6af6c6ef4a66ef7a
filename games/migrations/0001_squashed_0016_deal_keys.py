"""The games app's schema in one migration: migrations 0001 to 0016 squashed, and
the table chat's ``live.0001_initial`` with them (issue 34).

It ``replaces`` those seventeen, so a database that has applied them all records
this one as applied and runs nothing (the chat keeps its table ``live_chatmessage``
and every row in it); a fresh database gets the same schema they built: the tables
in their final shape, the columns in the order the old migrations left them (so
``games_pokertable.tournament_id``, last, is added once ``games_tournament``
exists), then the old migrations' SQL in its final form:

- configuration versions are immutable: a trigger refuses UPDATE (0004;
  PostgreSQL and SQLite);
- PostgreSQL: a round-stream event's commit wakes the websocket relays
  (``pg_notify('casino_round_events')`` from a trigger on ``ledger_event``, 0006;
  games/tables/feed.py listens), and fillfactor 70 on ``games_playerround`` (0007).

The old backfills had rows to fill only on the databases that ran them; 0009's
(a hand player's seat row) is kept, elidable, because a test holds it to its rule.

Upgrading: a database must have applied games 0016 and live 0001 (and the other
apps' last migrations before the squash) before it takes this code: one part way
through the old migrations is neither "all applied" nor "none applied", and Django
then cannot use this migration while the files it replaces are gone."""

from typing import Any

import django.core.validators
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import games.house.rules.registry

NOTIFY_CHANNEL = "casino_round_events"

POSTGRES = [
    """
    CREATE OR REPLACE FUNCTION games_config_version_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'games: % on % is forbidden (configuration versions are immutable)', TG_OP, TG_TABLE_NAME
            USING ERRCODE = 'restrict_violation';
    END
    $$
    """,
    "CREATE TRIGGER games_tableconfigversion_immutable BEFORE UPDATE ON games_tableconfigversion "
    "FOR EACH ROW EXECUTE FUNCTION games_config_version_immutable()",
    f"""
CREATE OR REPLACE FUNCTION casino_notify_round_event() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('{NOTIFY_CHANNEL}', '');
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER casino_round_event_notify
    AFTER INSERT ON ledger_event
    FOR EACH ROW
    WHEN (NEW.stream_id LIKE 'round-%' AND NEW.stream_id NOT LIKE '%-player-%')
    EXECUTE FUNCTION casino_notify_round_event();
""",
    "ALTER TABLE games_playerround SET (fillfactor = 70)",
]
POSTGRES_DROP = [
    "DROP TRIGGER IF EXISTS casino_round_event_notify ON ledger_event",
    "DROP FUNCTION IF EXISTS casino_notify_round_event()",
    "DROP TRIGGER IF EXISTS games_tableconfigversion_immutable ON games_tableconfigversion",
    "DROP FUNCTION IF EXISTS games_config_version_immutable()",
]
SQLITE = [
    "CREATE TRIGGER games_tableconfigversion_immutable BEFORE UPDATE ON games_tableconfigversion "
    "BEGIN SELECT RAISE(ABORT, 'games: UPDATE on games_tableconfigversion is forbidden (immutable)'); END",
]
SQLITE_DROP = ["DROP TRIGGER IF EXISTS games_tableconfigversion_immutable"]


def _run(schema_editor: Any, statements: dict[str, list[str]]) -> None:
    for sql in statements.get(schema_editor.connection.vendor, []):
        schema_editor.execute(sql, params=None)


def install(apps: Any, schema_editor: Any) -> None:
    _run(schema_editor, {"postgresql": POSTGRES, "sqlite": SQLITE})


def uninstall(apps: Any, schema_editor: Any) -> None:
    _run(schema_editor, {"postgresql": POSTGRES_DROP, "sqlite": SQLITE_DROP})


def link_dealt_in_seats(apps: Any, schema_editor: Any) -> None:
    """Each seat still taken is the one its player was dealt in with for every hand
    at that table since it was taken (one seat per table and player at a time);
    earlier hands were dealt to seat rows freed since, and stay empty."""
    PokerSeat = apps.get_model("games", "PokerSeat")
    PokerHandPlayer = apps.get_model("games", "PokerHandPlayer")
    for seat in PokerSeat.objects.all().iterator():
        PokerHandPlayer.objects.filter(
            hand__table_id=seat.table_id, player_id=seat.player_id, hand__started_at__gte=seat.joined_at
        ).update(seat=seat)


class Migration(migrations.Migration):
    initial = True

    replaces = [
        ("games", "0001_initial"),
        ("games", "0002_rounds"),
        ("games", "0003_playerround_undecided_index"),
        ("games", "0004_table_config_versions"),
        ("games", "0005_poker_tables"),
        ("games", "0006_notify_round_events_on_commit"),
        ("games", "0007_playerround_fewer_indexes"),
        ("games", "0008_game_choices_from_registry"),
        ("games", "0009_pokerhandplayer_seat"),
        ("games", "0010_presence_and_disconnection_bank"),
        ("games", "0011_poker_table_raise_cap"),
        ("games", "0012_poker_tournaments"),
        ("games", "0013_tournament_play"),
        ("games", "0014_poker_seat_hand"),
        ("games", "0015_tableseat_joined_at_from_event"),
        ("games", "0016_deal_keys"),
        ("live", "0001_initial"),
    ]

    dependencies = [
        ("ledger", "0001_squashed_0011_event_mac"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="HouseTable",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "code",
                    models.CharField(
                        help_text="Short code used in game numbers, e.g. UTH1.", max_length=12, unique=True
                    ),
                ),
                ("name", models.CharField(max_length=80)),
                ("game", models.CharField(choices=games.house.rules.registry.game_choices, max_length=20)),
                (
                    "hand_mode",
                    models.CharField(
                        choices=[
                            ("shared", "Shared hand (one player hand for everyone)"),
                            ("per_seat", "Per seat (own cards per seat)"),
                        ],
                        default="shared",
                        max_length=10,
                    ),
                ),
                ("currency", models.CharField(default="EUR", max_length=3)),
                ("limits", models.JSONField(default=dict)),
                ("pay_tables", models.JSONField(default=dict)),
                ("wheel", models.JSONField(blank=True, default=dict)),
                ("progressives", models.JSONField(blank=True, default=dict)),
                (
                    "max_seats",
                    models.PositiveSmallIntegerField(
                        blank=True,
                        help_text="Per-seat tables: seats the deck allows; shared tables: unlimited.",
                        null=True,
                    ),
                ),
                ("betting_seconds", models.PositiveSmallIntegerField(default=15)),
                (
                    "warning_seconds",
                    models.PositiveSmallIntegerField(default=5, help_text="Yellow light: last seconds of betting."),
                ),
                ("decision_seconds", models.PositiveSmallIntegerField(default=12)),
                (
                    "deal_pause_seconds",
                    models.PositiveSmallIntegerField(default=2, help_text="Pause while cards are dealt."),
                ),
                ("between_rounds_seconds", models.PositiveSmallIntegerField(default=5)),
                ("is_open", models.BooleanField(default=False)),
                (
                    "config_version",
                    models.PositiveIntegerField(default=1, help_text="Bumped by every configuration change."),
                ),
                ("current_round_id", models.CharField(blank=True, default="", max_length=64)),
                ("phase", models.CharField(blank=True, default="idle", max_length=32)),
                ("phase_seq", models.PositiveIntegerField(default=0)),
                ("deadline", models.DateTimeField(blank=True, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "public_seq",
                    models.PositiveBigIntegerField(
                        default=0, help_text="Gap-free count of public round events at this table (realtime ordering)."
                    ),
                ),
            ],
            options={
                "ordering": ["code"],
                "indexes": [models.Index(fields=["is_open", "deadline"], name="table_open_deadline")],
            },
        ),
        migrations.CreateModel(
            name="TableSeat",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("seat_number", models.PositiveSmallIntegerField(blank=True, null=True)),
                # 0001's field: the AlterField below gives it its final form (see there).
                ("joined_at", models.DateTimeField(auto_now_add=True)),
                (
                    "player",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="table_seats",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "table",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="seats", to="games.housetable"
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("table", "player"), name="one_seat_per_table"),
                    models.UniqueConstraint(fields=("table", "seat_number"), name="seat_number_unique"),
                ],
            },
        ),
        # 0015's change, kept for SQLite: no column changes on PostgreSQL, but SQLite rebuilds the
        # table with the column last, as the old migrations left it there.
        migrations.AlterField(
            model_name="tableseat",
            name="joined_at",
            field=models.DateTimeField(help_text="The house_seat.taken event's time."),
        ),
        migrations.CreateModel(
            name="HouseRound",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("round_id", models.CharField(max_length=64, unique=True)),
                ("game_number", models.CharField(max_length=40, unique=True)),
                ("game", models.CharField(choices=games.house.rules.registry.game_choices, max_length=20)),
                (
                    "hand_mode",
                    models.CharField(
                        choices=[
                            ("shared", "Shared hand (one player hand for everyone)"),
                            ("per_seat", "Per seat (own cards per seat)"),
                        ],
                        max_length=10,
                    ),
                ),
                ("currency", models.CharField(max_length=3)),
                ("rules_version", models.CharField(max_length=20)),
                ("pay_tables", models.JSONField(default=dict)),
                ("phase", models.CharField(default="betting", max_length=32)),
                ("phase_seq", models.PositiveIntegerField(default=0)),
                ("deadline", models.DateTimeField(blank=True, null=True)),
                ("stream_version", models.PositiveIntegerField(default=0)),
                ("participants", models.PositiveIntegerField(default=0)),
                ("staked", models.BigIntegerField(default=0)),
                ("returned", models.BigIntegerField(default=0)),
                ("status", models.CharField(default="open", max_length=12)),
                ("summary", models.JSONField(blank=True, default=dict)),
                ("opened_at", models.DateTimeField()),
                ("closed_at", models.DateTimeField(blank=True, null=True)),
                (
                    "table",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="rounds", to="games.housetable"
                    ),
                ),
                (
                    "config_version",
                    models.PositiveIntegerField(
                        default=0,
                        help_text="The table's configuration version the round opened with (0: before versioning).",
                    ),
                ),
            ],
            options={
                "ordering": ["-opened_at"],
                "indexes": [models.Index(fields=["table", "opened_at"], name="round_table_opened")],
            },
        ),
        migrations.CreateModel(
            name="PlayerRound",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("game_number", models.CharField(max_length=40)),
                ("game", models.CharField(choices=games.house.rules.registry.game_choices, max_length=20)),
                ("currency", models.CharField(max_length=3)),
                ("stream_version", models.PositiveIntegerField(default=0)),
                ("state", models.JSONField(default=dict)),
                ("totals", models.JSONField(default=dict)),
                ("staked", models.BigIntegerField(default=0)),
                ("returned", models.BigIntegerField(default=0)),
                ("net", models.BigIntegerField(default=0)),
                ("status", models.CharField(default="betting", max_length=12)),
                (
                    "last_street",
                    models.CharField(blank=True, default="", help_text="Street of the last decision.", max_length=12),
                ),
                (
                    "done_deciding",
                    models.BooleanField(default=False, help_text="Called/played or folded: no more decisions."),
                ),
                ("balance_before", models.BigIntegerField(blank=True, null=True)),
                ("balance_after", models.BigIntegerField(blank=True, null=True)),
                ("created_at", models.DateTimeField()),
                ("settled_at", models.DateTimeField(blank=True, null=True)),
                (
                    "player",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="house_rounds",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "round",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="players",
                        to="games.houseround",
                    ),
                ),
                (
                    "table",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="player_rounds",
                        to="games.housetable",
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at"],
                "indexes": [
                    models.Index(fields=["player", "created_at"], name="player_round_history"),
                    models.Index(fields=["table", "player", "created_at"], name="player_round_table"),
                    models.Index(
                        condition=models.Q(("done_deciding", False), ("staked__gt", 0)),
                        fields=["round", "last_street"],
                        name="playerround_undecided",
                    ),
                ],
                "constraints": [models.UniqueConstraint(fields=("round", "player"), name="one_player_round")],
            },
        ),
        migrations.CreateModel(
            name="TableConfigVersion",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("version", models.PositiveIntegerField()),
                ("config", models.JSONField()),
                (
                    "changes",
                    models.JSONField(
                        blank=True, default=dict, help_text="field -> {from, to} against the previous version"
                    ),
                ),
                ("reason", models.CharField(blank=True, default="", max_length=200)),
                (
                    "actor",
                    models.CharField(help_text="user:<id>, or system for a baseline recorded later", max_length=64),
                ),
                (
                    "event_position",
                    models.BigIntegerField(blank=True, help_text="The operator.action event recording it.", null=True),
                ),
                ("created_at", models.DateTimeField()),
                (
                    "created_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "table",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="config_versions",
                        to="games.housetable",
                    ),
                ),
            ],
            options={
                "ordering": ["table", "-version"],
                "constraints": [models.UniqueConstraint(fields=("table", "version"), name="one_config_version")],
            },
        ),
        migrations.CreateModel(
            name="PokerTable",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "code",
                    models.CharField(
                        help_text="Short code used in game numbers, e.g. NL1.", max_length=12, unique=True
                    ),
                ),
                ("name", models.CharField(max_length=80)),
                (
                    "variant",
                    models.CharField(
                        choices=[("no_limit", "No limit"), ("pot_limit", "Pot limit"), ("fixed_limit", "Fixed limit")],
                        default="no_limit",
                        max_length=12,
                    ),
                ),
                (
                    "max_seats",
                    models.PositiveSmallIntegerField(
                        default=6,
                        validators=[
                            django.core.validators.MinValueValidator(2),
                            django.core.validators.MaxValueValidator(10),
                        ],
                    ),
                ),
                ("currency", models.CharField(default="EUR", max_length=3)),
                ("small_blind", models.PositiveIntegerField()),
                ("big_blind", models.PositiveIntegerField()),
                ("ante", models.PositiveIntegerField(default=0)),
                ("buy_in_min", models.PositiveIntegerField()),
                ("buy_in_max", models.PositiveIntegerField()),
                ("turn_seconds", models.PositiveSmallIntegerField(default=20, help_text="Turn timer.")),
                (
                    "time_bank_seconds",
                    models.PositiveSmallIntegerField(
                        default=30,
                        help_text="Thinking time bank: extra time, once per sitting, when a player's turn timer has run out.",
                    ),
                ),
                (
                    "reservation_seconds",
                    models.PositiveIntegerField(
                        default=300, help_text="How long a sitting-out player's seat stays reserved before it is freed."
                    ),
                ),
                ("between_hands_seconds", models.PositiveSmallIntegerField(default=3)),
                (
                    "rake_mode",
                    models.CharField(
                        choices=[
                            ("seed001", "Seed 001's table (pot type, players, small blind)"),
                            ("custom", "Custom percentage, minimum and cap"),
                            ("none", "No rake"),
                        ],
                        default="seed001",
                        max_length=8,
                    ),
                ),
                (
                    "rake_percent_bp",
                    models.PositiveIntegerField(default=250, help_text="Custom rake: basis points of the pot."),
                ),
                ("rake_minimum", models.PositiveIntegerField(default=0)),
                ("rake_cap", models.PositiveIntegerField(default=300)),
                ("no_flop_no_drop", models.BooleanField(default=True)),
                ("is_open", models.BooleanField(default=False)),
                ("phase", models.CharField(default="idle", max_length=12)),
                ("phase_seq", models.PositiveIntegerField(default=0)),
                ("deadline", models.DateTimeField(blank=True, null=True)),
                ("current_hand_id", models.CharField(blank=True, default="", max_length=64)),
                ("button_seat", models.PositiveSmallIntegerField(blank=True, null=True)),
                ("hands_played", models.PositiveIntegerField(default=0)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "disconnection_bank_seconds",
                    models.PositiveSmallIntegerField(
                        default=30,
                        help_text="Disconnection time bank (seed 001): extra time a player who is not present at the table gets when their turn runs out, before check-or-fold and sit-out.",
                    ),
                ),
                (
                    "heads_up_uncapped",
                    models.BooleanField(
                        default=False,
                        help_text="Fixed limit: no raise cap while only two players are still in the hand.",
                    ),
                ),
                (
                    "raise_cap",
                    models.PositiveSmallIntegerField(
                        default=4,
                        help_text="Fixed limit: bets and raises allowed per betting round; the big blind counts as the preflop bet (4: a bet and three raises).",
                        validators=[
                            django.core.validators.MinValueValidator(1),
                            django.core.validators.MaxValueValidator(50),
                        ],
                    ),
                ),
                (
                    "table_number",
                    models.PositiveSmallIntegerField(blank=True, help_text="Tournament: table 1, 2, ...", null=True),
                ),
            ],
            options={
                "ordering": ["code"],
                "indexes": [models.Index(fields=["phase", "deadline"], name="poker_table_phase_deadline")],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("max_seats__gte", 2), ("max_seats__lte", 10)),
                        name="poker_table_seats_2_to_10",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("big_blind__gt", 0), ("buy_in_max__gte", models.F("buy_in_min")), ("buy_in_min__gt", 0)
                        ),
                        name="poker_table_stakes",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("raise_cap__gte", 1)), name="poker_table_raise_cap_positive"
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="PokerHand",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("hand_id", models.CharField(max_length=64, unique=True)),
                ("hand_number", models.PositiveIntegerField(help_text="1, 2, ... at this table.")),
                ("currency", models.CharField(max_length=3)),
                ("players", models.JSONField(default=dict, help_text="Seat number (as text) -> player id, dealt in.")),
                ("phase", models.CharField(default="dealing", max_length=12)),
                ("actor_seat", models.PositiveSmallIntegerField(blank=True, null=True)),
                ("deadline", models.DateTimeField(blank=True, null=True)),
                ("in_time_bank", models.BooleanField(default=False)),
                ("status", models.CharField(default="playing", max_length=10)),
                ("stream_version", models.PositiveIntegerField(default=0)),
                ("pot", models.BigIntegerField(default=0)),
                ("rake", models.BigIntegerField(default=0)),
                ("started_at", models.DateTimeField()),
                ("ended_at", models.DateTimeField(blank=True, null=True)),
                (
                    "table",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="hands", to="games.pokertable"
                    ),
                ),
                (
                    "in_disconnection_bank",
                    models.BooleanField(
                        default=False, help_text="The actor is absent and on the table's disconnection time bank."
                    ),
                ),
            ],
            options={
                "ordering": ["-started_at", "-id"],
                "indexes": [models.Index(fields=["table", "started_at"], name="poker_hand_table_started")],
            },
        ),
        migrations.CreateModel(
            name="PokerSeat",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("seat_number", models.PositiveSmallIntegerField()),
                ("stack", models.BigIntegerField(default=0)),
                ("sitting_out", models.BooleanField(default=False)),
                (
                    "reserved_until",
                    models.DateTimeField(blank=True, help_text="Sitting out: freed after this time.", null=True),
                ),
                ("time_bank_left", models.FloatField(default=0.0, help_text="Seconds of thinking time bank left.")),
                ("joined_at", models.DateTimeField()),
                (
                    "player",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="poker_seats",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "table",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="seats", to="games.pokertable"
                    ),
                ),
                (
                    "sat_out_reason",
                    models.CharField(
                        blank=True,
                        default="",
                        help_text="Why the seat sits out: player, timeout, no_chips, disconnected, responsible_gaming.",
                        max_length=32,
                    ),
                ),
                ("hand_number", models.PositiveIntegerField(default=0)),
                ("hand_version", models.PositiveIntegerField(default=0)),
            ],
            options={
                "ordering": ["table", "seat_number"],
                "constraints": [
                    models.UniqueConstraint(fields=("table", "player"), name="poker_one_seat_per_table"),
                    models.UniqueConstraint(fields=("table", "seat_number"), name="poker_seat_number_unique"),
                ],
            },
        ),
        migrations.CreateModel(
            name="PokerHandPlayer",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("seat_number", models.PositiveSmallIntegerField()),
                ("stack_before", models.BigIntegerField()),
                ("stack_after", models.BigIntegerField(blank=True, null=True)),
                ("started_at", models.DateTimeField()),
                (
                    "hand",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="participants", to="games.pokerhand"
                    ),
                ),
                (
                    "player",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="poker_hands",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "seat",
                    models.ForeignKey(
                        blank=True,
                        help_text="The seat row dealt in; empty once that seat is freed (stood up, reservation ended).",
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="hand_players",
                        to="games.pokerseat",
                    ),
                ),
            ],
            options={
                "ordering": ["-started_at", "-id"],
                "indexes": [models.Index(fields=["player", "started_at"], name="poker_hand_player_history")],
                "constraints": [models.UniqueConstraint(fields=("hand", "player"), name="poker_one_player_per_hand")],
            },
        ),
        migrations.CreateModel(
            name="TablePresence",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("family", models.CharField(max_length=8)),
                ("table_id", models.BigIntegerField()),
                (
                    "connection",
                    models.CharField(blank=True, default="", help_text="The socket holding the lease.", max_length=32),
                ),
                ("socket_until", models.DateTimeField(blank=True, help_text="The websocket lease's end.", null=True)),
                ("rest_at", models.DateTimeField(blank=True, help_text="The last REST call to the table.", null=True)),
                (
                    "player",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="presences",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "indexes": [models.Index(fields=["connection"], name="presence_connection")],
                "constraints": [
                    models.UniqueConstraint(fields=("family", "table_id", "player"), name="presence_one_per_table")
                ],
            },
        ),
        migrations.CreateModel(
            name="TournamentTemplate",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=80, unique=True)),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("sit_and_go", "Sit & Go (starts when full)"),
                            ("scheduled", "Scheduled (starts at a time)"),
                        ],
                        default="sit_and_go",
                        max_length=12,
                    ),
                ),
                ("currency", models.CharField(default="EUR", max_length=3)),
                ("buy_in", models.PositiveIntegerField()),
                ("fee", models.PositiveIntegerField(default=0)),
                ("starting_chips", models.PositiveIntegerField()),
                ("max_players", models.PositiveIntegerField(validators=[django.core.validators.MinValueValidator(2)])),
                (
                    "table_seats",
                    models.PositiveSmallIntegerField(
                        default=9,
                        validators=[
                            django.core.validators.MinValueValidator(2),
                            django.core.validators.MaxValueValidator(10),
                        ],
                    ),
                ),
                ("late_registration_level", models.PositiveSmallIntegerField(blank=True, null=True)),
                ("levels", models.JSONField()),
                ("payouts", models.JSONField()),
                ("guarantee", models.PositiveIntegerField(default=0)),
                (
                    "cancel_policy",
                    models.CharField(
                        choices=[
                            ("refund", "Refund every buy-in and fee"),
                            ("chip_count", "Pay places reached, the rest of the pool by chip count"),
                        ],
                        default="refund",
                        max_length=12,
                    ),
                ),
                ("turn_seconds", models.PositiveSmallIntegerField(default=20)),
                ("time_bank_seconds", models.PositiveSmallIntegerField(default=30)),
                ("between_hands_seconds", models.PositiveSmallIntegerField(default=3)),
                ("hand_for_hand_margin", models.PositiveSmallIntegerField(default=0)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["name"],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("buy_in__gt", 0), ("starting_chips__gt", 0)),
                        name="tournament_template_amounts",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="Tournament",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("sit_and_go", "Sit & Go (starts when full)"),
                            ("scheduled", "Scheduled (starts at a time)"),
                        ],
                        max_length=12,
                    ),
                ),
                ("name", models.CharField(max_length=80)),
                ("currency", models.CharField(default="EUR", max_length=3)),
                ("buy_in", models.PositiveIntegerField(help_text="Into the prize pool.")),
                ("fee", models.PositiveIntegerField(default=0, help_text="To the house.")),
                ("starting_chips", models.PositiveIntegerField()),
                (
                    "max_players",
                    models.PositiveIntegerField(
                        help_text="Sit & Go: starts when this many have registered; else the cap.",
                        validators=[django.core.validators.MinValueValidator(2)],
                    ),
                ),
                (
                    "table_seats",
                    models.PositiveSmallIntegerField(
                        default=9,
                        validators=[
                            django.core.validators.MinValueValidator(2),
                            django.core.validators.MaxValueValidator(10),
                        ],
                    ),
                ),
                ("start_at", models.DateTimeField(blank=True, help_text="Scheduled: when it starts.", null=True)),
                (
                    "late_registration_level",
                    models.PositiveSmallIntegerField(
                        blank=True,
                        help_text="Scheduled: registration stays open through this level (none: until start).",
                        null=True,
                    ),
                ),
                (
                    "levels",
                    models.JSONField(help_text='[{"small_blind", "big_blind", "ante", "duration_seconds"}, ...]'),
                ),
                (
                    "payouts",
                    models.JSONField(help_text='[{"max_entrants": n or null, "shares_bp": [place 1, ...]}, ...]'),
                ),
                (
                    "guarantee",
                    models.PositiveIntegerField(
                        default=0, help_text="Minimum prize pool; the house covers the overlay."
                    ),
                ),
                (
                    "state",
                    models.CharField(
                        choices=[
                            ("registering", "Registering"),
                            ("running", "Running"),
                            ("paused", "Paused (malfunction)"),
                            ("finished", "Finished"),
                            ("cancelled", "Cancelled"),
                        ],
                        default="registering",
                        max_length=12,
                    ),
                ),
                (
                    "current_level",
                    models.PositiveSmallIntegerField(
                        blank=True, help_text="Projection: the level in force while running.", null=True
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("between_hands_seconds", models.PositiveSmallIntegerField(default=3)),
                (
                    "bust_groups",
                    models.PositiveIntegerField(
                        default=0, help_text="Elimination groups recorded (a hand or a round)."
                    ),
                ),
                (
                    "cancel_policy",
                    models.CharField(
                        choices=[
                            ("refund", "Refund every buy-in and fee"),
                            ("chip_count", "Pay places reached, the rest of the pool by chip count"),
                        ],
                        default="refund",
                        help_text="What cancelling it while running pays.",
                        max_length=12,
                    ),
                ),
                (
                    "clock_elapsed",
                    models.FloatField(
                        default=0.0,
                        help_text="Level clock: seconds run before clock_started_at (the clock stops while paused).",
                    ),
                ),
                (
                    "clock_started_at",
                    models.DateTimeField(blank=True, help_text="Level clock running since (null: stopped).", null=True),
                ),
                (
                    "entrants",
                    models.PositiveIntegerField(
                        default=0, help_text="Players who took part (late registrations included)."
                    ),
                ),
                (
                    "final_table",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="games.pokertable",
                    ),
                ),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                ("hand_for_hand", models.BooleanField(default=False)),
                (
                    "hand_for_hand_margin",
                    models.PositiveSmallIntegerField(
                        default=0, help_text="Hand-for-hand from this many players before the bubble."
                    ),
                ),
                ("hand_for_hand_round", models.PositiveIntegerField(default=0)),
                ("players_left", models.PositiveIntegerField(default=0)),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                (
                    "time_bank_seconds",
                    models.PositiveSmallIntegerField(default=30, help_text="Each player's thinking time bank."),
                ),
                ("turn_seconds", models.PositiveSmallIntegerField(default=20, help_text="The tables' turn timer.")),
                (
                    "template",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="tournaments",
                        to="games.tournamenttemplate",
                    ),
                ),
            ],
            options={
                "ordering": ["id"],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("buy_in__gt", 0), ("starting_chips__gt", 0)), name="tournament_amounts"
                    ),
                    models.CheckConstraint(condition=models.Q(("max_players__gte", 2)), name="tournament_two_players"),
                    models.CheckConstraint(
                        condition=models.Q(("table_seats__gte", 2), ("table_seats__lte", 10)),
                        name="tournament_seats_2_to_10",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            models.Q(("kind", "scheduled"), _negated=True), ("start_at__isnull", False), _connector="OR"
                        ),
                        name="tournament_scheduled_has_start",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="TournamentEntry",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "state",
                    models.CharField(
                        choices=[
                            ("registered", "Registered"),
                            ("unregistered", "Unregistered (refunded)"),
                            ("playing", "Playing"),
                            ("eliminated", "Eliminated"),
                            ("winner", "Winner"),
                        ],
                        default="registered",
                        max_length=12,
                    ),
                ),
                ("buy_in", models.PositiveIntegerField(help_text="Paid into the prize pool at registration.")),
                ("fee", models.PositiveIntegerField(help_text="Paid to the house at registration.")),
                ("place", models.PositiveIntegerField(blank=True, null=True)),
                ("prize", models.BigIntegerField(blank=True, null=True)),
                ("registered_at", models.DateTimeField()),
                ("unregistered_at", models.DateTimeField(blank=True, null=True)),
                (
                    "player",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="tournament_entries",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "tournament",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="entries", to="games.tournament"
                    ),
                ),
                (
                    "bust_group",
                    models.PositiveIntegerField(
                        blank=True,
                        help_text="Elimination order: players busted in one group (hand) share a number.",
                        null=True,
                    ),
                ),
                ("bust_hand_id", models.CharField(blank=True, default="", max_length=64)),
                (
                    "bust_stack",
                    models.BigIntegerField(
                        blank=True, help_text="Chips at the start of the hand busted in.", null=True
                    ),
                ),
                ("eliminated_at", models.DateTimeField(blank=True, null=True)),
                ("tied", models.PositiveIntegerField(default=1, help_text="Players sharing the place (1: no tie).")),
            ],
            options={
                "ordering": ["tournament", "registered_at", "id"],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("state", "unregistered"), _negated=True),
                        fields=("tournament", "player"),
                        name="tournament_one_active_entry",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="DealKey",
            fields=[
                (
                    "deal_id",
                    models.CharField(
                        help_text="house-round:<id> or poker-hand:<id>",
                        max_length=64,
                        primary_key=True,
                        serialize=False,
                    ),
                ),
                ("wrapped", models.JSONField(help_text="The data key sealed under the card key named by its kid.")),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={},
        ),
        migrations.CreateModel(
            name="ChatMessage",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("text", models.CharField(max_length=280)),
                ("sent_at", models.DateTimeField(db_index=True)),
                (
                    "player",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="chat_messages",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "table",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="chat_messages", to="games.housetable"
                    ),
                ),
            ],
            options={
                "db_table": "live_chatmessage",
                "ordering": ["-sent_at", "-id"],
                "indexes": [models.Index(fields=["table", "-sent_at"], name="chat_table_recent")],
            },
        ),
        migrations.AddField(
            model_name="pokertable",
            name="tournament",
            field=models.ForeignKey(
                blank=True,
                help_text="A tournament's table: chips are tournament chips (ledger unit XXX), seats are assigned.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="tables",
                to="games.tournament",
            ),
        ),
        migrations.RunPython(install, uninstall),
        migrations.RunPython(link_dealt_in_seats, migrations.RunPython.noop, elidable=True),
    ]
