"""Player services: profile and settings (application layer)."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction

from casino.models import PlayerProfile

PLAYER_SETTINGS = ("hide_chat", "show_side_bets", "sound_on")


def get_profile(*, user: User) -> PlayerProfile:
    """The player's profile, created with the defaults on first use."""
    profile, _ = PlayerProfile.objects.get_or_create(user=user)
    return profile


def read_profile(*, user: User) -> PlayerProfile:
    """The player's profile for reading: a player who never changed a setting
    gets an unsaved profile with the defaults (a read creates nothing)."""
    return PlayerProfile.objects.filter(user=user).first() or PlayerProfile(user=user)


@transaction.atomic
def update_player_settings(*, user: User, changes: dict[str, bool]) -> PlayerProfile:
    """Store the given settings (a subset of ``PLAYER_SETTINGS``); the rest stay as they are.

    Precondition: ``changes`` was validated by the caller (known keys, booleans).
    """
    unknown = set(changes) - set(PLAYER_SETTINGS)
    if unknown:
        raise ValueError(f"unknown player settings: {sorted(unknown)}")
    profile = PlayerProfile.objects.select_for_update().filter(user=user).first() or get_profile(user=user)
    for name, value in changes.items():
        setattr(profile, name, value)
    profile.save(update_fields=[*changes, "updated_at"])
    return profile
