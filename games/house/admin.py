"""Operator admin for tables: create and configure them with a real form (one
field per setting of the game, validated; ``games.house.forms``), every change a new
immutable configuration version shown as the table's configuration history,
open and close wired to the dealer, and the round malfunction controls.

Saving never goes through ``form.save()``: ``games.house.services.tables`` locks the
row, writes the configuration columns only, records the version and the
``operator.action`` event. Open, close, pause, resume and void need
``games.change_housetable`` (operators, superusers); compliance only views.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

from django.contrib import admin, messages
from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from casino.admin_base import MoneyFields, NoWrites, ReadOnlyAdmin, SafeLookups, ServiceSavedAdmin, money_table
from casino.audit import RECORDED_BY_SERVICE
from casino.errors import DomainError
from games.house.forms import TableForm, table_form
from games.house.models import HouseRound, HouseTable, PlayerRound, TableConfigVersion, TableSeat
from games.house.rules.registry import GAMES
from games.house.rules.table_config import DURATION_FIELDS
from games.house.services import dealer
from games.house.services.tables import configure_table, create_table
from games.tables.admin_controls import control_url, controlled
from ledger.currencies import display_money

TABLE_CONTROLS = ("open", "close")


def _each_table(
    modeladmin: admin.ModelAdmin[HouseTable],
    request: HttpRequest,
    queryset: QuerySet[HouseTable],
    act: Callable[[HouseTable], object],
) -> None:
    for table in queryset:
        try:
            act(table)
            modeladmin.message_user(request, f"{table.code}: done")
        except DomainError as exc:
            modeladmin.message_user(request, f"{table.code}: {exc.code}: {exc.message}", level=messages.ERROR)


def _control(action: str, table: HouseTable, request: HttpRequest) -> object:
    if action == "open":
        return dealer.operator_open(table_id=table.pk, operator=request.user)
    return dealer.operator_close(table_id=table.pk, operator=request.user)


@admin.action(description="Open the table (the dealer starts dealing rounds)", permissions=["change"])
def open_tables(modeladmin: admin.ModelAdmin[HouseTable], request: HttpRequest, queryset: QuerySet[HouseTable]) -> None:
    _each_table(modeladmin, request, queryset, lambda t: _control("open", t, request))


@admin.action(description="Close the table (the current round finishes, no new one)", permissions=["change"])
def close_tables(
    modeladmin: admin.ModelAdmin[HouseTable], request: HttpRequest, queryset: QuerySet[HouseTable]
) -> None:
    _each_table(modeladmin, request, queryset, lambda t: _control("close", t, request))


def _round_control(request: HttpRequest, table: HouseTable, action: str, reason: str) -> None:
    """Pause, resume or void the table's round (recorded as ``operator.action``)."""
    dealer.operator_round_control(table_id=table.pk, operator=request.user, action=action, reason=reason)


@admin.action(description="Pause the current round (malfunction)", permissions=["change"])
def pause_rounds(
    modeladmin: admin.ModelAdmin[HouseTable], request: HttpRequest, queryset: QuerySet[HouseTable]
) -> None:
    reason = f"malfunction reported by operator {request.user}"
    _each_table(modeladmin, request, queryset, lambda t: _round_control(request, t, "pause", reason))


@admin.action(description="Resume the paused round", permissions=["change"])
def resume_rounds(
    modeladmin: admin.ModelAdmin[HouseTable], request: HttpRequest, queryset: QuerySet[HouseTable]
) -> None:
    _each_table(modeladmin, request, queryset, lambda t: _round_control(request, t, "resume", ""))


@admin.action(description="Void the current round (malfunction voids all pays and play)", permissions=["change"])
def void_rounds(modeladmin: admin.ModelAdmin[HouseTable], request: HttpRequest, queryset: QuerySet[HouseTable]) -> None:
    reason = f"malfunction: voided by operator {request.user}; every wager is returned"
    _each_table(modeladmin, request, queryset, lambda t: _round_control(request, t, "void", reason))


def _json(value: Any) -> SafeString:
    return format_html("<pre>{}</pre>", json.dumps(value, indent=1, sort_keys=True))


def _json_display(field: str, description: str) -> Callable[[Any, HouseTable], SafeString]:
    """A table's JSON field ``field`` shown read-only (the admin's display ``description``)."""

    @admin.display(description=description)
    def display(admin_: Any, obj: HouseTable) -> SafeString:
        return _json(getattr(obj, field))

    return display


# Shown read-only: the dealer's projection and the table's identity after creation.
_STATE_FIELDS = ["is_open", "phase", "phase_seq", "deadline", "current_round_id", "public_seq", "config_version",
                 "created_at", "updated_at"]  # fmt: skip


@admin.register(HouseTable)
class HouseTableAdmin(ServiceSavedAdmin):
    """Create (choose the game first), configure, open and close tables."""

    list_display = ["code", "name", "game", "hand_mode", "currency", "is_open", "phase", "config_version", "deadline"]
    list_filter = ["game", "hand_mode", "is_open"]
    search_fields = ["code", "name"]
    actions = [open_tables, close_tables, pause_rounds, resume_rounds, void_rounds]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # rounds, seats and ledger accounts point at tables; close one instead

    def _game(self, request: HttpRequest, obj: HouseTable | None) -> str | None:
        if obj is not None:
            return obj.game
        chosen = request.POST.get("game") or request.GET.get("game")
        return chosen if chosen in GAMES else None

    def _form_class(self, request: HttpRequest, obj: HouseTable | None) -> type[TableForm]:
        chosen = self._game(request, obj)
        if chosen is None:
            raise PermissionDenied  # add_view asks for the game first; a forged game is refused
        return table_form(chosen)

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is not None and not self.has_change_permission(request, obj):
            return [
                (None, {"fields": ["code", "name", "game", "hand_mode", "currency", "max_seats"]}),
                ("Configuration", {"fields": ["limits_view", "pay_tables_view", *DURATION_FIELDS,
                                              "progressives_view", "wheel_view"]}),
                ("Dealer", {"fields": _STATE_FIELDS}),
                ("Configuration history", {"fields": ["config_history"]}),
            ]  # fmt: skip
        sets = self._form_class(request, obj).fieldsets(adding=obj is None)
        if obj is not None:
            sets.insert(0, ("Identity and dealer", {"fields": ["code", "game", "currency", "table_controls",
                                                               *_STATE_FIELDS]}))  # fmt: skip
            sets.append(("Configuration history", {"fields": ["config_history"]}))
        return sets

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return []
        shown = ["code", "game", "currency", "table_controls", "config_history", *_STATE_FIELDS]
        if not self.has_change_permission(request, obj):
            shown += ["name", "hand_mode", "max_seats", "limits_view", "pay_tables_view", *DURATION_FIELDS,
                      "progressives_view", "wheel_view"]  # fmt: skip
        return shown

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        if obj is None or self.has_change_permission(request, obj):
            kwargs["form"] = self._form_class(request, obj)
        return super().get_form(request, obj, change=change, **kwargs)

    def add_view(self, request: HttpRequest, form_url: str = "", extra_context: dict[str, Any] | None = None) -> Any:
        if self._game(request, None) is None:
            if not self.has_add_permission(request):
                raise PermissionDenied
            context = {**self.admin_site.each_context(request), "title": "Add table: choose the game",
                       "games": [(code, g.title) for code, g in GAMES.items()], "opts": self.model._meta}  # fmt: skip
            return TemplateResponse(request, "admin/games/housetable/choose_game.html", context)
        return super().add_view(request, form_url, extra_context)

    def save_model(self, request: HttpRequest, obj: HouseTable, form: ModelForm[HouseTable], change: bool) -> None:
        assert isinstance(form, TableForm)
        reason, now = form.cleaned_data.get("reason", ""), timezone.now()
        if change:
            version = configure_table(
                table_id=obj.pk, operator=request.user, config=form.table_config, reason=reason,
                expected_version=form.cleaned_data.get("base_version"), now=now,
            )  # fmt: skip
            obj._recorded = version is not None  # type: ignore[attr-defined]
        else:
            table = create_table(
                operator=request.user, code=obj.code, game_code=obj.game, currency=obj.currency,
                config=form.table_config, reason=reason, now=now,
            )  # fmt: skip
            obj.pk = table.pk
            obj._recorded = True  # type: ignore[attr-defined]

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        return None  # no related objects; the service saved everything

    def _log(self, request: HttpRequest, obj: HouseTable, flag: int, message: Any) -> LogEntry | None:
        """Django's history line, marked as already recorded: the service wrote the
        ``operator.action`` (with the version), so the generic receiver adds none."""
        if not getattr(obj, "_recorded", False):
            return None  # nothing changed: no version, no event, no history line
        entry = LogEntry(
            user_id=cast(int, request.user.pk), content_type_id=ContentType.objects.get_for_model(obj).pk,
            object_id=str(obj.pk), object_repr=str(obj)[:200], action_flag=flag,
            change_message=json.dumps(message) if isinstance(message, list) else message,
        )  # fmt: skip
        setattr(entry, RECORDED_BY_SERVICE, True)
        entry.save()
        return entry

    def log_addition(self, request: HttpRequest, obj: Any, message: Any) -> Any:
        return self._log(request, obj, ADDITION, message)

    def log_change(self, request: HttpRequest, obj: Any, message: Any) -> Any:
        return self._log(request, obj, CHANGE, message)

    # --- read-only displays --------------------------------------------------------------------

    @admin.display(description="limits")
    def limits_view(self, obj: HouseTable) -> SafeString:
        rows = [
            (
                spot,
                display_money((limit or {}).get("min"), obj.currency),
                display_money((limit or {}).get("max"), obj.currency),
            )
            for spot, limit in sorted(obj.limits.items())
        ]
        return money_table(rows, ("betting spot", "minimum", "maximum"), html_id="table-limits")  # fmt: skip

    pay_tables_view = _json_display("pay_tables", "pay tables")
    progressives_view = _json_display("progressives", "STAX progressives")
    wheel_view = _json_display("wheel", "Bonus Spin wheel")

    @admin.display(description="open / close")
    def table_controls(self, obj: HouseTable) -> SafeString:
        action = "close" if obj.is_open else "open"
        url = reverse("admin:games_housetable_control", args=[obj.pk, action])
        return format_html('<a class="button" href="{}" id="table-{}">{} the table</a>', url, action,
                           action.capitalize())  # fmt: skip

    @admin.display(description="configuration history (newest first)")
    def config_history(self, obj: HouseTable) -> SafeString:
        versions = TableConfigVersion.objects.filter(table=obj).order_by("-version")[:20]
        rows = format_html_join(
            "", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
            ((v.version, v.created_at.isoformat(timespec="seconds"), v.actor, v.reason,
              ", ".join(sorted(v.changes)) or "(initial)") for v in versions),
        )  # fmt: skip
        full = reverse("admin:games_tableconfigversion_changelist") + f"?table__id__exact={obj.pk}"
        return format_html(
            '<table id="config-history"><tr><th>version</th><th>at</th><th>by</th><th>reason</th><th>changed</th></tr>'
            '{}</table><p>In force now: version {}. <a href="{}">Every version with its full configuration</a></p>',
            rows, obj.config_version, full,
        )  # fmt: skip

    # --- open / close from the table's page ------------------------------------------------------

    def get_urls(self) -> list[Any]:
        return [control_url(self, "control", self.control_view, "games_housetable_control"), *super().get_urls()]

    def control_view(self, request: HttpRequest, object_id: str, action: str) -> HttpResponse:
        """GET: confirm; POST: open or close through the dealer (``table.open``/``table.close``)."""
        table = controlled(self, request, HouseTable, object_id, action, TABLE_CONTROLS)
        if request.method == "POST":
            try:
                _control(action, table, request)
            except DomainError as exc:
                self.message_user(request, f"{exc.code}: {exc.message}", messages.ERROR)
            else:
                self.message_user(request, f"{table.code}: {action} done")
            return HttpResponseRedirect(reverse("admin:games_housetable_change", args=[table.pk]))
        context = {**self.admin_site.each_context(request), "title": f"{action.capitalize()} table {table.code}",
                   "table": table, "action": action, "opts": self.model._meta}  # fmt: skip
        return TemplateResponse(request, "admin/games/housetable/control.html", context)


@admin.register(TableConfigVersion)
class TableConfigVersionAdmin(ReadOnlyAdmin):
    """The configuration history: immutable versions, read-only for everyone."""

    list_display = ["table", "version", "created_at", "actor", "created_by", "reason", "changed"]
    list_filter = ["table"]
    search_fields = ["table__code", "reason", "actor"]
    date_hierarchy = "created_at"
    list_select_related = ["table", "created_by"]

    @admin.display(description="changed")
    def changed(self, obj: TableConfigVersion) -> str:
        return ", ".join(sorted(obj.changes)) or "(initial)"


@admin.register(TableSeat)
class TableSeatAdmin(SafeLookups, NoWrites, admin.ModelAdmin):
    """Seats are projections of the seat events (``house_seat.taken``/``left``): read-only here."""

    list_display = ["table", "player", "seat_number", "joined_at"]
    search_fields = ["player__username", "table__code"]


@admin.register(HouseRound)
class HouseRoundAdmin(MoneyFields, SafeLookups, NoWrites, admin.ModelAdmin):
    """Round summaries are projections of the event store: read-only here."""

    list_display = ["game_number", "table", "phase", "status", "participants", "staked", "returned", "opened_at"]
    list_filter = ["game", "status"]
    # Named columns only (the summary is JSON: SafeLookups): the game number, the round id, the table's code.
    search_fields = ["game_number", "=round_id", "table__code"]
    money_fields = {"staked": "currency", "returned": "currency", "net": "currency", "balance_before": "currency",
                    "balance_after": "currency"}  # fmt: skip


@admin.register(PlayerRound)
class PlayerRoundAdmin(HouseRoundAdmin):
    list_display = ["game_number", "player", "staked", "returned", "net", "status", "created_at"]
    list_filter = ["game", "status"]
    search_fields = ["game_number", "player__username", "table__code"]


# Poker ring-game tables (games/poker/admin.py).
