"""Operator admin for platform models."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.safestring import SafeString

from casino.admin_base import MoneyFields, ReadOnlyAdmin, SafeLookups, money_table
from casino.cashier import operator_decide, operator_refund
from casino.errors import DomainError
from casino.models import CashierTransaction, PlayerProfile, ResponsibleGaming
from ledger.currencies import display_money


@admin.register(PlayerProfile)
class PlayerProfileAdmin(SafeLookups, admin.ModelAdmin):
    list_display = [
        "user", "language", "hide_chat", "show_side_bets", "video_quality", "dealer_voice_on",
        "dealer_voice_volume", "game_sound_on", "game_sound_volume", "animation_on", "updated_at",
    ]  # fmt: skip
    list_filter = ["language", "video_quality"]
    search_fields = ["user__username"]
    readonly_fields = ["created_at", "updated_at"]


@admin.register(ResponsibleGaming)
class ResponsibleGamingAdmin(ReadOnlyAdmin):
    """Players' own limits: operators see them; only the player sets them (API)."""

    list_display = ["user", "currency", "exclusion", "excluded_until", "session_limit_minutes", "updated_at"]
    search_fields = ["user__username"]
    exclude = ["limits"]  # shown as limits_view: each limit with its currency

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return ["limits_view" if name == "limits" else name for name in super().get_readonly_fields(request, obj)]

    @admin.display(description="deposit and loss limits")
    def limits_view(self, obj: ResponsibleGaming) -> SafeString:
        rows = [
            (currency, kind.replace("_", " per "), display_money(entry.get("amount"), currency) or "none",
             (display_money(entry.get("pending"), currency) or "none") if entry.get("pending_from") else "",
             entry.get("pending_from") or "")
            for currency, kinds in sorted((obj.limits or {}).items()) for kind, entry in sorted(kinds.items())
        ]  # fmt: skip
        return money_table(rows, ("currency", "limit", "in force", "pending (a higher one or none)", "from"),
                           html_id="player-limits")  # fmt: skip


class RejectForm(forms.Form):
    reason = forms.CharField(max_length=200, help_text="Told to the player and recorded with your identity.")


class RefundForm(forms.Form):
    reason = forms.CharField(max_length=200, help_text="The provider's refund reference; recorded with your identity.")


@admin.register(CashierTransaction)
class CashierTransactionAdmin(MoneyFields, ReadOnlyAdmin):
    """Deposits and withdrawals. Operators approve or reject (recorded as
    ``operator.action`` events with their identity); payment is the provider's.
    A deposit in ``refund_due`` (filter "state") is refunded through the
    provider, then recorded here with the action "Refund through the provider"."""

    list_display = ["id", "player", "kind", "amount", "state", "external_reference", "created_at"]
    money_fields = {"amount": "currency"}
    list_filter = ["state", "kind", "currency"]
    search_fields = ["=id", "external_reference", "player__username"]
    actions = ["approve", "reject", "refund"]
    date_hierarchy = "created_at"

    def has_decide_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm("casino.decide_cashiertransaction"))

    def _each(self, request: HttpRequest, queryset: QuerySet[CashierTransaction], act: Any, done_label: str) -> None:
        done = 0
        for txn_id in queryset.values_list("pk", flat=True):
            try:
                with transaction.atomic():
                    act(txn_id)
                done += 1
            except DomainError as exc:
                self.message_user(request, f"{txn_id}: {exc.code}: {exc.message}", messages.ERROR)
        self.message_user(request, f"{done_label} {done} transaction(s)")

    def _decide(
        self, request: HttpRequest, queryset: QuerySet[CashierTransaction], *, approve: bool, reason: str
    ) -> None:
        def act(txn_id: Any) -> None:
            operator_decide(
                transaction_id=txn_id, approve=approve, operator=request.user, reason=reason, now=timezone.now()
            )

        self._each(request, queryset, act, "approved" if approve else "rejected")

    @admin.action(description="Approve selected transactions", permissions=["decide"])
    def approve(self, request: HttpRequest, queryset: QuerySet[CashierTransaction]) -> None:
        self._decide(request, queryset, approve=True, reason="")

    @admin.action(description="Reject selected transactions (asks for a reason)", permissions=["decide"])
    def reject(self, request: HttpRequest, queryset: QuerySet[CashierTransaction]) -> HttpResponse | None:
        form = RejectForm(request.POST if "apply" in request.POST else None)
        if form.is_valid():
            self._decide(request, queryset, approve=False, reason=form.cleaned_data["reason"])
            return None
        return render(
            request,
            "admin/casino/reject_cashier.html",
            {**self.admin_site.each_context(request), "form": form, "transactions": queryset,
             "action_checkbox_name": ACTION_CHECKBOX_NAME, "title": "Reject cashier transactions"},
        )  # fmt: skip

    @admin.action(description="Refund through the provider (refund_due deposits; asks for the reference)",
                  permissions=["decide"])  # fmt: skip
    def refund(self, request: HttpRequest, queryset: QuerySet[CashierTransaction]) -> HttpResponse | None:
        form = RefundForm(request.POST if "apply" in request.POST else None)
        if form.is_valid():
            reason = form.cleaned_data["reason"]

            def act(txn_id: Any) -> None:
                operator_refund(transaction_id=txn_id, operator=request.user, reason=reason, now=timezone.now())

            self._each(request, queryset, act, "refunded")
            return None
        return render(
            request,
            "admin/casino/reject_cashier.html",
            {**self.admin_site.each_context(request), "form": form, "transactions": queryset,
             "action_checkbox_name": ACTION_CHECKBOX_NAME, "title": "Refund cashier deposits through the provider",
             "action_name": "refund", "submit_label": "Record the refund"},
        )  # fmt: skip
