"""Operator admin for poker tables: configuration editable (open/close,
stakes, timers, rake); seats and hands are projections, read-only."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from games.poker.models import PokerHand, PokerSeat, PokerTable


@admin.register(PokerTable)
class PokerTableAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "variant", "small_blind", "big_blind", "currency", "is_open", "phase", "deadline"]
    list_filter = ["variant", "is_open"]
    search_fields = ["code", "name"]
    readonly_fields = ["phase", "phase_seq", "deadline", "current_hand_id", "button_seat", "hands_played", "created_at"]


class ReadOnlyAdmin(admin.ModelAdmin):
    """Projections of the event store and the ledger: changed only by the services."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(PokerSeat)
class PokerSeatAdmin(ReadOnlyAdmin):
    list_display = ["table", "seat_number", "player", "stack", "sitting_out", "reserved_until"]
    search_fields = ["player__username", "table__code"]


@admin.register(PokerHand)
class PokerHandAdmin(ReadOnlyAdmin):
    list_display = ["hand_id", "table", "hand_number", "phase", "status", "pot", "rake", "started_at"]
    list_filter = ["status"]
    search_fields = ["hand_id"]
