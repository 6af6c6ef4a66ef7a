"""API routes of the platform and the apps."""

from __future__ import annotations

from typing import Any

from django.urls import path

from casino.player_views import (
    MeView,
    PlayerSettingsDescriptionView,
    PlayerSettingsView,
    TokenLoginView,
    TokenLogoutAllView,
    TokenLogoutView,
    WsTicketView,
)

urlpatterns: list[Any] = [
    path("auth/token/", TokenLoginView.as_view(), name="auth-token"),
    path("auth/logout/", TokenLogoutView.as_view(), name="auth-logout"),
    path("auth/logout-all/", TokenLogoutAllView.as_view(), name="auth-logout-all"),
    path("auth/ws-ticket/", WsTicketView.as_view(), name="auth-ws-ticket"),
    path("me/", MeView.as_view(), name="me"),
    path("me/settings/", PlayerSettingsView.as_view(), name="me-settings"),
    path("me/settings/describe/", PlayerSettingsDescriptionView.as_view(), name="me-settings-describe"),
]
