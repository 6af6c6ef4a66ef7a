"""Operator admin for house-banked rounds (docs/compliance.md, "Rounds in the
admin"): the list (search by game number, table, player and time; empty rounds
hidden unless asked for; money with its currency) and each round's page, which
tells its story (``compliance.round_story``: the cards as cards, one line in
words per event with its data behind a toggle, the players' bets, decisions and
payouts, the commitment and, after the end, its proof) as staff may see it: a
round in play as a spectator at its table sees it, the whole round once it is
closed, sealed values as ``(sealed)``. Pause, resume and void with a reason
(void asks for confirmation), offered and accepted only where they apply
(``games.house.round.dealer.check_operator_control``) and only to a role with
``games.change_houseround``. Every action is recorded as an ``operator.action``
event with the operator's identity and runs the rounds' own services
(``games.house.services.dealer.operator_round_control``)."""

from __future__ import annotations

from datetime import UTC
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.views.main import SEARCH_VAR
from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef, QuerySet, Sum
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from casino.admin_base import MalfunctionControlForm as RoundControlForm
from casino.admin_base import SafeLookups
from casino.errors import DomainError
from compliance.round_story import round_story
from games.house.models import HouseRound, PlayerRound
from games.house.round.dealer import OPERATOR_CONTROLS, check_operator_control
from games.house.services import dealer
from games.house.store.streams import load_round
from ledger.currencies import display_money

WITH_BETS, EMPTY, ALL = "with_bets", "empty", "all"


class PlayersFilter(admin.SimpleListFilter):
    """Rounds where a player staked (the default), rounds nobody staked in
    (demo tables deal every 20 s with nobody seated), or all of them. A search
    (``?q=``: a game number, a round id) looks in all of them unless the filter
    is chosen: a round looked for by its number is found, empty or not."""

    title = "players"
    parameter_name = "players"

    def __init__(self, request: HttpRequest, params: Any, model: Any, model_admin: Any) -> None:
        super().__init__(request, params, model, model_admin)
        self.default = ALL if request.GET.get(SEARCH_VAR) else WITH_BETS

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(WITH_BETS, "with bets (default)"), (EMPTY, "empty"), (ALL, "all (default when searching)")]

    def choices(self, changelist: Any) -> Any:
        chosen = self.value() or self.default
        for value, label in self.lookup_choices:
            yield {
                "selected": chosen == value,
                "query_string": changelist.get_query_string({self.parameter_name: value}),
                "display": label,
            }

    def queryset(self, request: HttpRequest, queryset: QuerySet[HouseRound]) -> QuerySet[HouseRound]:
        chosen = self.value() or self.default
        if chosen == ALL:
            return queryset
        staked = Exists(PlayerRound.objects.filter(round=OuterRef("pk"), staked__gt=0))
        return queryset.filter(staked) if chosen == WITH_BETS else queryset.exclude(staked)


class RoundControlAdmin(SafeLookups, admin.ModelAdmin):
    # Narrow enough for 1280 px with the navigation and the filters beside it (no sideways scrolling).
    list_display = ["game_number", "table_code", "game_code", "state", "players", "staked_money", "returned_money",
                    "opened"]  # fmt: skip
    change_list_template = "admin/compliance/round_list.html"
    list_filter = [PlayersFilter, "status", "game", "table"]
    search_fields = ["=game_number", "table__code", "players__player__username", "=round_id"]
    date_hierarchy = "opened_at"
    list_select_related = ["table"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # a projection of the events; rounds change only through the controls below

    def has_control_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm("games.change_houseround"))

    @admin.display(description="table", ordering="table__code")
    def table_code(self, obj: HouseRound) -> str:
        return obj.table.code

    @admin.display(description="game", ordering="game")
    def game_code(self, obj: HouseRound) -> SafeString:
        """The game's short code (``UTH``), its title on hover: the title wraps into three lines."""
        return format_html('<abbr title="{}">{}</abbr>', obj.get_game_display(), obj.game.upper())

    @admin.display(description="status", ordering="status")
    def state(self, obj: HouseRound) -> str:
        """The status, with the phase while the round is open."""
        return f"{obj.status}: {obj.phase}" if obj.status == "open" else obj.status

    @admin.display(description="players", ordering="participants")
    def players(self, obj: HouseRound) -> int:
        return obj.participants

    @admin.display(description="opened", ordering="opened_at")
    def opened(self, obj: HouseRound) -> str:
        return obj.opened_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M")

    @admin.display(description="staked", ordering="staked")
    def staked_money(self, obj: HouseRound) -> str:
        return display_money(obj.staked, obj.currency)

    @admin.display(description="returned", ordering="returned")
    def returned_money(self, obj: HouseRound) -> str:
        return display_money(obj.returned, obj.currency)

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """The round's story page (in place of Django's read-only form)."""
        round_row = self.get_object(request, object_id)
        if round_row is None:
            raise Http404(f"no round {object_id!r}")
        # A projection is never written through the admin: the page has no form, its controls post elsewhere.
        if not self.has_view_permission(request, round_row) or request.method not in ("GET", "HEAD"):
            raise PermissionDenied
        story = round_story(round_row)
        staked, returned = round_row.staked, round_row.returned
        if round_row.closed_at is None:  # the round's totals are projected at its end: in play, its players' so far
            totals = round_row.players.aggregate(staked=Sum("staked"), returned=Sum("returned"))
            staked, returned = totals["staked"] or 0, totals["returned"] or 0
        may_control = self.has_control_permission(request)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Round {round_row.game_number}",
            "round": round_row,
            "story": story,
            "staked": display_money(staked, round_row.currency),
            "returned": display_money(returned, round_row.currency),
            "hold": display_money(staked - returned, round_row.currency),
            "controls": [
                (action, reverse("admin:games_houseround_control", args=[round_row.pk, action]))
                for action in (story.controls if may_control else ())
            ],
            "opts": self.model._meta,
            "original": round_row,
            "has_view_permission": True,
        }
        return TemplateResponse(request, "admin/compliance/round_story.html", context)

    def get_urls(self) -> list[Any]:
        control = path(
            "<path:object_id>/control/<str:action>/",
            self.admin_site.admin_view(self.control_view),
            name="games_houseround_control",
        )
        return [control, *super().get_urls()]

    def control_view(self, request: HttpRequest, object_id: str, action: str) -> HttpResponse:
        """The form of one control and its POST. A control the round's state does
        not admit (``round_over``, ``round_paused``, ``round_not_paused``) is
        refused before anything runs, its form not even shown: back to the round
        with the refusal's code."""
        if action not in OPERATOR_CONTROLS or not self.has_control_permission(request):
            raise PermissionDenied
        round_row = self.get_object(request, object_id)
        if round_row is None:
            raise Http404(f"no round {object_id!r}")
        back = HttpResponseRedirect(reverse("admin:games_houseround_change", args=[round_row.pk]))
        try:
            check_operator_control(load_round(round_row.round_id), action)
        except DomainError as refused:
            self.message_user(request, f"{refused.code}: {refused.message}", messages.ERROR)
            return back
        form = RoundControlForm(request.POST if request.method == "POST" else None, action=action)
        if request.method == "POST" and form.is_valid():
            reason = form.cleaned_data.get("reason", "")
            try:
                self._run(request, round_row, action, reason)
            except DomainError as exc:
                self.message_user(request, f"{exc.code}: {exc.message}", messages.ERROR)
            else:
                self.message_user(request, f"{action} done for {round_row.game_number}")
            return back
        context = {
            **self.admin_site.each_context(request),
            "title": f"{action.capitalize()} round {round_row.game_number}",
            "round": round_row,
            "action": action,
            "form": form,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/compliance/round_control.html", context)

    def _run(self, request: HttpRequest, round_row: HouseRound, action: str, reason: str) -> None:
        dealer.operator_round_control(table_id=round_row.table_id, operator=request.user, action=action,
                                      reason=reason, round_id=round_row.round_id)  # fmt: skip


# games/admin.py registers a plain read-only list of rounds; this one adds the
# timeline and the operator controls, so it takes the place of that one.
if admin.site.is_registered(HouseRound):
    admin.site.unregister(HouseRound)
admin.site.register(HouseRound, RoundControlAdmin)
