"""The project's admin site (``casino.apps.CasinoAdminConfig`` makes it Django's
default ``admin.site``): every model admin registered on it, Django's own and
third parties' (auth, axes, knox) included, takes URL lookups only as
``casino.admin_base.SafeLookups`` allows them, so no querystring answers 500.

Its index page is the operator's dashboard (``compliance.dashboard``; docs/live.md,
"Operator's dashboard"), the model list folded below it. The page refreshes its
dashboard every ``CASINO_DASHBOARD_REFRESH_SECONDS`` from ``dashboard/`` (the same
fragment, server-rendered), and shows each staff user only what their permissions
allow (``sees``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib import admin
from django.db.models.base import ModelBase
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import URLPattern, URLResolver, path
from django.utils import timezone

from casino.admin_base import SafeLookups

if TYPE_CHECKING:
    from compliance.dashboard import Sees

DASHBOARD_FRAGMENT = "admin/casino/dashboard_body.html"


def sees(user: Any) -> Sees:
    """What the staff ``user`` may see on the dashboard (``compliance.dashboard.Sees``): the
    tables of a family with its view permission; money (handle, hold, rake, amounts
    in alerts) with the ledger's or the reports' permission; the seals with the
    ledger's; payments and players' limits with the cashier's and the limits' view
    permissions. Superusers see everything."""
    from compliance.dashboard import Sees

    def may(*perms: str) -> bool:
        return any(user.has_perm(perm) for perm in perms)

    return Sees(
        house_tables=may("games.view_housetable", "games.change_housetable"),
        poker_tables=may("games.view_pokertable", "games.change_pokertable"),
        money=may("ledger.view_transfer", "compliance.view_reports"),
        ledger=may("ledger.view_seal"),
        cashier=may("casino.view_cashiertransaction"),
        responsible_gaming=may("casino.view_responsiblegaming"),
    )


class CasinoAdminSite(admin.AdminSite):
    site_header = "Casino operations"
    site_title = "Casino operations"
    index_title = "Operator's dashboard"
    index_template = "admin/casino/dashboard.html"

    def dashboard_context(self, request: HttpRequest) -> dict[str, Any]:
        from compliance.dashboard import operator_dashboard

        return {
            "dashboard": operator_dashboard(now=timezone.now(), sees=sees(request.user)),
            "dashboard_refresh_ms": int(settings.CASINO_DASHBOARD_REFRESH_SECONDS * 1000),
        }

    def index(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> TemplateResponse:
        return super().index(request, {**self.dashboard_context(request), **(extra_context or {})})

    def dashboard_view(self, request: HttpRequest) -> TemplateResponse:
        """The dashboard alone (what the index page fetches to refresh itself)."""
        response = TemplateResponse(request, DASHBOARD_FRAGMENT, self.dashboard_context(request))
        response["X-Dashboard"] = "1"  # not the login page a lapsed session is sent to
        response["Cache-Control"] = "no-store"
        return response

    def get_urls(self) -> list[URLResolver | URLPattern]:
        return [path("dashboard/", self.admin_view(self.dashboard_view), name="dashboard"), *super().get_urls()]

    def register(
        self,
        model_or_iterable: ModelBase | Iterable[ModelBase],
        admin_class: type[admin.ModelAdmin[Any]] | None = None,
        **options: Any,
    ) -> None:
        admin_class = admin_class or admin.ModelAdmin
        if not issubclass(admin_class, SafeLookups):
            admin_class = type(admin_class.__name__, (SafeLookups, admin_class), {"__module__": admin_class.__module__})
        super().register(model_or_iterable, admin_class, **options)
