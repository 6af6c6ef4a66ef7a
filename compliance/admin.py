"""The compliance page of the admin: reports, handle/hold chart, export links."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from casino.admin_base import ReadOnlyAdmin
from compliance import round_admin  # noqa: F401  (registers the rounds' admin)
from compliance.charts import charts
from compliance.exports import public_key_hex
from compliance.models import ComplianceAccess
from compliance.reports import HOUSE_LINES, house_days
from compliance.views import MAX_REPORT_DAYS
from ledger.currencies import display_money


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
        days = window_days(request.GET.get("days", ""))
        today = timezone.now().date()  # UTC (settings.TIME_ZONE): the reports' days are UTC days
        start = today - timedelta(days=days - 1)
        report = house_days(start=start, days=days)
        context = {
            **self.admin_site.each_context(request),
            "title": "Compliance reports",
            "tables": [
                {
                    "title": title,
                    "columns": [HOUSE_DAY_HEADINGS[c] for c in columns],
                    "rows": [shown_row(row, columns) for row in report.rows],
                }
                for title, columns in HOUSE_DAY_TABLES
            ],
            "chart": charts(report.rows, start=start, days=days, default_currency=settings.CASINO_DEFAULT_CURRENCY),
            "days": days,
            "day_choices": DAY_CHOICES,
            "today": today.isoformat(),
            "tomorrow": (today + timedelta(days=1)).isoformat(),
            "start": start.isoformat(),
            "public_key": public_key_hex(),
            "can_export": request.user.has_perm("compliance.export_audit"),
        }
        return TemplateResponse(request, "admin/compliance/reports.html", context)


DEFAULT_DAYS, DAY_CHOICES = 30, (7, 30, 90, 366)
#: The page's column headings for the house-days report's columns.
HOUSE_DAY_HEADINGS = {
    "day": "Day (UTC)", "currency": "Currency", "handle": "Handle (stakes)", "payouts": "Payouts (winnings paid)",
    "hold": "Hold", "hold_pct": "Hold %", "progressive_seeding": "Pool seeding",
    "progressive_contributions": "Pool contributions", "pool_hits": "Pool hits", "rake": "Poker rake",
    "tournament_fees": "Tournament fees", "prize_pool_overlay": "Tournament overlay", "other": "Other",
}  # fmt: skip


#: The page shows the house-days report as two tables: the hold, then the other lines.
HOUSE_DAY_TABLES = (
    ("Handle, payouts and hold", ["day", "currency", "handle", "payouts", "hold", "hold_pct"]),
    ("Progressive pools, rake and tournaments: their own lines, never payouts", ["day", "currency", *HOUSE_LINES[2:]]),
)


def window_days(raw: str) -> int:
    """The page's window: ``?days=`` from 1 to 366 (anything else: 30)."""
    return int(raw) if raw.isdigit() and len(raw) <= 3 and 1 <= int(raw) <= MAX_REPORT_DAYS else DEFAULT_DAYS


def shown_row(row: dict[str, Any], columns: list[str]) -> list[str]:
    """A house-days row as the page shows it: amounts with ``display_money``, hold % with its sign."""
    shown = []
    for column in columns:
        value = row[column]
        if column == "hold_pct":
            shown.append(f"{value} %" if value else "")
        elif isinstance(value, int) and not isinstance(value, bool):
            shown.append(display_money(value, row["currency"]))
        else:
            shown.append(str(value))
    return shown
