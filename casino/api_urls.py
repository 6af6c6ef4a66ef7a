"""API routes of the platform and the apps."""

from __future__ import annotations

from typing import Any

from django.urls import path

from casino.player_views import MeView, PlayerSettingsView, TokenLoginView, TokenLogoutView

urlpatterns: list[Any] = [
    path("auth/token/", TokenLoginView.as_view(), name="auth-token"),
    path("auth/logout/", TokenLogoutView.as_view(), name="auth-logout"),
    path("me/", MeView.as_view(), name="me"),
    path("me/settings/", PlayerSettingsView.as_view(), name="me-settings"),
]
