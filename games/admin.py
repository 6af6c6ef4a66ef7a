"""Operator admin for tables (the full operator site is built on this)."""

from __future__ import annotations

from django.contrib import admin

from games.models import HouseTable, TableSeat


@admin.register(HouseTable)
class HouseTableAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "game", "hand_mode", "currency", "is_open", "phase", "deadline"]
    list_filter = ["game", "hand_mode", "is_open"]
    search_fields = ["code", "name"]
    readonly_fields = ["current_round_id", "phase", "phase_seq", "deadline", "config_version", "created_at"]


@admin.register(TableSeat)
class TableSeatAdmin(admin.ModelAdmin):
    list_display = ["table", "player", "seat_number", "joined_at"]
    search_fields = ["player__username", "table__code"]
