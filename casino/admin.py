"""Operator admin for platform models."""

from __future__ import annotations

from django.contrib import admin

from casino.models import PlayerProfile


@admin.register(PlayerProfile)
class PlayerProfileAdmin(admin.ModelAdmin):
    list_display = ["user", "hide_chat", "show_side_bets", "sound_on", "updated_at"]
    search_fields = ["user__username"]
    readonly_fields = ["created_at", "updated_at"]
