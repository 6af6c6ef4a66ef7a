"""Tables and the players seated at them (configuration and projections).

Rounds and seats themselves live in the event store (``ledger``); ``HouseRound``,
``PlayerRound`` and ``TableSeat`` are projections of their events, written by
their projectors (``games.house.projectors``) in the same transaction as the
events, and rebuilt from them by ``manage.py rebuild_projections``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from games.house.rules.registry import game_choices
from games.tables.seats import seat_constraints

# The ``game`` columns' choices are the registry's games, asked when validated
# (``game_choices`` is passed as a callable, so a new game needs no migration).


class HandMode(models.TextChoices):
    SHARED = "shared", "Shared hand (one player hand for everyone)"
    PER_SEAT = "per_seat", "Per seat (own cards per seat)"


class HouseTable(models.Model):
    """A house-banked live table (RULES.md, "Live house-banked tables").

    ``limits`` maps each betting spot (wager name) the table offers to
    ``{"min": int, "max": int}`` in minor units; a side bet is offered when it
    has limits. ``pay_tables`` maps wager name to the pay-table number in
    force. ``chips`` lists the chip denominations, ascending, in minor units
    (every chip placed is one of them; ``[]`` only on a row written outside the
    configuration services: no denomination check). ``mandatory_wagers`` names
    the offered side bets every player must make (seed 002:13) and
    ``multi_play`` false makes the table one a player plays alone (seed
    000:274). ``wheel`` is the Bonus Spin Xtreme wheel (segments, awards,
    weights) and ``progressives`` the STAX pools' reset amounts and contribution
    rate, both operator data. Rounds copy all of it when they open, so changing
    a table never alters a past round.
    """

    code = models.CharField(max_length=12, unique=True, help_text="Short code used in game numbers, e.g. UTH1.")
    name = models.CharField(max_length=80)
    game = models.CharField(max_length=20, choices=game_choices)
    hand_mode = models.CharField(max_length=10, choices=HandMode.choices, default=HandMode.SHARED)
    currency = models.CharField(max_length=3, default="EUR")
    limits = models.JSONField(default=dict)
    pay_tables = models.JSONField(default=dict)
    chips = models.JSONField(default=list, blank=True, help_text="Chip denominations, ascending, in minor units.")
    mandatory_wagers = models.JSONField(default=list, blank=True, help_text="Side bets every player must make.")
    multi_play = models.BooleanField(default=True, help_text="May be played alongside other tables.")
    wheel = models.JSONField(default=dict, blank=True)
    progressives = models.JSONField(default=dict, blank=True)
    max_seats = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Per-seat tables: seats the deck allows; shared tables: unlimited."
    )
    betting_seconds = models.PositiveSmallIntegerField(default=15)
    warning_seconds = models.PositiveSmallIntegerField(default=5, help_text="Yellow light: last seconds of betting.")
    decision_seconds = models.PositiveSmallIntegerField(default=12)
    deal_pause_seconds = models.PositiveSmallIntegerField(default=2, help_text="Pause while cards are dealt.")
    between_rounds_seconds = models.PositiveSmallIntegerField(default=5)
    is_open = models.BooleanField(default=False)
    config_version = models.PositiveIntegerField(default=1, help_text="Bumped by every configuration change.")
    # Projections of the current round (updated with its events).
    current_round_id = models.CharField(max_length=64, blank=True, default="")
    phase = models.CharField(max_length=32, blank=True, default="idle")
    phase_seq = models.PositiveIntegerField(default=0)
    deadline = models.DateTimeField(null=True, blank=True)
    public_seq = models.PositiveBigIntegerField(
        default=0, help_text="Gap-free count of public round events at this table (realtime ordering)."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["code"]
        indexes = [models.Index(fields=["is_open", "deadline"], name="table_open_deadline")]

    def __str__(self) -> str:
        return f"{self.code} ({self.get_game_display()})"


class TableConfigVersion(models.Model):
    """One immutable version of a table's configuration (``games.house.rules.table_config``):
    the whole configuration as it stood from this version on, what changed from the
    previous one, who changed it, when and why. Written only by
    ``games.house.services.tables``; the database refuses UPDATE (migration 0003), the
    admin shows it read-only. A round records the version it opened with
    (``HouseRound.config_version``)."""

    table = models.ForeignKey(HouseTable, on_delete=models.PROTECT, related_name="config_versions")
    version = models.PositiveIntegerField()
    config = models.JSONField()
    changes = models.JSONField(default=dict, blank=True, help_text="field -> {from, to} against the previous version")
    reason = models.CharField(max_length=200, blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    actor = models.CharField(max_length=64, help_text="user:<id>, or system for a baseline recorded later")
    event_position = models.BigIntegerField(null=True, blank=True, help_text="The operator.action event recording it.")
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["table", "-version"]
        constraints = [models.UniqueConstraint(fields=["table", "version"], name="one_config_version")]

    def __str__(self) -> str:
        return f"{self.table.code} v{self.version}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise ValueError("a configuration version is immutable; record a new one")
        super().save(*args, **kwargs)


class TableSeat(models.Model):
    """A player's presence at a table: at most one per table (RULES.md), and at
    most ``CASINO_MAX_TABLES_PER_PLAYER`` tables at once (enforced by the join service).
    Projection of the seat events (``house_seat.taken``/``left``, ``games.house.projectors``)."""

    table = models.ForeignKey(HouseTable, on_delete=models.PROTECT, related_name="seats")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="table_seats")
    seat_number = models.PositiveSmallIntegerField(null=True, blank=True)
    joined_at = models.DateTimeField(help_text="The house_seat.taken event's time.")

    class Meta:
        constraints = seat_constraints()

    def __str__(self) -> str:
        return f"{self.player} at {self.table.code}"


class HouseRound(models.Model):
    """Round summary projection (the events in ``round-{round_id}`` are the truth)."""

    round_id = models.CharField(max_length=64, unique=True)
    table = models.ForeignKey(HouseTable, on_delete=models.PROTECT, related_name="rounds")
    game_number = models.CharField(max_length=40, unique=True)
    game = models.CharField(max_length=20, choices=game_choices)
    hand_mode = models.CharField(max_length=10, choices=HandMode.choices)
    currency = models.CharField(max_length=3)
    rules_version = models.CharField(max_length=20)
    config_version = models.PositiveIntegerField(
        default=0, help_text="The table's configuration version the round opened with (0: before versioning)."
    )
    pay_tables = models.JSONField(default=dict)
    phase = models.CharField(max_length=32, default="betting")
    phase_seq = models.PositiveIntegerField(default=0)
    deadline = models.DateTimeField(null=True, blank=True)
    stream_version = models.PositiveIntegerField(default=0)
    participants = models.PositiveIntegerField(default=0)
    staked = models.BigIntegerField(default=0)
    returned = models.BigIntegerField(default=0)
    status = models.CharField(max_length=12, default="open")  # open | settled | voided | empty
    summary = models.JSONField(default=dict, blank=True)
    opened_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-opened_at"]
        indexes = [models.Index(fields=["table", "opened_at"], name="round_table_opened")]

    def __str__(self) -> str:
        return self.game_number


class PlayerRound(models.Model):
    """One player's part in one round: the player-stream projection, and the
    account-history row (date, game, game number, bets, payouts)."""

    # No single-column indexes on the keys: "one_player_round", "player_round_table"
    # and "player_round_history" lead with them, and every index is one more write
    # per bet and per projected row at settlement (10,000 rows in one round).
    round = models.ForeignKey(HouseRound, on_delete=models.PROTECT, related_name="players", db_index=False)
    table = models.ForeignKey(HouseTable, on_delete=models.PROTECT, related_name="player_rounds", db_index=False)
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="house_rounds", db_index=False
    )
    game_number = models.CharField(max_length=40)
    game = models.CharField(max_length=20, choices=game_choices)
    currency = models.CharField(max_length=3)
    stream_version = models.PositiveIntegerField(default=0)
    state = models.JSONField(default=dict)
    totals = models.JSONField(default=dict)
    staked = models.BigIntegerField(default=0)
    returned = models.BigIntegerField(default=0)
    net = models.BigIntegerField(default=0)
    status = models.CharField(max_length=12, default="betting")  # betting | settled | voided
    last_street = models.CharField(max_length=12, blank=True, default="", help_text="Street of the last decision.")
    done_deciding = models.BooleanField(default=False, help_text="Called/played or folded: no more decisions.")
    balance_before = models.BigIntegerField(null=True, blank=True)
    balance_after = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField()
    settled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["round", "player"], name="one_player_round")]
        indexes = [
            models.Index(fields=["player", "created_at"], name="player_round_history"),
            models.Index(fields=["table", "player", "created_at"], name="player_round_table"),
            # "Has everyone decided?" after each decision: the participants still
            # deciding, by the street of their last decision (games.house.services.bets).
            models.Index(
                fields=["round", "last_street"],
                condition=models.Q(staked__gt=0, done_deciding=False),
                name="playerround_undecided",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.game_number} player {self.player_id}"


# Poker ring-game tables live in their own module (games/poker/models.py).
