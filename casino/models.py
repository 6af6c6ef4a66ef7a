"""Platform models: the player's profile and stored settings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.core.validators import MaxValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

if TYPE_CHECKING:
    from django.utils.functional import _StrPromise


class VideoQuality(models.TextChoices):
    """The table video's stream (seed 000, Settings, VIDEO: auto-adjusted unless the player picks a stream)."""

    AUTO = "auto", _("Automatic")
    HIGH = "high", _("High")
    MEDIUM = "medium", _("Medium")
    LOW = "low", _("Low")


class Language(models.TextChoices):
    """The languages a player may be answered in (``settings.LANGUAGES``)."""

    ENGLISH = "en", "English"
    FRENCH = "fr", "Français"


#: A volume is a whole percentage.
VOLUME_MAX = 100


def volume_field(verbose_name: _StrPromise) -> models.PositiveSmallIntegerField[int, int]:
    """A sound's volume, 0 to ``VOLUME_MAX`` (full by default), kept while the sound is muted."""
    return models.PositiveSmallIntegerField(
        verbose_name, default=VOLUME_MAX, validators=[MaxValueValidator(VOLUME_MAX)], help_text=_("From 0 to 100.")
    )


class PlayerProfile(models.Model):
    """A player's stored settings, applied at once and on every device (seed 000, Settings;
    seed 001, Menu: "sound, animation"). The names, tabs and checks: ``casino.players.SETTINGS``."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="player_profile")
    hide_chat = models.BooleanField(_("hide chat"), default=False, help_text=_("Hide other players' chat messages."))
    show_side_bets = models.BooleanField(_("side bets"), default=True, help_text=_("Show the additional side bets."))
    video_quality = models.CharField(
        _("video quality"),
        max_length=6,
        choices=VideoQuality.choices,
        default=VideoQuality.AUTO,
        help_text=_("Automatic adjusts the stream to the connection; or pick a stream."),
    )
    dealer_voice_on = models.BooleanField(_("dealer's voice"), default=True, help_text=_("Hear the dealer's voice."))
    dealer_voice_volume = volume_field(_("dealer's voice volume"))
    game_sound_on = models.BooleanField(_("game sound"), default=True, help_text=_("Hear the game's sounds."))
    game_sound_volume = volume_field(_("game sound volume"))
    animation_on = models.BooleanField(_("animation"), default=True, help_text=_("Animate cards and chips."))
    language = models.CharField(
        _("language"),
        max_length=5,
        choices=Language.choices,
        blank=True,
        default="",
        help_text=_("The language of the game's messages; unset: the device's language."),
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "player profile"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(dealer_voice_volume__lte=VOLUME_MAX, game_sound_volume__lte=VOLUME_MAX),
                name="player_profile_volumes_0_100",
            )
        ]

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
