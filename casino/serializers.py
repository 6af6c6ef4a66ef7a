"""Platform serializers."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from casino.models import VOLUME_MAX, Language, PlayerProfile
from casino.players import PLAYER_SETTINGS, SOUND_ON_ALIAS


class PlayerSettingsSerializer(serializers.ModelSerializer[PlayerProfile]):
    """The stored settings (``casino.players.SETTINGS``); a PATCH sends any of them (checked by
    ``casino.players.check_player_settings``). ``sound_on``: both sound switches at once."""

    language = serializers.ChoiceField(
        choices=Language.choices, allow_null=True, required=False, help_text="null: the device's Accept-Language"
    )
    dealer_voice_volume = serializers.IntegerField(min_value=0, max_value=VOLUME_MAX, required=False)
    game_sound_volume = serializers.IntegerField(min_value=0, max_value=VOLUME_MAX, required=False)
    sound_on = serializers.BooleanField(
        required=False,
        help_text="Before issue 37 the one sound switch: read, true when the dealer's voice or the game sound "
        "is on; sent, sets both.",
    )

    class Meta:
        model = PlayerProfile
        fields = [*PLAYER_SETTINGS, SOUND_ON_ALIAS]

    def to_representation(self, instance: PlayerProfile) -> dict[str, Any]:
        return {
            **{name: getattr(instance, name) for name in PLAYER_SETTINGS},
            "language": instance.language or None,
            SOUND_ON_ALIAS: instance.dealer_voice_on or instance.game_sound_on,
        }


# A field named ``label``: DRF's metaclass takes declared fields out of the class, so it does not
# shadow ``Field.label`` (the type checker sees the class attribute).
class SettingChoiceSerializer(serializers.Serializer[dict[str, str]]):
    value = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]


class SettingDescriptionSerializer(serializers.Serializer[dict[str, Any]]):
    name = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]
    help = serializers.CharField()
    type = serializers.ChoiceField(choices=["boolean", "volume", "choice"])
    default = serializers.JSONField()
    min = serializers.IntegerField(required=False)
    max = serializers.IntegerField(required=False)
    choices = SettingChoiceSerializer(many=True, required=False)
    nullable = serializers.BooleanField(required=False)


class SettingsTabSerializer(serializers.Serializer[dict[str, Any]]):
    name = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]
    settings = SettingDescriptionSerializer(many=True)


class SettingsDescriptionSerializer(serializers.Serializer[dict[str, Any]]):
    language = serializers.CharField(help_text="the language of the labels (en or fr)")
    tabs = SettingsTabSerializer(many=True)


class MeSerializer(serializers.Serializer[PlayerProfile]):
    username = serializers.CharField(source="user.username")
    settings = PlayerSettingsSerializer(source="*")


#: The longest username Django's user model holds (150): a longer one names no user,
#: and django-axes' record of a failed login (varchar 255) could not hold it (a 500).
USERNAME_MAX_LENGTH = 150


class LoginSerializer(serializers.Serializer[dict[str, str]]):
    username = serializers.CharField(max_length=USERNAME_MAX_LENGTH)
    password = serializers.CharField(style={"input_type": "password"}, trim_whitespace=False)


class TokenSerializer(serializers.Serializer[dict[str, Any]]):
    token = serializers.CharField()
    username = serializers.CharField()
    expires_in = serializers.IntegerField(help_text="seconds until the token expires (CASINO_TOKEN_TTL_SECONDS)")


class WsTicketSerializer(serializers.Serializer[dict[str, Any]]):
    ticket = serializers.CharField(help_text="single use: /ws/...?ticket=<ticket>")
    expires_in = serializers.IntegerField(help_text="seconds the ticket stays valid (CASINO_WS_TICKET_SECONDS)")
