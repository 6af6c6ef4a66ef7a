"""Player authentication and profile endpoints (thin: validate, call a service, render)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import authenticate, logout
from django.utils import translation
from drf_spectacular.utils import extend_schema
from knox.models import AuthToken
from rest_framework import status
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.api import request_user
from casino.auth import (
    LoginLockedOut,
    issue_token,
    issue_ws_ticket,
    lockout_seconds,
    revoke_all_tokens,
    revoke_token,
)
from casino.errors import DomainError
from casino.i18n import player_language
from casino.players import describe_settings, read_profile, update_player_settings
from casino.serializers import (
    LoginSerializer,
    MeSerializer,
    PlayerSettingsSerializer,
    SettingsDescriptionSerializer,
    TokenSerializer,
    WsTicketSerializer,
)
from casino.throttling import LoginThrottle


class InvalidCredentials(DomainError, code="invalid_credentials", http_status=401):
    """Unknown username or wrong password."""


class TokenLoginView(APIView):
    """Exchange a username and password for an API token (``Authorization: Token <key>``).

    The token expires ``CASINO_TOKEN_TTL_SECONDS`` after login. Wrong
    credentials: 401 ``invalid_credentials``. django-axes counts the failures
    per username and per client address: at ``CASINO_LOGIN_FAILURE_LIMIT``
    either is locked out for ``CASINO_LOGIN_COOLOFF_SECONDS`` and every login
    for it answers 429 ``login_locked_out`` (with ``Retry-After``), even with
    the right password."""

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
            if getattr(request._request, "axes_locked_out", False):
                raise LoginLockedOut(retry_after_seconds=lockout_seconds())
            raise InvalidCredentials()
        token = issue_token(user=user)
        return Response(
            {"token": token, "username": user.get_username(), "expires_in": settings.CASINO_TOKEN_TTL_SECONDS}
        )


class TokenLogoutView(APIView):
    """Revoke the API token of this request (other devices' tokens stay valid);
    with a session instead, end the session."""

    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={204: None})
    def post(self, request: Request) -> Response:
        request_user(request)
        if isinstance(request.auth, AuthToken):
            revoke_token(token=request.auth)
        else:
            logout(request._request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokenLogoutAllView(APIView):
    """Revoke every API token of the caller, on every device (and end this session, if any)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={204: None})
    def post(self, request: Request) -> Response:
        revoke_all_tokens(user_id=int(request_user(request).pk))
        if not isinstance(request.auth, AuthToken):
            logout(request._request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class WsTicketView(APIView):
    """A websocket ticket: open ``/ws/...?ticket=<ticket>`` within ``expires_in``
    seconds (``CASINO_WS_TICKET_SECONDS``). One handshake consumes it; every
    connection needs a new one (docs/auth.md, "Websockets")."""

    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={200: WsTicketSerializer})
    def post(self, request: Request) -> Response:
        ticket = issue_ws_ticket(user_id=int(request_user(request).pk))
        return Response({"ticket": ticket, "expires_in": settings.CASINO_WS_TICKET_SECONDS})


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
        description="Refusals (400), each changing nothing: invalid_settings (the body is not a JSON object), "
        "unknown_setting (names that are not settings: details.settings), invalid_setting (a value not allowed: "
        "details.setting, details.allowed).",
    )
    def patch(self, request: Request) -> Response:
        profile = update_player_settings(user=request_user(request), changes=request.data)
        return Response(PlayerSettingsSerializer(profile).data)


class PlayerSettingsDescriptionView(APIView):
    """The settings panel in the player's language (their profile's, else ``Accept-Language``):
    its tabs (seed 000: general, video, sound), and each setting's label, help, type, default
    and allowed values (a volume's range, a choice's values with their labels)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: SettingsDescriptionSerializer})
    def get(self, request: Request) -> Response:
        user = request_user(request)
        language = player_language(user_id=int(user.pk), accept_language=request.headers.get("Accept-Language", ""))
        with translation.override(language):
            tabs = describe_settings()
        return Response({"language": language, "tabs": tabs}, headers={"Content-Language": language})
