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

Tournaments: created here or from a template (``TournamentTemplateAdmin``'s
action runs ``games.poker.tournament.services.create_from_template``; templates and
tournaments are validated by the models' ``clean``, i.e. the pure domain); the
state is the services'. The tournament's page shows its tables and entries
read-only. The actions pause (asks for a reason), resume and cancel (asks for a
reason; refund before the start, the tournament's cancel policy while running)
run ``pause_tournament``, ``resume_tournament`` and ``cancel_tournament`` for
each selected tournament, each recorded as ``operator.action``
(``tournament.<action>``); only users who may change tournaments (the operator
role, superusers) see them, and only users who may add tournaments create one
from a template. The compliance role views everything and acts on nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from casino.admin_base import (
    MalfunctionControlForm,
    MoneyFields,
    NoWrites,
    ReadOnlyAdmin,
    SafeLookups,
    ServiceSavedAdmin,
)
from casino.errors import MAX_REASON, DomainError
from games.poker import services
from games.poker.admin_story import hand_story
from games.poker.models import PokerHand, PokerSeat, PokerTable
from games.poker.services.configure import SETTINGS
from games.poker.tournament import services as tournament_services
from games.poker.tournament.models import CancelPolicy, Tournament, TournamentEntry, TournamentKind, TournamentTemplate
from games.poker.tournament.services import TournamentControlResult
from games.poker.tournament.services.registration import ACTIVE
from games.tables.admin_controls import control_url, controlled
from ledger.currencies import MINOR_UNITS, display_money

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
class PokerTableAdmin(MoneyFields, ServiceSavedAdmin):
    form = PokerTableForm
    list_display = ["code", "name", "variant", "small_blind", "big_blind", "currency", "is_open", "phase", "deadline"]
    money_fields = dict.fromkeys(("small_blind", "big_blind", "ante", "buy_in_min", "buy_in_max", "rake_minimum",
                                  "rake_cap"), "currency")  # fmt: skip
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
        return [control_url(self, "hand", self.hand_control_view, "games_pokertable_hand"), *super().get_urls()]

    def hand_control_view(self, request: HttpRequest, object_id: str, action: str) -> HttpResponse:
        """GET: the form (reason; for void the confirmation); POST: run it."""
        table = controlled(self, request, PokerTable, object_id, action, HAND_CONTROLS)
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
class PokerSeatAdmin(MoneyFields, ReadOnlyAdmin):
    list_display = ["table", "seat_number", "player", "stack", "sitting_out", "reserved_until"]
    money_fields = {"stack": "table.currency"}  # chips: one a minor unit (XXX at a tournament's table)
    list_select_related = ["table", "player"]
    search_fields = ["player__username", "table__code"]


@admin.register(PokerHand)
class PokerHandAdmin(MoneyFields, ReadOnlyAdmin):
    """A hand's summary and its event timeline as staff may see it now
    (``ledger.confidential.staff_reader``): a hand in play as a spectator at the
    table sees it (no hole card before showdown), the stored events once it is
    over, sealed values as ``(sealed)``."""

    list_display = ["hand_id", "table", "hand_number", "phase", "status", "pot", "rake", "started_at"]
    money_fields = {"pot": "currency", "rake": "currency"}
    list_filter = ["status"]
    search_fields = ["hand_id", "table__code"]  # not the players (JSON: SafeLookups)

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """The hand's story page (``games.poker.admin_story``) in place of Django's read-only form."""
        hand = self.get_object(request, object_id)
        if hand is None:
            raise Http404(f"no poker hand {object_id!r}")
        # A projection is never written through the admin: the page has no form, its controls post elsewhere.
        if not self.has_view_permission(request, hand) or request.method not in ("GET", "HEAD"):
            raise PermissionDenied
        context = {
            **self.admin_site.each_context(request),
            "title": f"Poker hand {hand.hand_id}",
            "hand": hand,
            "story": hand_story(hand),
            "pot": display_money(hand.pot, hand.currency),
            "rake": display_money(hand.rake, hand.currency),
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/games/poker_hand_story.html", context)


class TournamentReasonForm(forms.Form):
    reason = forms.CharField(
        max_length=MAX_REASON, help_text="Recorded with your identity in the operator's audit trail."
    )


class ResumeTournamentForm(forms.Form):
    reason = forms.CharField(max_length=MAX_REASON, required=False, help_text="Optional; recorded with your identity.")


# The tournament actions that ask first: (title, the button, what it does).
TOURNAMENT_CONTROLS = {
    "pause_tournaments": (
        "Pause tournaments", "Pause",
        "The level clock stops, every hand in play is paused (nobody may act) and no table deals until the "
        "tournament is resumed. The players are told the reason.",
    ),
    "resume_tournaments": (
        "Resume tournaments", "Resume",
        "The level clock runs on from where it stopped; paused hands resume with the time their actor had left, "
        "the other tables deal after the pause between hands.",
    ),
    "cancel_and_refund": (
        "Cancel tournaments", "Cancel",
        "Not started: every registered player gets their buy-in and fee back. Running or paused: every hand in "
        "play is voided, the tables close and the tournament's cancel policy pays (refund: every buy-in and fee "
        "back; chip count: places already reached get their prize, the rest of the pool goes to the players left "
        "in proportion to their chips, fees kept). This cannot be undone.",
    ),
}  # fmt: skip


class TournamentTableInline(NoWrites, admin.TabularInline):
    """The tournament's tables, read-only (the services move players and chips)."""

    model = PokerTable
    fk_name = "tournament"
    fields = ("table_number", "code", "is_open", "players", "phase", "hands_played", "current_hand_id")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True
    ordering = ["table_number", "pk"]
    verbose_name_plural = "tables"

    @admin.display(description="players (chips)")
    def players(self, obj: PokerTable) -> str:
        seats = obj.seats.select_related("player").order_by("seat_number")
        return ", ".join(f"{s.seat_number}: {s.player} ({display_money(s.stack, obj.currency)})" for s in seats) or "-"


class TournamentEntryInline(MoneyFields, NoWrites, admin.TabularInline):
    """The entries, read-only (registration, eliminations and prizes are the services')."""

    model = TournamentEntry
    fields = ("player", "state", "place", "tied", "prize", "registered_at", "eliminated_at")
    money_fields = {"prize": "tournament.currency"}
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ["place", "registered_at", "pk"]
    verbose_name_plural = "entries"


def _on_tables(
    request: HttpRequest, control: Callable[..., TournamentControlResult], done: str
) -> Callable[[int, str], str]:
    """``run`` for the pause and resume actions: ``control`` (``pause_tournament``
    or ``resume_tournament``) by the admin user, answered ``<done>, <n> tables``."""

    def run(tournament_id: int, reason: str) -> str:
        result = control(tournament_id=tournament_id, operator=request.user, reason=reason, now=timezone.now())
        return f"{done}, {result.tables} tables"

    return run


@admin.register(Tournament)
class TournamentAdmin(MoneyFields, SafeLookups, admin.ModelAdmin):
    """Create tournaments (validated by ``Tournament.clean``: levels and payouts
    through the domain), watch them (state, level, players, tables, entries),
    pause, resume and cancel them through the services."""

    list_display = ["name", "kind", "state", "current_level", "players", "hand_for_hand", "buy_in", "fee",
                    "currency", "registered", "max_players", "start_at", "started_at", "finished_at"]  # fmt: skip
    list_filter = ["kind", "state", "hand_for_hand", "cancel_policy"]
    money_fields = {"buy_in": "currency", "fee": "currency"}
    search_fields = ["name"]
    readonly_fields = [
        "state", "current_level", "started_at", "finished_at", "clock_elapsed", "clock_started_at", "entrants",
        "players_left", "hand_for_hand", "hand_for_hand_round", "final_table", "bust_groups", "template",
        "created_at", "updated_at",
    ]  # fmt: skip
    inlines = [TournamentTableInline, TournamentEntryInline]
    actions = ["pause_tournaments", "resume_tournaments", "cancel_and_refund"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Tournament]:
        return (
            super()
            .get_queryset(request)
            .annotate(registered_count=Count("entries", filter=Q(entries__state__in=ACTIVE)))
        )

    @admin.display(description="registered", ordering="registered_count")
    def registered(self, obj: Tournament) -> int:
        return int(getattr(obj, "registered_count", 0))

    @admin.display(description="players left / entrants", ordering="players_left")
    def players(self, obj: Tournament) -> str:
        return f"{obj.players_left} / {obj.entrants}" if obj.started_at else "-"

    def get_readonly_fields(self, request: HttpRequest, obj: Tournament | None = None) -> list[str]:
        # Money terms are fixed once created (entries keep what they paid; the pool has one currency).
        fixed = ["kind", "currency", "buy_in", "fee"] if obj is not None else []
        return self._as_money([*self.readonly_fields, *fixed])

    def get_inlines(self, request: HttpRequest, obj: Tournament | None = None) -> list[Any]:
        return list(self.inlines) if obj is not None else []

    def has_delete_permission(self, request: HttpRequest, obj: Tournament | None = None) -> bool:
        return False  # money may be in its pool: cancel instead

    def _control(self, request: HttpRequest, queryset: QuerySet[Tournament], action: str,
                 form_class: type[forms.Form], run: Any) -> HttpResponse | None:  # fmt: skip
        """The action's form first (the reason); then ``run(tournament_id, reason)`` for
        each selected tournament, a refusal shown as ``code: message`` for that one."""
        form = form_class(request.POST if "apply" in request.POST else None)
        if form.is_valid():
            for tournament_id in queryset.order_by("pk").values_list("pk", flat=True):
                try:
                    done = run(tournament_id, form.cleaned_data.get("reason", ""))
                except DomainError as exc:
                    self.message_user(request, f"{tournament_id}: {exc.code}: {exc.message}", messages.ERROR)
                else:
                    self.message_user(request, f"{tournament_id}: {done}")
            return None
        title, button, explanation = TOURNAMENT_CONTROLS[action]
        return render(
            request,
            "admin/games/tournament/control.html",
            {**self.admin_site.each_context(request), "form": form, "tournaments": queryset, "action": action,
             "button": button, "explanation": explanation, "action_checkbox_name": ACTION_CHECKBOX_NAME,
             "title": title, "opts": self.model._meta},
        )  # fmt: skip

    @admin.action(description="Pause (asks for a reason)", permissions=["change"])
    def pause_tournaments(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> HttpResponse | None:
        run = _on_tables(request, tournament_services.pause_tournament, "paused")
        return self._control(request, queryset, "pause_tournaments", TournamentReasonForm, run)

    @admin.action(description="Resume", permissions=["change"])
    def resume_tournaments(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> HttpResponse | None:
        run = _on_tables(request, tournament_services.resume_tournament, "resumed")
        return self._control(request, queryset, "resume_tournaments", ResumeTournamentForm, run)

    @admin.action(
        description="Cancel (asks for a reason): refund if not started, else by its cancel policy",
        permissions=["change"],
    )
    def cancel_and_refund(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> HttpResponse | None:
        def run(tournament_id: int, reason: str) -> str:
            result = tournament_services.cancel_tournament(
                tournament_id=tournament_id, operator=request.user, reason=reason, now=timezone.now()
            )
            started, policy = (
                Tournament.objects.filter(pk=tournament_id).values_list("started_at", "cancel_policy").get()
            )
            if started is not None and policy == CancelPolicy.CHIP_COUNT:
                return "cancelled, the pool paid by chip count (fees kept)"
            return f"cancelled, {result.refunded} entries refunded"

        return self._control(request, queryset, "cancel_and_refund", TournamentReasonForm, run)


class CreateFromTemplateForm(forms.Form):
    name = forms.CharField(
        max_length=80, required=False, help_text="Blank: the template's name (each selected template its own)."
    )
    start_at = forms.DateTimeField(
        required=False,
        help_text="Scheduled templates: when the tournament starts (YYYY-MM-DD HH:MM, the site's time zone). "
        "A Sit & Go starts when full.",
    )

    def __init__(self, *args: Any, needs_start: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["start_at"].required = needs_start


@admin.register(TournamentTemplate)
class TournamentTemplateAdmin(MoneyFields, SafeLookups, admin.ModelAdmin):
    """Reusable tournament definitions: list, create, edit (validated by
    ``TournamentTemplate.clean``: the levels and the payouts through the domain,
    e.g. ``tournament_payouts_not_100`` shown on the field); the action creates a
    registering tournament from each selected template (``create_from_template``)."""

    list_display = ["name", "kind", "currency", "buy_in", "fee", "starting_chips", "max_players", "table_seats",
                    "guarantee", "cancel_policy", "tournaments_made"]  # fmt: skip
    list_filter = ["kind", "currency", "cancel_policy"]
    money_fields = dict.fromkeys(("buy_in", "fee", "guarantee"), "currency")
    search_fields = ["name"]
    readonly_fields = ["created_at"]
    actions = ["create_tournament"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[TournamentTemplate]:
        return super().get_queryset(request).annotate(made=Count("tournaments"))

    @admin.display(description="tournaments", ordering="made")
    def tournaments_made(self, obj: TournamentTemplate) -> int:
        return int(getattr(obj, "made", 0))

    def has_delete_permission(self, request: HttpRequest, obj: TournamentTemplate | None = None) -> bool:
        return False  # tournaments name their template: keep it (edit or stop using it)

    @admin.action(description="Create a tournament from this template", permissions=["add"])
    def create_tournament(self, request: HttpRequest, queryset: QuerySet[TournamentTemplate]) -> HttpResponse | None:
        needs_start = queryset.filter(kind=TournamentKind.SCHEDULED).exists()
        form = CreateFromTemplateForm(request.POST if "apply" in request.POST else None, needs_start=needs_start)
        if form.is_valid():
            for template in queryset.order_by("pk"):
                try:
                    tournament = tournament_services.create_from_template(
                        template_id=template.pk, operator=request.user, name=form.cleaned_data["name"],
                        start_at=form.cleaned_data["start_at"], now=timezone.now(),
                    )  # fmt: skip
                except DomainError as exc:
                    self.message_user(request, f"{template.name}: {exc.code}: {exc.message}", messages.ERROR)
                else:
                    url = reverse("admin:games_tournament_change", args=[tournament.pk])
                    self.message_user(request, format_html('{}: created <a href="{}">{}</a> (registering)',
                                                           template.name, url, tournament))  # fmt: skip
            return None
        return render(
            request,
            "admin/games/tournamenttemplate/create_tournament.html",
            {**self.admin_site.each_context(request), "form": form, "templates": queryset,
             "action_checkbox_name": ACTION_CHECKBOX_NAME, "title": "Create tournaments from templates",
             "opts": self.model._meta},
        )  # fmt: skip
