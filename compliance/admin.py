"""The compliance page of the admin: reports, handle/hold chart, export links."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from casino.admin_base import ReadOnlyAdmin
from compliance import round_admin  # noqa: F401  (registers the rounds' admin)
from compliance.charts import handle_hold_svg
from compliance.exports import public_key_hex
from compliance.models import ComplianceAccess
from compliance.reports import house_days


@admin.register(ComplianceAccess)
class ComplianceAdmin(ReadOnlyAdmin):
    """Not a table: its list page is the reports page."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm("compliance.view_reports"))

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.has_perm("compliance.view_reports"))

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        if not self.has_view_permission(request):
            from django.core.exceptions import PermissionDenied

            raise PermissionDenied
        days = max(1, min(366, int(request.GET.get("days", "30") or 30)))
        start = timezone.now().date() - timedelta(days=days - 1)
        report = house_days(start=start, days=days)
        today = date.today().isoformat()
        context = {
            **self.admin_site.each_context(request),
            "title": "Compliance reports",
            "report": report.as_json(),
            "chart": handle_hold_svg(report.rows),
            "days": days,
            "today": today,
            "start": start.isoformat(),
            "public_key": public_key_hex(),
            "can_export": request.user.has_perm("compliance.export_audit"),
        }
        return TemplateResponse(request, "admin/compliance/reports.html", context)
