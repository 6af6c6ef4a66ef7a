"""Player services: profile and settings (application layer).

The settings are the seeds' (seed 000, "Settings": GENERAL, VIDEO and SOUND tabs;
seed 001, "Menu": sound, animation), plus the language (English or French) the
player is answered in. Each is a ``PlayerProfile`` field; ``SETTINGS`` says its
tab and kind, the field its label, help and choices (translated: ``casino.i18n``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from django.contrib.auth.models import User
from django.db import models, transaction
from django.utils.functional import Promise
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _

from casino.errors import DomainError
from casino.models import VOLUME_MAX, PlayerProfile

SettingKind = Literal["boolean", "volume", "choice"]


@dataclass(frozen=True)
class Setting:
    """One stored setting: its ``PlayerProfile`` field ``name``, the settings tab it is drawn under and its kind
    (``boolean``; ``volume``: a whole number 0 to 100; ``choice``: one of the field's choices, or ``None``
    where the field may be blank: "not chosen")."""

    name: str
    tab: str
    kind: SettingKind


#: The settings in the order a settings panel draws them, by tab (seed 000, Settings).
SETTINGS: tuple[Setting, ...] = (
    Setting("hide_chat", "general", "boolean"),
    Setting("show_side_bets", "general", "boolean"),
    Setting("animation_on", "general", "boolean"),
    Setting("language", "general", "choice"),
    Setting("video_quality", "video", "choice"),
    Setting("dealer_voice_on", "sound", "boolean"),
    Setting("dealer_voice_volume", "sound", "volume"),
    Setting("game_sound_on", "sound", "boolean"),
    Setting("game_sound_volume", "sound", "volume"),
)
SETTINGS_BY_NAME: dict[str, Setting] = {setting.name: setting for setting in SETTINGS}
PLAYER_SETTINGS: tuple[str, ...] = tuple(SETTINGS_BY_NAME)

#: The settings tabs' labels (seed 000: GENERAL, VIDEO, SOUND).
TAB_LABELS: dict[str, Promise] = {"general": _("General"), "video": _("Video"), "sound": _("Sound")}

#: Before issue 37 one switch, ``sound_on``, muted the game sound and the dealer's voice together (as the seed's
#: SOUND button still does): a change of it is a change of both.
SOUND_ON_ALIAS = "sound_on"
SOUND_SWITCHES = ("dealer_voice_on", "game_sound_on")


class InvalidSettings(DomainError, code="invalid_settings"):
    """The settings must be a JSON object of setting names."""


class UnknownSetting(DomainError, code="unknown_setting"):
    """There is no such setting (``details.settings``: the unknown names)."""


class InvalidSetting(DomainError, code="invalid_setting"):
    """A value is not allowed for its setting (``details.setting``; ``details.allowed``: what is)."""


def setting_field(name: str) -> models.Field[Any, Any]:
    """The ``PlayerProfile`` field of a setting."""
    field = PlayerProfile._meta.get_field(name)
    assert isinstance(field, models.Field)
    return field


def allowed_values(setting: Setting) -> dict[str, Any]:
    """What a setting accepts, as ``details.allowed`` of ``invalid_setting``."""
    if setting.kind == "boolean":
        return {"type": "boolean"}
    if setting.kind == "volume":
        return {"type": "integer", "min": 0, "max": VOLUME_MAX}
    field = setting_field(setting.name)
    return {"choices": [value for value, _label in field.choices or ()], "nullable": field.blank}


def check_setting_value(setting: Setting, value: object) -> Any:
    """``value`` as stored for ``setting``, or ``invalid_setting``. JSON's types are
    kept: ``true`` is not a volume, ``"50"`` and ``50.0`` are not either."""
    if setting.kind == "boolean":
        valid = isinstance(value, bool)
    elif setting.kind == "volume":
        valid = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= VOLUME_MAX
    else:
        field = setting_field(setting.name)
        if value is None and field.blank:
            return ""
        valid = isinstance(value, str) and value in {choice for choice, _label in field.choices or ()}
    if not valid:
        raise InvalidSetting(
            f"{setting.name}: this value is not allowed", setting=setting.name, allowed=allowed_values(setting)
        )
    return value


def check_player_settings(*, changes: object) -> dict[str, Any]:
    """The changes to store, each checked: ``changes`` is a JSON object of setting
    names (``invalid_settings``), every name a setting (``unknown_setting``, naming
    them all), every value allowed (``invalid_setting``, naming the first).

    ``sound_on`` (the one sound switch before issue 37) sets both sound switches;
    a sound switch sent with it wins over it."""
    if not isinstance(changes, Mapping):
        raise InvalidSettings()
    unknown = sorted(str(name) for name in changes if name not in SETTINGS_BY_NAME and name != SOUND_ON_ALIAS)
    if unknown:
        raise UnknownSetting(f"unknown settings: {', '.join(unknown)}", settings=unknown)
    checked: dict[str, Any] = {}
    if SOUND_ON_ALIAS in changes:
        sound_on = check_setting_value(Setting(SOUND_ON_ALIAS, "sound", "boolean"), changes[SOUND_ON_ALIAS])
        checked.update(dict.fromkeys(SOUND_SWITCHES, sound_on))
    for name, value in changes.items():
        if name != SOUND_ON_ALIAS:
            checked[name] = check_setting_value(SETTINGS_BY_NAME[name], value)
    return checked


def get_profile(*, user: User) -> PlayerProfile:
    """The player's profile, created with the defaults on first use."""
    profile, _ = PlayerProfile.objects.get_or_create(user=user)
    return profile


def read_profile(*, user: User) -> PlayerProfile:
    """The player's profile for reading: a player who never changed a setting
    gets an unsaved profile with the defaults (a read creates nothing)."""
    return PlayerProfile.objects.filter(user=user).first() or PlayerProfile(user=user)


@transaction.atomic
def do_update_player_settings(*, user: User, changes: dict[str, Any]) -> PlayerProfile:
    """Store checked changes (``check_player_settings``); the other settings stay as they are."""
    profile = PlayerProfile.objects.select_for_update().filter(user=user).first() or get_profile(user=user)
    for name, value in changes.items():
        setattr(profile, name, value)
    profile.save(update_fields=[*changes, "updated_at"])
    return profile


def update_player_settings(*, user: User, changes: object) -> PlayerProfile:
    """Check ``changes`` (a request body) and store them; a refused change stores nothing."""
    return do_update_player_settings(user=user, changes=check_player_settings(changes=changes))


def describe_settings() -> list[dict[str, Any]]:
    """What a client needs to draw the settings panel, in the active language: each
    tab's ``name`` and ``label``, and its settings (``name``, ``label``, ``help``,
    ``type``, ``default``; a volume's ``min`` and ``max``; a choice's ``choices``,
    each ``value`` and ``label``, and whether it is ``nullable``)."""
    tabs: dict[str, list[dict[str, Any]]] = {}
    for setting in SETTINGS:
        field = setting_field(setting.name)
        entry: dict[str, Any] = {
            "name": setting.name,
            "label": capfirst(str(field.verbose_name)),
            "help": str(field.help_text),
            "type": setting.kind,
            "default": (field.get_default() or None) if setting.kind == "choice" else field.get_default(),
        }
        if setting.kind == "volume":
            entry.update({"min": 0, "max": VOLUME_MAX})
        elif setting.kind == "choice":
            entry["choices"] = [{"value": value, "label": str(label)} for value, label in field.choices or ()]
            entry["nullable"] = field.blank
        tabs.setdefault(setting.tab, []).append(entry)
    return [{"name": tab, "label": str(TAB_LABELS[tab]), "settings": entries} for tab, entries in tabs.items()]
