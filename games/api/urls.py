"""Routes of the play API (mounted under /api/)."""

from __future__ import annotations

from typing import Any

urlpatterns: list[Any] = []
