"""Read-only operator views of the ledger: history is changed by no one, here
least of all (money moves through the services, with their events)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from ledger.models import Account, Event, Hold, Seal, StatementLine, Transfer


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Event)
class EventAdmin(ReadOnlyAdmin):
    list_display = ["id", "stream_id", "version", "type", "schema_version", "recorded_at"]
    list_filter = ["type"]
    search_fields = ["stream_id", "type"]
    ordering = ["-id"]


@admin.register(Account)
class AccountAdmin(ReadOnlyAdmin):
    list_display = ["id", "key", "kind", "owner", "currency", "balance"]
    list_filter = ["kind", "currency"]
    search_fields = ["key", "owner"]


@admin.register(Transfer)
class TransferAdmin(ReadOnlyAdmin):
    list_display = ["id", "debit_account_id", "credit_account_id", "amount", "currency", "kind", "event_id"]
    list_filter = ["kind", "currency"]
    ordering = ["-id"]


@admin.register(Hold)
class HoldAdmin(ReadOnlyAdmin):
    list_display = ["id", "source_id", "destination_id", "amount", "currency", "status", "posted_amount"]
    list_filter = ["status"]


@admin.register(StatementLine)
class StatementLineAdmin(ReadOnlyAdmin):
    list_display = ["id", "account_id", "transfer_id", "event_id", "amount", "balance_after"]
    search_fields = ["account__key"]
    ordering = ["-id"]


@admin.register(Seal)
class SealAdmin(ReadOnlyAdmin):
    list_display = ["id", "from_txid", "to_txid", "event_count", "merkle_root", "created_at"]
    ordering = ["-id"]
