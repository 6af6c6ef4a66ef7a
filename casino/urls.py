"""URL routes: the player's web client at /, the API under /api/, the operator admin under /admin/."""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from casino.metrics_view import MetricsView
from casino.views import ApiRootView, HealthView, LivenessView
from client.views import client_page

urlpatterns = [
    path("", client_page, name="client"),
    path("admin/", admin.site.urls),
    path("api/", ApiRootView.as_view(), name="api-root"),
    path("api/health/", HealthView.as_view(), name="health"),
    path("api/health/live", LivenessView.as_view(), name="health-live"),
    path("metrics", MetricsView.as_view(), name="metrics"),  # Prometheus' default path
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("api/", include("casino.api_urls")),
    path("api/", include("games.urls")),
    path("api/", include("casino.cashier_urls")),
    path("api/", include("compliance.urls")),
]

handler404 = "casino.api.not_found"  # JSON under /api/

if settings.CASINO_BENCH_ENDPOINTS:  # `bench bets`' peer: never in production (casino/settings.py)
    from games.benchmarks.bare import BareInsertView

    urlpatterns.append(path("api/bench/bare/", BareInsertView.as_view(), name="bench-bare"))
