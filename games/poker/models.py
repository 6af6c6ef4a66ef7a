"""Poker ring-game tables: configuration and inline projections (docs/poker.md, "Tables").

The truth is in the event store: ``poker-table-{id}`` (sit down, top up,
stand up, sit out/in, the button draw) and ``poker-hand-{hand_id}`` (the
shuffled deck, the engine's events, turns and timeouts). The fields marked
*projection* are written only by their projectors (``games.poker.projectors``)
from those events, in the services' transaction that appends them. Money
(chips) lives in the ledger: each player's chips at a table are the balance of
their ``poker_seat`` account.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from games.tables.seats import seat_constraints


class PokerVariant(models.TextChoices):
    NO_LIMIT = "no_limit", "No limit"
    POT_LIMIT = "pot_limit", "Pot limit"
    FIXED_LIMIT = "fixed_limit", "Fixed limit"


class RakeMode(models.TextChoices):
    SEED_001 = "seed001", "Seed 001's table (pot type, players, small blind)"
    CUSTOM = "custom", "Custom percentage, minimum and cap"
    NONE = "none", "No rake"


class PokerTable(models.Model):
    """A Texas Hold'em ring-game table (RULES.md, "Texas Hold'em ring game").
    Amounts are minor units of ``currency`` (one chip = one minor unit)."""

    code = models.CharField(max_length=12, unique=True, help_text="Short code used in game numbers, e.g. NL1.")
    name = models.CharField(max_length=80)
    variant = models.CharField(max_length=12, choices=PokerVariant.choices, default=PokerVariant.NO_LIMIT)
    max_seats = models.PositiveSmallIntegerField(default=6, validators=[MinValueValidator(2), MaxValueValidator(10)])
    currency = models.CharField(max_length=3, default="EUR")
    small_blind = models.PositiveIntegerField()
    big_blind = models.PositiveIntegerField()
    ante = models.PositiveIntegerField(default=0)
    buy_in_min = models.PositiveIntegerField()
    buy_in_max = models.PositiveIntegerField()
    turn_seconds = models.PositiveSmallIntegerField(default=20, help_text="Turn timer.")
    time_bank_seconds = models.PositiveSmallIntegerField(
        default=30,
        help_text="Thinking time bank: extra time, once per sitting, when a player's turn timer has run out.",
    )
    disconnection_bank_seconds = models.PositiveSmallIntegerField(
        default=30,
        help_text="Disconnection time bank (seed 001): extra time a player who is not present at the table "
        "gets when their turn runs out, before check-or-fold and sit-out.",
    )
    reservation_seconds = models.PositiveIntegerField(
        default=300, help_text="How long a sitting-out player's seat stays reserved before it is freed."
    )
    between_hands_seconds = models.PositiveSmallIntegerField(default=3)
    rake_mode = models.CharField(max_length=8, choices=RakeMode.choices, default=RakeMode.SEED_001)
    rake_percent_bp = models.PositiveIntegerField(default=250, help_text="Custom rake: basis points of the pot.")
    rake_minimum = models.PositiveIntegerField(default=0)
    rake_cap = models.PositiveIntegerField(default=300)
    no_flop_no_drop = models.BooleanField(default=True)
    raise_cap = models.PositiveSmallIntegerField(
        default=4,
        validators=[MinValueValidator(1), MaxValueValidator(50)],
        help_text="Fixed limit: bets and raises allowed per betting round; the big blind counts as the "
        "preflop bet (4: a bet and three raises).",
    )
    heads_up_uncapped = models.BooleanField(
        default=False, help_text="Fixed limit: no raise cap while only two players are still in the hand."
    )
    is_open = models.BooleanField(default=False)
    tournament = models.ForeignKey(
        "games.Tournament", null=True, blank=True, on_delete=models.PROTECT, related_name="tables",
        help_text="A tournament's table: chips are tournament chips (ledger unit XXX), seats are assigned.",
    )  # fmt: skip
    table_number = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Tournament: table 1, 2, ...")
    # Projections (updated with the events).
    phase = models.CharField(max_length=12, default="idle")  # idle | hand | between
    phase_seq = models.PositiveIntegerField(default=0)
    deadline = models.DateTimeField(null=True, blank=True)
    current_hand_id = models.CharField(max_length=64, blank=True, default="")
    button_seat = models.PositiveSmallIntegerField(null=True, blank=True)
    hands_played = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["code"]
        indexes = [models.Index(fields=["phase", "deadline"], name="poker_table_phase_deadline")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(max_seats__gte=2, max_seats__lte=10), name="poker_table_seats_2_to_10"
            ),
            models.CheckConstraint(
                condition=models.Q(big_blind__gt=0, buy_in_min__gt=0, buy_in_max__gte=models.F("buy_in_min")),
                name="poker_table_stakes",
            ),
            models.CheckConstraint(condition=models.Q(raise_cap__gte=1), name="poker_table_raise_cap_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.code} ({self.get_variant_display()} {self.small_blind}/{self.big_blind})"


class PokerSeat(models.Model):
    """A player in a seat (projection: ``PokerSeatProjector``). ``stack`` equals
    the player's ``poker_seat`` ledger balance: the chips not in a pot."""

    table = models.ForeignKey(PokerTable, on_delete=models.PROTECT, related_name="seats")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="poker_seats")
    seat_number = models.PositiveSmallIntegerField()
    stack = models.BigIntegerField(default=0)
    sitting_out = models.BooleanField(default=False)
    reserved_until = models.DateTimeField(null=True, blank=True, help_text="Sitting out: freed after this time.")
    sat_out_reason = models.CharField(
        max_length=32, blank=True, default="",
        help_text="Why the seat sits out: player, timeout, no_chips, disconnected, responsible_gaming.",
    )  # fmt: skip
    time_bank_left = models.FloatField(default=0.0, help_text="Seconds of thinking time bank left.")
    joined_at = models.DateTimeField()
    # The hand this sitting was last dealt into (the table's hand number, 0: none) and the
    # version of that hand's stream applied to it: a hand's events touch only the
    # sittings dealt into it (issue #20), each event once (``PokerSeatProjector``).
    hand_number = models.PositiveIntegerField(default=0)
    hand_version = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["table", "seat_number"]
        constraints = seat_constraints("poker_")

    def __str__(self) -> str:
        return f"{self.player} in seat {self.seat_number} at {self.table_id}"


class PokerHand(models.Model):
    """Hand summary projection (``poker-hand-{hand_id}`` is the truth). The
    hand id is its game number, ``CODE-YYYYMMDD-HHMMSS`` (GMT start)."""

    hand_id = models.CharField(max_length=64, unique=True)
    table = models.ForeignKey(PokerTable, on_delete=models.PROTECT, related_name="hands")
    hand_number = models.PositiveIntegerField(help_text="1, 2, ... at this table.")
    currency = models.CharField(max_length=3)
    players = models.JSONField(default=dict, help_text="Seat number (as text) -> player id, dealt in.")
    phase = models.CharField(max_length=12, default="dealing")
    actor_seat = models.PositiveSmallIntegerField(null=True, blank=True)
    deadline = models.DateTimeField(null=True, blank=True)
    in_time_bank = models.BooleanField(default=False)
    in_disconnection_bank = models.BooleanField(
        default=False, help_text="The actor is absent and on the table's disconnection time bank."
    )
    status = models.CharField(max_length=10, default="playing")  # playing | complete
    stream_version = models.PositiveIntegerField(default=0)
    pot = models.BigIntegerField(default=0)
    rake = models.BigIntegerField(default=0)
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [models.Index(fields=["table", "started_at"], name="poker_hand_table_started")]

    def __str__(self) -> str:
        return self.hand_id


class PokerHandPlayer(models.Model):
    """One player dealt into one hand (projection): the hand history list."""

    hand = models.ForeignKey(PokerHand, on_delete=models.PROTECT, related_name="participants")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="poker_hands")
    seat_number = models.PositiveSmallIntegerField()
    # The hand touches only the seat rows it dealt in, never a seat found by player id:
    # a player who folds, stands up and sits down again during the hand has a new
    # seat row (with a new buy-in) that is not in the hand (issue #20).
    seat = models.ForeignKey(
        PokerSeat, null=True, blank=True, on_delete=models.SET_NULL, related_name="hand_players",
        help_text="The seat row dealt in; empty once that seat is freed (stood up, reservation ended).",
    )  # fmt: skip
    stack_before = models.BigIntegerField()
    stack_after = models.BigIntegerField(null=True, blank=True)
    started_at = models.DateTimeField()

    class Meta:
        ordering = ["-started_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["hand", "player"], name="poker_one_player_per_hand")]
        indexes = [models.Index(fields=["player", "started_at"], name="poker_hand_player_history")]

    def __str__(self) -> str:
        return f"{self.hand_id} player {self.player_id}"
