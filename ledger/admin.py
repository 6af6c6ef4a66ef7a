"""Read-only admin for the ledger: events, transfers (entries), holds,
accounts with their statements, seals. Nobody, superusers included, can add,
change or delete a ledger row here (the database's triggers refuse it too).
An event's data is shown as staff may see it now (``ledger.confidential.staff_data``):
an event of a round or hand in play as a spectator at its table sees it,
confidential fields and sealed values as ``(sealed)``. URL lookups only on the
event's named columns, never on its data or metadata (``SafeLookups``)."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from casino.admin_base import MoneyFields, ReadOnlyAdmin, signed_money
from ledger.confidential import redacted, staff_data
from ledger.currencies import display_money
from ledger.models import Account, Event, Hold, Seal, StatementLine, Transfer
from ledger.upcasting import upcast

STATEMENT_ROWS = 100


@admin.register(Event)
class EventAdmin(ReadOnlyAdmin):
    list_display = ["id", "stream_id", "version", "type", "actor", "recorded_at"]
    list_filter = ["type"]
    search_fields = ["=id", "stream_id", "type", "hash"]
    # ?stream_id=...&type=... yes; ?data__icontains=... (an oracle on cards) no.
    lookup_fields = ("id", "txid", "stream_id", "version", "type", "schema_version", "recorded_at", "hash",
                     "prev_hash")  # fmt: skip
    date_hierarchy = "recorded_at"
    show_full_result_count = False

    @admin.display(description="actor")
    def actor(self, obj: Event) -> str:
        return str((obj.metadata or {}).get("actor", ""))

    @admin.display(description="data (JSON, as its readers read it)")
    def pretty_data(self, obj: Event) -> SafeString:
        _, data = upcast(obj.type, obj.schema_version, obj.data)  # as the stream's readers (and presenters) read it
        shown = staff_data(stream_id=obj.stream_id, event_type=obj.type, data=data)
        return format_html("<pre>{}</pre>", json.dumps(shown, indent=2, sort_keys=True))

    @admin.display(description="metadata (JSON)")
    def pretty_metadata(self, obj: Event) -> SafeString:
        return format_html("<pre>{}</pre>", json.dumps(redacted("", obj.metadata or {}), indent=2, sort_keys=True))

    readonly_fields = ["pretty_data", "pretty_metadata"]
    exclude = ["data", "metadata"]  # shown as pretty_data and pretty_metadata, sealed values sealed

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [name for name in super().get_readonly_fields(request, obj) if name not in ("data", "metadata")]


@admin.register(Transfer)
class TransferAdmin(MoneyFields, ReadOnlyAdmin):
    list_display = ["id", "debit_account", "credit_account", "amount", "kind", "event_id", "created_at"]
    money_fields = {"amount": "currency"}
    list_filter = ["kind", "currency"]
    search_fields = ["=id", "=event__id", "debit_account__key", "credit_account__key", "=hold_id"]
    list_select_related = ["debit_account", "credit_account"]
    show_full_result_count = False


@admin.register(Hold)
class HoldAdmin(MoneyFields, ReadOnlyAdmin):
    list_display = ["id", "source", "destination", "amount", "status", "posted_amount"]
    money_fields = {"amount": "currency", "posted_amount": "currency"}
    list_filter = ["status", "currency"]
    search_fields = ["=id", "source__key", "destination__key"]
    list_select_related = ["source", "destination"]


@admin.register(Account)
class AccountAdmin(MoneyFields, ReadOnlyAdmin):
    """Accounts; a wallet's page shows its recent statement and pending holds."""

    list_display = ["key", "kind", "owner", "balance"]
    money_fields = {"balance": "currency"}
    list_filter = ["kind", "currency"]
    search_fields = ["key", "owner"]
    readonly_fields = ["statement", "pending_holds"]

    @admin.display(description=f"statement (latest {STATEMENT_ROWS} lines)")
    def statement(self, obj: Account) -> SafeString:
        lines = StatementLine.objects.filter(account_id=obj.pk).order_by("-id")[:STATEMENT_ROWS]
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    ln.created_at,
                    ln.transfer_id,
                    ln.event_id,
                    signed_money(ln.amount, obj.currency),
                    display_money(ln.balance_after, obj.currency),
                )
                for ln in lines
            ),
        )
        return format_html(
            "<table><tr><th>at</th><th>transfer</th><th>event</th><th>amount</th><th>balance</th></tr>{}</table>", rows
        )

    @admin.display(description="pending holds")
    def pending_holds(self, obj: Account) -> SafeString:
        holds = Hold.objects.filter(source_id=obj.pk, status="pending").order_by("id")[:STATEMENT_ROWS]
        rows = format_html_join("", "<li>{} {} → {}</li>", ((h.id, display_money(h.amount, h.currency),
                                                             h.destination_id) for h in holds))  # fmt: skip
        return format_html("<ul>{}</ul>", rows) if holds else format_html("{}", "none")


@admin.register(StatementLine)
class StatementLineAdmin(MoneyFields, ReadOnlyAdmin):
    list_display = ["id", "account", "amount", "balance_after", "transfer_id", "event_id", "created_at"]
    search_fields = ["account__key", "=transfer__id", "=event__id"]
    list_select_related = ["account"]
    money_fields = {"amount": "account.currency", "balance_after": "account.currency"}
    show_full_result_count = False


@admin.register(Seal)
class SealAdmin(ReadOnlyAdmin):
    list_display = ["id", "from_txid", "to_txid", "event_count", "last_event_id", "merkle_root", "created_at"]
    search_fields = ["=id", "merkle_root"]
