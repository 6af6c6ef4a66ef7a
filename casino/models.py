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
