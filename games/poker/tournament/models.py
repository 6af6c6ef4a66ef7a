"""Poker tournaments: configuration, state and entries (docs/poker.md, "Tournaments: registration").

The truth is in the event store (``poker-tournament-{id}``: registered,
unregistered) and the ledger: each registration's buy-in is in the
tournament's ``tournament_pool`` account, its fee in the tournament's ``rake``
account. ``TournamentEntry`` rows and the tournament's projected columns are
written only by their projectors (``games.poker.tournament.projectors``) from
the tournament's events.
The level schedule and the payout structure are JSON validated by the pure
domain (``games.poker.tournament.rules.levels`` and ``payouts``). Chips in a
tournament are tournament chips, never money.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from casino.errors import DomainError
from games.poker.tournament.rules.errors import InvalidPayoutStructure
from games.poker.tournament.rules.levels import InvalidSchedule, Level, Schedule
from games.poker.tournament.rules.payouts import PayoutBracket, PayoutStructure, PayoutTable

LEVEL_FIELDS = ("small_blind", "big_blind", "ante", "duration_seconds")


def schedule_from_json(value: Any) -> Schedule:
    """``[{"small_blind", "big_blind", "ante", "duration_seconds"}, ...]`` (level 1 first)
    as a validated ``Schedule``; refusals are the domain's (``tournament_invalid_schedule``
    for a malformed document)."""
    if not isinstance(value, list):
        raise InvalidSchedule("The level schedule is a list of levels.")
    levels = []
    for number, item in enumerate(value, start=1):
        if not isinstance(item, dict) or set(item) != set(LEVEL_FIELDS):
            raise InvalidSchedule(f"Level {number} needs exactly {', '.join(LEVEL_FIELDS)}.", level=number)
        if not all(isinstance(item[name], int) and not isinstance(item[name], bool) for name in LEVEL_FIELDS):
            raise InvalidSchedule(f"Level {number}'s values are whole numbers.", level=number)
        levels.append(Level(**{name: item[name] for name in LEVEL_FIELDS}))
    return Schedule.of(levels)


def payouts_from_json(value: Any) -> PayoutStructure:
    """``[{"max_entrants": int | null, "shares_bp": [place 1, place 2, ...]}, ...]`` as a
    validated ``PayoutStructure`` (``tournament_invalid_payout_structure`` for a malformed
    document; the tables' own refusals, e.g. ``tournament_payouts_not_100``)."""
    if not isinstance(value, list):
        raise InvalidPayoutStructure("The payout structure is a list of brackets.")
    brackets = []
    for index, item in enumerate(value):
        if not isinstance(item, dict) or set(item) != {"max_entrants", "shares_bp"}:
            raise InvalidPayoutStructure("Each bracket has max_entrants and shares_bp.", bracket=index)
        shares = item["shares_bp"]
        if not isinstance(shares, list):
            raise InvalidPayoutStructure("shares_bp is a list of basis points.", bracket=index)
        brackets.append(PayoutBracket(item["max_entrants"], PayoutTable(tuple(shares))))
    return PayoutStructure(tuple(brackets))


def terms_problems(terms: Any) -> dict[str, str]:
    """The domain's refusals of a tournament's or template's ``levels`` and
    ``payouts``, by field, as ``"code: message"`` (empty when both are valid)."""
    problems: dict[str, str] = {}
    for field, parse in (("levels", schedule_from_json), ("payouts", payouts_from_json)):
        try:
            parse(getattr(terms, field))
        except DomainError as refusal:
            problems[field] = f"{refusal.code}: {refusal}"
    return problems


class TournamentKind(models.TextChoices):
    SIT_AND_GO = "sit_and_go", "Sit & Go (starts when full)"
    SCHEDULED = "scheduled", "Scheduled (starts at a time)"


class TournamentState(models.TextChoices):
    REGISTERING = "registering", "Registering"
    RUNNING = "running", "Running"
    PAUSED = "paused", "Paused (malfunction)"
    FINISHED = "finished", "Finished"
    CANCELLED = "cancelled", "Cancelled"


class CancelPolicy(models.TextChoices):
    """What an operator's cancel of a *running* tournament pays (docs/poker.md,
    "Tournaments: cancel"). Before the start every entry is always refunded."""

    REFUND = "refund", "Refund every buy-in and fee"
    CHIP_COUNT = "chip_count", "Pay places reached, the rest of the pool by chip count"


class EntryState(models.TextChoices):
    REGISTERED = "registered", "Registered"
    UNREGISTERED = "unregistered", "Unregistered (refunded)"
    PLAYING = "playing", "Playing"
    ELIMINATED = "eliminated", "Eliminated"
    WINNER = "winner", "Winner"


class Tournament(models.Model):
    """A poker tournament. Money amounts (buy-in, fee, guarantee) are minor units
    of ``currency``; ``starting_chips`` are tournament chips."""

    kind = models.CharField(max_length=12, choices=TournamentKind.choices)
    name = models.CharField(max_length=80)
    currency = models.CharField(max_length=3, default="EUR")
    buy_in = models.PositiveIntegerField(help_text="Into the prize pool.")
    fee = models.PositiveIntegerField(default=0, help_text="To the house.")
    starting_chips = models.PositiveIntegerField()
    max_players = models.PositiveIntegerField(
        validators=[MinValueValidator(2)], help_text="Sit & Go: starts when this many have registered; else the cap."
    )
    table_seats = models.PositiveSmallIntegerField(default=9, validators=[MinValueValidator(2), MaxValueValidator(10)])
    start_at = models.DateTimeField(null=True, blank=True, help_text="Scheduled: when it starts.")
    late_registration_level = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Scheduled: registration stays open through this level (none: until start)."
    )
    levels = models.JSONField(help_text='[{"small_blind", "big_blind", "ante", "duration_seconds"}, ...]')
    payouts = models.JSONField(help_text='[{"max_entrants": n or null, "shares_bp": [place 1, ...]}, ...]')
    guarantee = models.PositiveIntegerField(default=0, help_text="Minimum prize pool; the house covers the overlay.")
    cancel_policy = models.CharField(
        max_length=12, choices=CancelPolicy.choices, default=CancelPolicy.REFUND,
        help_text="What cancelling it while running pays.",
    )  # fmt: skip
    turn_seconds = models.PositiveSmallIntegerField(default=20, help_text="The tables' turn timer.")
    time_bank_seconds = models.PositiveSmallIntegerField(default=30, help_text="Each player's thinking time bank.")
    between_hands_seconds = models.PositiveSmallIntegerField(default=3)
    hand_for_hand_margin = models.PositiveSmallIntegerField(
        default=0, help_text="Hand-for-hand from this many players before the bubble."
    )
    template = models.ForeignKey(
        "TournamentTemplate", null=True, blank=True, on_delete=models.SET_NULL, related_name="tournaments"
    )
    state = models.CharField(max_length=12, choices=TournamentState.choices, default=TournamentState.REGISTERING)
    # Projections (written with the tournament's events).
    current_level = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Projection: the level in force while running."
    )
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    clock_elapsed = models.FloatField(
        default=0.0, help_text="Level clock: seconds run before clock_started_at (the clock stops while paused)."
    )
    clock_started_at = models.DateTimeField(
        null=True, blank=True, help_text="Level clock running since (null: stopped)."
    )
    entrants = models.PositiveIntegerField(default=0, help_text="Players who took part (late registrations included).")
    players_left = models.PositiveIntegerField(default=0)
    hand_for_hand = models.BooleanField(default=False)
    hand_for_hand_round = models.PositiveIntegerField(default=0)
    final_table = models.ForeignKey(
        "games.PokerTable", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    bust_groups = models.PositiveIntegerField(default=0, help_text="Elimination groups recorded (a hand or a round).")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(condition=models.Q(buy_in__gt=0, starting_chips__gt=0), name="tournament_amounts"),
            models.CheckConstraint(condition=models.Q(max_players__gte=2), name="tournament_two_players"),
            models.CheckConstraint(
                condition=models.Q(table_seats__gte=2, table_seats__lte=10), name="tournament_seats_2_to_10"
            ),
            models.CheckConstraint(
                condition=~models.Q(kind="scheduled") | models.Q(start_at__isnull=False),
                name="tournament_scheduled_has_start",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.get_kind_display()})"

    def schedule(self) -> Schedule:
        return schedule_from_json(self.levels)

    def payout_structure(self) -> PayoutStructure:
        return payouts_from_json(self.payouts)

    def clean(self) -> None:
        problems = terms_problems(self)
        if self.kind == TournamentKind.SCHEDULED and self.start_at is None:
            problems["start_at"] = "A scheduled tournament needs a start time."
        if self.late_registration_level is not None and "levels" not in problems:
            try:
                self.schedule().level(self.late_registration_level)
            except DomainError as refusal:
                problems["late_registration_level"] = f"{refusal.code}: {refusal}"
        if problems:
            raise ValidationError(problems)


class TournamentEntry(models.Model):
    """One registration of a player (projection of ``poker-tournament-{id}``). An
    unregistered entry stays as history; a player has at most one other entry per
    tournament (``tournament_one_active_entry``)."""

    tournament = models.ForeignKey(Tournament, on_delete=models.PROTECT, related_name="entries")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="tournament_entries")
    state = models.CharField(max_length=12, choices=EntryState.choices, default=EntryState.REGISTERED)
    buy_in = models.PositiveIntegerField(help_text="Paid into the prize pool at registration.")
    fee = models.PositiveIntegerField(help_text="Paid to the house at registration.")
    place = models.PositiveIntegerField(null=True, blank=True)
    tied = models.PositiveIntegerField(default=1, help_text="Players sharing the place (1: no tie).")
    prize = models.BigIntegerField(null=True, blank=True)
    bust_group = models.PositiveIntegerField(
        null=True, blank=True, help_text="Elimination order: players busted in one group (hand) share a number."
    )
    bust_stack = models.BigIntegerField(null=True, blank=True, help_text="Chips at the start of the hand busted in.")
    bust_hand_id = models.CharField(max_length=64, blank=True, default="")
    eliminated_at = models.DateTimeField(null=True, blank=True)
    registered_at = models.DateTimeField()
    unregistered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["tournament", "registered_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["tournament", "player"],
                condition=~models.Q(state="unregistered"),
                name="tournament_one_active_entry",
            )
        ]

    def __str__(self) -> str:
        return f"{self.player} in {self.tournament_id} ({self.state})"


class TournamentTemplate(models.Model):
    """A reusable tournament definition: the admin creates tournaments from it
    (``games.poker.tournament.services.create_from_template``)."""

    name = models.CharField(max_length=80, unique=True)
    kind = models.CharField(max_length=12, choices=TournamentKind.choices, default=TournamentKind.SIT_AND_GO)
    currency = models.CharField(max_length=3, default="EUR")
    buy_in = models.PositiveIntegerField()
    fee = models.PositiveIntegerField(default=0)
    starting_chips = models.PositiveIntegerField()
    max_players = models.PositiveIntegerField(validators=[MinValueValidator(2)])
    table_seats = models.PositiveSmallIntegerField(default=9, validators=[MinValueValidator(2), MaxValueValidator(10)])
    late_registration_level = models.PositiveSmallIntegerField(null=True, blank=True)
    levels = models.JSONField()
    payouts = models.JSONField()
    guarantee = models.PositiveIntegerField(default=0)
    cancel_policy = models.CharField(max_length=12, choices=CancelPolicy.choices, default=CancelPolicy.REFUND)
    turn_seconds = models.PositiveSmallIntegerField(default=20)
    time_bank_seconds = models.PositiveSmallIntegerField(default=30)
    between_hands_seconds = models.PositiveSmallIntegerField(default=3)
    hand_for_hand_margin = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(buy_in__gt=0, starting_chips__gt=0), name="tournament_template_amounts"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        problems = terms_problems(self)
        if problems:
            raise ValidationError(problems)
