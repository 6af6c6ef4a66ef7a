"""Platform serializers."""

from __future__ import annotations

from rest_framework import serializers

from casino.models import PlayerProfile


class PlayerSettingsSerializer(serializers.ModelSerializer[PlayerProfile]):
    class Meta:
        model = PlayerProfile
        fields = ["hide_chat", "show_side_bets", "sound_on"]


class MeSerializer(serializers.Serializer[PlayerProfile]):
    username = serializers.CharField(source="user.username")
    settings = PlayerSettingsSerializer(source="*")


class LoginSerializer(serializers.Serializer[dict[str, str]]):
    username = serializers.CharField()
    password = serializers.CharField(style={"input_type": "password"}, trim_whitespace=False)


class TokenSerializer(serializers.Serializer[dict[str, str]]):
    token = serializers.CharField()
    username = serializers.CharField()
