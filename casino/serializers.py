"""Platform serializers."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from casino.models import PlayerProfile


class PlayerSettingsSerializer(serializers.ModelSerializer[PlayerProfile]):
    class Meta:
        model = PlayerProfile
        fields = ["hide_chat", "show_side_bets", "sound_on"]


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
