"""API routes contributed by the apps (games, ledger, platform)."""

from __future__ import annotations

from typing import Any

urlpatterns: list[Any] = []
