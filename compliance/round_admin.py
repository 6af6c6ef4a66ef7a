"""Operator admin for house-banked rounds: search by game number, table,
player and time; the event timeline with the replayed state beside each event
as staff may see it: a round in play as a spectator at its table sees it, the
whole round once it is closed, sealed values as ``(sealed)`` (``ledger.confidential.staff_reader``);
pause, resume and void with a reason (void asks for confirmation). Every
action is recorded as an ``operator.action`` event with the operator's identity
and runs the rounds' own services (``games.house.services.rounds``)."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from casino.admin_base import MalfunctionControlForm as RoundControlForm
from casino.admin_base import SafeLookups
from casino.errors import DomainError
from games.house.models import HouseRound
from games.house.round.state import RoundState, apply_round
from games.house.services import dealer
from games.house.store import round_stream
from ledger.confidential import staff_reader
from ledger.services import read_stream

ACTIONS = ("pause", "resume", "void")


def state_summary(state: RoundState) -> dict[str, Any]:
    """The replayed round state shown beside each event."""
    return {
        "version": state.version,
        "phase": state.phase,
        "deadline": state.deadline,
        "participants": sorted(state.participants),
    }


class RoundControlAdmin(SafeLookups, admin.ModelAdmin):
    list_display = ["game_number", "table", "game", "status", "phase", "participants", "staked", "returned",
                    "opened_at"]  # fmt: skip
    list_filter = ["status", "game", "table"]
    search_fields = ["=game_number", "table__code", "players__player__username", "=round_id"]
    date_hierarchy = "opened_at"
    list_select_related = ["table"]
    readonly_fields = ["controls", "timeline", "players_list"]
    fields = ["game_number", "table", "game", "status", "phase", "staked", "returned", "opened_at", "closed_at",
              "controls", "players_list", "timeline"]  # fmt: skip

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # a projection of the events; rounds change only through the controls below

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [str(name) for name in self.fields or ()]

    def has_control_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm("games.change_houseround"))

    @admin.display(description="operator controls")
    def controls(self, obj: HouseRound) -> SafeString:
        links = format_html_join(
            " ",
            '<a class="button" href="{}">{}</a>',
            ((reverse("admin:games_houseround_control", args=[obj.pk, a]), a) for a in ACTIONS),
        )
        return links

    @admin.display(description="players (game recall)")
    def players_list(self, obj: HouseRound) -> SafeString:
        return format_html_join(
            ", ",
            '<a href="/api/compliance/game-recall/{}/?player={}">{}</a>',
            ((obj.game_number, p.player_id, p.player) for p in obj.players.select_related("player")),
        )

    @admin.display(description="event timeline (replayed state beside each event)")
    def timeline(self, obj: HouseRound) -> SafeString:
        stream = round_stream(obj.round_id)
        events = read_stream(stream_id=stream)
        shown = staff_reader(stream)
        state = RoundState()
        rows = []
        for event in events:
            state = apply_round(state, event)
            rows.append(
                (event.version, event.type, event.recorded_at.isoformat(),
                 json.dumps(shown(event.type, event.data), sort_keys=True)[:2000],
                 json.dumps(state_summary(state)))
            )  # fmt: skip
        body = format_html_join(
            "", "<tr><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td><td><code>{}</code></td></tr>", rows
        )
        return format_html(
            '<table id="round-timeline"><tr><th>#</th><th>event</th><th>at</th><th>data</th>'
            "<th>state after</th></tr>{}</table>",
            body,
        )

    def get_urls(self) -> list[Any]:
        control = path(
            "<path:object_id>/control/<str:action>/",
            self.admin_site.admin_view(self.control_view),
            name="games_houseround_control",
        )
        return [control, *super().get_urls()]

    def control_view(self, request: HttpRequest, object_id: str, action: str) -> HttpResponse:
        if action not in ACTIONS or not self.has_control_permission(request):
            raise PermissionDenied
        round_row = HouseRound.objects.select_related("table").get(pk=object_id)
        form = RoundControlForm(request.POST if request.method == "POST" else None, action=action)
        if request.method == "POST" and form.is_valid():
            reason = form.cleaned_data.get("reason", "")
            try:
                self._run(request, round_row, action, reason)
            except DomainError as exc:
                self.message_user(request, f"{exc.code}: {exc.message}", messages.ERROR)
            else:
                self.message_user(request, f"{action} done for {round_row.game_number}")
            return HttpResponseRedirect(reverse("admin:games_houseround_change", args=[round_row.pk]))
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
