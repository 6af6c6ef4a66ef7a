"""Operator admin for poker tables: configuration editable (open/close,
stakes, timers, rake); seats and hands are projections, read-only. A change
is saved by ``games.poker.services.update_table`` (the row locked, only the
changed settings written); the currency cannot change while anyone is seated
or a hand is open (``poker_currency_in_use``, shown on the field).

The table's page has the malfunction controls of the hand in play (RULES.md,
"Malfunction voids all pays and play"): pause and void with a reason, void
confirmed, resume. Each runs ``games.poker.services.operator.pause_hand/resume_hand/
void_hand`` and records the ``operator.action`` (``hand.<action>``) in the same
transaction; only users who may change poker tables (the operator role,
superusers) may use them.

Tournaments: created here (the level schedule and the payout JSON validated by
the model's ``clean``, i.e. the pure domain); the state is the services'. The
action "Cancel and refund" asks for a reason and runs
``games.poker.services.cancel_tournament`` for each selected tournament (every
entry refunded, ``operator.action`` ``tournament.cancel``); only users who may
change tournaments (the operator role, superusers) see it.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html_join
from django.utils.safestring import SafeString

from casino.admin_base import MalfunctionControlForm, ReadOnlyAdmin, ServiceSavedAdmin
from casino.errors import MAX_REASON, DomainError
from games.poker import services
from games.poker.models import PokerHand, PokerSeat, PokerTable
from games.poker.services.configure import SETTINGS
from games.poker.services.tournaments import ACTIVE
from games.poker.tournament_models import Tournament
from ledger.currencies import MINOR_UNITS

HAND_CONTROLS = ("pause", "resume", "void")
VOID_CONFIRM = "I confirm: void this hand and give every player back the chips they put in"


def hand_control(request: HttpRequest, table: PokerTable, action: str, reason: str) -> services.HandControlResult:
    """Pause, resume or void the table's hand (recorded as ``operator.action``)."""
    return services.operator_hand_control(table_id=table.pk, operator=request.user, action=action, reason=reason)


class PokerTableForm(forms.ModelForm):
    """The table's settings; the currency one the ledger knows, and kept while
    the table is in use (``check_currency_change``)."""

    currency = forms.ChoiceField(choices=[(c, c) for c in sorted(MINOR_UNITS)], initial="EUR")

    class Meta:
        model = PokerTable
        fields = SETTINGS

    def clean_currency(self) -> str:
        currency: str = self.cleaned_data["currency"]
        if self.instance.pk is not None:
            try:
                services.check_currency_change(table=self.instance, currency=currency)
            except DomainError as exc:
                raise forms.ValidationError(f"{exc.code}: {exc.message}", code=exc.code) from exc
        return currency


@admin.register(PokerTable)
class PokerTableAdmin(ServiceSavedAdmin):
    form = PokerTableForm
    list_display = ["code", "name", "variant", "small_blind", "big_blind", "currency", "is_open", "phase", "deadline"]
    list_filter = ["variant", "is_open"]
    search_fields = ["code", "name"]
    readonly_fields = ["phase", "phase_seq", "deadline", "current_hand_id", "hand_controls", "button_seat",
                       "hands_played", "created_at"]  # fmt: skip

    def save_model(self, request: HttpRequest, obj: PokerTable, form: Any, change: bool) -> None:
        if not change:
            super().save_model(request, obj, form, change)
            return
        # The settings the form changed, under the row lock (the currency checked again there).
        services.update_table(table_id=obj.pk, changes={name: getattr(obj, name) for name in form.changed_data})

    @admin.display(description="hand in play (malfunction)")
    def hand_controls(self, obj: PokerTable) -> SafeString | str:
        if obj.pk is None:
            return "-"
        offered = {services.HAND: ("pause", "void"), services.PAUSED: ("resume", "void")}.get(obj.phase, ())
        if not offered:
            return "no hand in play"
        return format_html_join(
            " ", '<a class="button" href="{}" id="hand-{}">{} the hand</a>',
            ((reverse("admin:games_pokertable_hand", args=[obj.pk, a]), a, a.capitalize()) for a in offered),
        )  # fmt: skip

    def get_urls(self) -> list[Any]:
        control = path(
            "<path:object_id>/hand/<str:action>/",
            self.admin_site.admin_view(self.hand_control_view),
            name="games_pokertable_hand",
        )
        return [control, *super().get_urls()]

    def hand_control_view(self, request: HttpRequest, object_id: str, action: str) -> HttpResponse:
        """GET: the form (reason; for void the confirmation); POST: run it."""
        table = PokerTable.objects.filter(pk=object_id).first()
        if action not in HAND_CONTROLS or table is None or not self.has_change_permission(request, table):
            raise PermissionDenied
        form = MalfunctionControlForm(
            request.POST if request.method == "POST" else None, action=action, confirm_label=VOID_CONFIRM
        )
        if request.method == "POST" and form.is_valid():
            try:
                result = hand_control(request, table, action, form.cleaned_data.get("reason", ""))
            except DomainError as exc:
                self.message_user(request, f"{exc.code}: {exc.message}", messages.ERROR)
            else:
                self.message_user(request, f"{table.code}: hand {result.hand_id}: {action} done")
            return HttpResponseRedirect(reverse("admin:games_pokertable_change", args=[table.pk]))
        hand = PokerHand.objects.filter(hand_id=table.current_hand_id).first() if table.current_hand_id else None
        context = {**self.admin_site.each_context(request), "title": f"{action.capitalize()} the hand at {table.code}",
                   "table": table, "hand": hand, "action": action, "form": form,
                   "opts": self.model._meta}  # fmt: skip
        return TemplateResponse(request, "admin/games/pokertable/hand_control.html", context)


@admin.register(PokerSeat)
class PokerSeatAdmin(ReadOnlyAdmin):
    list_display = ["table", "seat_number", "player", "stack", "sitting_out", "reserved_until"]
    search_fields = ["player__username", "table__code"]


@admin.register(PokerHand)
class PokerHandAdmin(ReadOnlyAdmin):
    list_display = ["hand_id", "table", "hand_number", "phase", "status", "pot", "rake", "started_at"]
    list_filter = ["status"]
    search_fields = ["hand_id"]


class CancelTournamentForm(forms.Form):
    reason = forms.CharField(
        max_length=MAX_REASON, help_text="Recorded with your identity in the operator's audit trail."
    )


@admin.register(Tournament)
class TournamentAdmin(admin.ModelAdmin):
    """Create tournaments (validated by ``Tournament.clean``: levels and payouts
    through the domain), watch them, cancel those still registering."""

    list_display = ["name", "kind", "state", "buy_in", "fee", "currency", "registered", "max_players", "start_at"]
    list_filter = ["kind", "state"]
    search_fields = ["name"]
    readonly_fields = [
        "state", "current_level", "started_at", "finished_at", "clock_elapsed", "clock_started_at", "entrants",
        "players_left", "hand_for_hand", "hand_for_hand_round", "final_table", "bust_groups", "created_at",
        "updated_at",
    ]  # fmt: skip
    actions = ["cancel_and_refund"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Tournament]:
        return (
            super()
            .get_queryset(request)
            .annotate(registered_count=Count("entries", filter=Q(entries__state__in=ACTIVE)))
        )

    @admin.display(description="registered", ordering="registered_count")
    def registered(self, obj: Tournament) -> int:
        return int(getattr(obj, "registered_count", 0))

    def get_readonly_fields(self, request: HttpRequest, obj: Tournament | None = None) -> list[str]:
        # Money terms are fixed once created (entries keep what they paid; the pool has one currency).
        fixed = ["kind", "currency", "buy_in", "fee"] if obj is not None else []
        return [*self.readonly_fields, *fixed]

    def has_delete_permission(self, request: HttpRequest, obj: Tournament | None = None) -> bool:
        return False  # money may be in its pool: cancel instead

    @admin.action(description="Cancel and refund (asks for a reason)", permissions=["change"])
    def cancel_and_refund(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> HttpResponse | None:
        form = CancelTournamentForm(request.POST if "apply" in request.POST else None)
        if form.is_valid():
            for tournament_id in queryset.values_list("pk", flat=True):
                try:
                    result = services.cancel_tournament(
                        tournament_id=tournament_id, operator=request.user, reason=form.cleaned_data["reason"],
                        now=timezone.now(),
                    )  # fmt: skip
                except DomainError as exc:
                    self.message_user(request, f"{tournament_id}: {exc.code}: {exc.message}", messages.ERROR)
                else:
                    self.message_user(request, f"{tournament_id}: cancelled, {result.refunded} entries refunded")
            return None
        return render(
            request,
            "admin/games/tournament/cancel.html",
            {**self.admin_site.each_context(request), "form": form, "tournaments": queryset,
             "action_checkbox_name": ACTION_CHECKBOX_NAME, "title": "Cancel and refund tournaments",
             "opts": self.model._meta},
        )  # fmt: skip
