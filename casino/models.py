"""Platform models: the player's profile and stored settings."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class PlayerProfile(models.Model):
    """A player's stored settings, applied at once and on every device (seed 000, Settings)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="player_profile")
    hide_chat = models.BooleanField(default=False, help_text="Hide other players' chat messages.")
    show_side_bets = models.BooleanField(default=True, help_text="Show the optional side-bet spots.")
    sound_on = models.BooleanField(default=True, help_text="Game sound and dealer's voice.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "player profile"

    def __str__(self) -> str:
        return f"profile of {self.user}"


class ResponsibleGaming(models.Model):
    """A player's responsible-gaming limits and exclusions: one row per player,
    read by primary key on the bet and deposit paths (``casino.responsible_gaming``).

    ``limits`` maps a currency (``"EUR"``) to its limits: a limit kind
    (``deposit_day``, ``deposit_week``, ``deposit_month``, ``loss_day``,
    ``loss_week``, ``loss_month``) to
    ``{"amount": int | null, "pending": int | null, "pending_from": iso | null}``
    in minor units of that currency: a decrease replaces ``amount`` at once, an
    increase (or removal) waits in ``pending`` until ``pending_from`` (24 h).
    The session time limit follows the same rule in its own columns:
    ``session_limit_minutes`` is its ``amount``, ``session_limit_pending`` and
    ``session_limit_pending_from`` its ``pending`` and ``pending_from``
    (``casino.responsible_gaming.session_limit_entry``).
    ``currency`` is the currency the row was first created in (the reality
    check's headline ``net_loss``). ``session_started_at`` / ``last_wager_at``:
    the play session (starts at a wager after the idle gap, ends after it).
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, primary_key=True, related_name="responsible_gaming"
    )
    currency = models.CharField(max_length=3)
    limits = models.JSONField(default=dict, blank=True)
    session_limit_minutes = models.PositiveIntegerField(null=True, blank=True)
    # A longer session limit (or none: null) asked for, in force from ``session_limit_pending_from``.
    session_limit_pending = models.PositiveIntegerField(null=True, blank=True)
    session_limit_pending_from = models.DateTimeField(null=True, blank=True)
    reality_check_minutes = models.PositiveIntegerField(null=True, blank=True)
    session_started_at = models.DateTimeField(null=True, blank=True)
    last_wager_at = models.DateTimeField(null=True, blank=True)
    last_reality_check_at = models.DateTimeField(null=True, blank=True)
    # Self-exclusion or cool-off: no bets and no deposits before ``excluded_until``.
    exclusion = models.CharField(
        max_length=20, blank=True, choices=[("self_exclusion", "self-exclusion"), ("cool_off", "cool-off")]
    )
    excluded_until = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "responsible-gaming settings"
        verbose_name_plural = "responsible-gaming settings"

    def __str__(self) -> str:
        return f"limits of {self.user}"


class CashierState(models.TextChoices):
    REQUESTED = "requested"
    APPROVED = "approved"
    PAID = "paid"
    REJECTED = "rejected"
    # A paid deposit the player could not be credited with (e.g. self-excluded
    # since the request): its money waits in the player's suspense account
    # until an operator refunds it through the provider.
    REFUND_DUE = "refund_due"
    REFUNDED = "refunded"


class CashierKind(models.TextChoices):
    DEPOSIT = "deposit"
    WITHDRAWAL = "withdrawal"


class CashierTransaction(models.Model):
    """A deposit or withdrawal through the payment provider (``casino.cashier``).

    requested -> approved -> paid, or -> rejected from requested/approved; a
    deposit paid by the provider that cannot be credited -> refund_due ->
    refunded (by an operator). A withdrawal holds the funds (ledger hold ``hold_id``) from its request
    until it is paid (posted to the cashier account) or rejected (voided).
    """

    id = models.UUIDField(primary_key=True)
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="cashier_transactions")
    kind = models.CharField(max_length=10, choices=CashierKind.choices)
    amount = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    state = models.CharField(max_length=10, choices=CashierState.choices, default=CashierState.REQUESTED)
    external_reference = models.CharField(max_length=100, unique=True)
    hold_id = models.UUIDField(null=True, blank=True)
    reason = models.CharField(max_length=200, blank=True)
    decided_by = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    stream_version = models.PositiveIntegerField(
        default=0, help_text="The version of its stream's last event applied (casino.projectors)."
    )

    class Meta:
        indexes = [models.Index(fields=["player", "kind", "created_at"], name="cashier_player_kind_time_idx")]
        constraints = [models.CheckConstraint(condition=models.Q(amount__gt=0), name="cashier_amount_positive")]
        permissions = [("decide_cashiertransaction", "Can approve or reject cashier transactions")]

    def __str__(self) -> str:
        return f"{self.kind} {self.amount} {self.currency} {self.state}"
