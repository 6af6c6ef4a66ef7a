"""Operator admin for tables (the full operator site is built on this)."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from games.models import HouseRound, HouseTable, PlayerRound, TableSeat


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
