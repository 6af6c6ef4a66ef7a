"""Player authentication and profile endpoints (thin: validate, call a service, render)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import authenticate
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.authtoken.models import Token
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import AnonRateThrottle
from rest_framework.views import APIView

from casino.api import request_user
from casino.errors import DomainError
from casino.players import read_profile, update_player_settings
from casino.serializers import LoginSerializer, MeSerializer, PlayerSettingsSerializer, TokenSerializer


class InvalidCredentials(DomainError, code="invalid_credentials", http_status=401):
    """Unknown username or wrong password."""


class LoginThrottle(AnonRateThrottle):
    rate = "20/min"


class TokenLoginView(APIView):
    """Exchange a username and password for an API token (``Authorization: Token <key>``)."""

    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []
    throttle_classes = [LoginThrottle]

    @extend_schema(request=LoginSerializer, responses={200: TokenSerializer})
    def post(self, request: Request) -> Response:
        serializer = LoginSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        user = authenticate(
            request._request,
            username=serializer.validated_data["username"],
            password=serializer.validated_data["password"],
        )
        if user is None or not user.is_active:
            raise InvalidCredentials()
        token, _ = Token.objects.get_or_create(user=user)
        return Response({"token": token.key, "username": user.get_username()})


class TokenLogoutView(APIView):
    """Revoke the caller's API token."""

    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={204: None})
    def post(self, request: Request) -> Response:
        Token.objects.filter(user=request_user(request)).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeView(APIView):
    """The caller's own profile and settings."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: MeSerializer})
    def get(self, request: Request) -> Response:
        return Response(MeSerializer(read_profile(user=request_user(request))).data)


class PlayerSettingsView(APIView):
    """Read or change the caller's stored settings (applied at once, on every device)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: PlayerSettingsSerializer})
    def get(self, request: Request) -> Response:
        return Response(PlayerSettingsSerializer(read_profile(user=request_user(request))).data)

    @extend_schema(
        request=PlayerSettingsSerializer,
        responses={200: PlayerSettingsSerializer},
        description="Refusals (400): invalid_settings (the body is not a JSON object), unknown_setting "
        "(a name that is not a setting), invalid_request (a value of the wrong type).",
    )
    def patch(self, request: Request) -> Response:
        if not isinstance(request.data, dict):
            raise DomainError("the settings must be a JSON object of setting names", code="invalid_settings")
        unknown = sorted(set(request.data) - set(PlayerSettingsSerializer.Meta.fields))
        if unknown:
            raise DomainError(f"unknown settings: {', '.join(unknown)}", code="unknown_setting")
        serializer = PlayerSettingsSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        profile = update_player_settings(user=request_user(request), changes=dict(serializer.validated_data))
        return Response(PlayerSettingsSerializer(profile).data)
