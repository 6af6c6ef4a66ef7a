"""Operator admin for tables (the full operator site is built on this)."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from casino.errors import DomainError
from games import dealer
from games.models import HouseRound, HouseTable, PlayerRound, TableSeat


def _each_table(
    modeladmin: admin.ModelAdmin[HouseTable], request: HttpRequest, queryset: QuerySet[HouseTable], act: object
) -> None:
    for table in queryset:
        try:
            act(table)  # type: ignore[operator]
            modeladmin.message_user(request, f"{table.code}: done")
        except DomainError as exc:
            modeladmin.message_user(request, f"{table.code}: {exc.code}: {exc.message}", level=messages.ERROR)


@admin.action(description="Pause the current round (malfunction)")
def pause_rounds(
    modeladmin: admin.ModelAdmin[HouseTable], request: HttpRequest, queryset: QuerySet[HouseTable]
) -> None:
    actor = f"operator:{request.user.pk}"
    reason = f"malfunction reported by operator {request.user}"
    _each_table(
        modeladmin, request, queryset, lambda t: dealer.operator_pause(table_id=t.pk, actor=actor, reason=reason)
    )


@admin.action(description="Resume the paused round")
def resume_rounds(
    modeladmin: admin.ModelAdmin[HouseTable], request: HttpRequest, queryset: QuerySet[HouseTable]
) -> None:
    actor = f"operator:{request.user.pk}"
    _each_table(modeladmin, request, queryset, lambda t: dealer.operator_resume(table_id=t.pk, actor=actor))


@admin.action(description="Void the current round (malfunction voids all pays and play)")
def void_rounds(modeladmin: admin.ModelAdmin[HouseTable], request: HttpRequest, queryset: QuerySet[HouseTable]) -> None:
    actor = f"operator:{request.user.pk}"
    reason = f"malfunction: voided by operator {request.user}; every wager is returned"
    _each_table(
        modeladmin, request, queryset, lambda t: dealer.operator_void(table_id=t.pk, actor=actor, reason=reason)
    )


@admin.register(HouseTable)
class HouseTableAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "game", "hand_mode", "currency", "is_open", "phase", "deadline"]
    list_filter = ["game", "hand_mode", "is_open"]
    search_fields = ["code", "name"]
    readonly_fields = [
        "current_round_id",
        "phase",
        "phase_seq",
        "deadline",
        "public_seq",
        "config_version",
        "created_at",
    ]
    actions = [pause_rounds, resume_rounds, void_rounds]


@admin.register(TableSeat)
class TableSeatAdmin(admin.ModelAdmin):
    list_display = ["table", "player", "seat_number", "joined_at"]
    search_fields = ["player__username", "table__code"]


@admin.register(HouseRound)
class HouseRoundAdmin(admin.ModelAdmin):
    """Round summaries are projections of the event store: read-only here."""

    list_display = ["game_number", "table", "phase", "status", "participants", "staked", "returned", "opened_at"]
    list_filter = ["game", "status"]
    search_fields = ["game_number"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(PlayerRound)
class PlayerRoundAdmin(HouseRoundAdmin):
    list_display = ["game_number", "player", "staked", "returned", "net", "status", "created_at"]
    list_filter = ["game", "status"]
    search_fields = ["game_number", "player__username"]


# Poker ring-game tables (games/poker/admin.py).
from games.poker import admin as _poker_admin  # noqa: E402,F401
