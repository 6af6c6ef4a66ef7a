"""Routes of the compliance API (mounted under /api/): audit exports, the export key,
regulator reports, game recall."""

from __future__ import annotations

from typing import Any

from django.urls import path

import casino.converters  # noqa: F401 (registers the <text:...> route converter)
from compliance.views import ExportKeyView, ExportView, GameRecallView, ReportView

urlpatterns: list[Any] = [
    path("compliance/exports/", ExportView.as_view(), name="compliance-export"),
    path("compliance/export-key/", ExportKeyView.as_view(), name="compliance-export-key"),
    path("compliance/reports/<text:name>/", ReportView.as_view(), name="compliance-report"),
    path("compliance/game-recall/<text:game_number>/", GameRecallView.as_view(), name="compliance-game-recall"),
]
