"""The operator's edits of a poker table's settings (the admin form).

One transaction that locks the table row first and writes only the settings
that changed, never the dealer's projection columns on the same row (phase,
phase sequence, deadline, hand, button). The currency is the chips' unit: the
players' ``poker_seat`` accounts and the hand's pot are in it, so it cannot
change while anyone is seated or a hand is open.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction

from games.poker.errors import CurrencyInUse
from games.poker.models import PokerSeat, PokerTable
from games.poker.services.tables import current_hand, lock_table
from ledger.currencies import check_currency

# The columns an operator edits (in the model's order); the rest of the row is the dealer's projection.
SETTINGS = (
    "code", "name", "variant", "max_seats", "currency", "small_blind", "big_blind", "ante", "buy_in_min", "buy_in_max",
    "turn_seconds", "time_bank_seconds", "disconnection_bank_seconds", "reservation_seconds", "between_hands_seconds",
    "rake_mode", "rake_percent_bp", "rake_minimum", "rake_cap", "no_flop_no_drop", "raise_cap", "heads_up_uncapped",
    "is_open",
)  # fmt: skip


def check_currency_change(*, table: PokerTable, currency: str) -> None:
    """Refuse changing ``table``'s currency to ``currency``: ``unknown_currency``
    for one the ledger does not know, ``poker_currency_in_use`` while a player
    is seated (sitting out included: their chips are in the table's currency)
    or a hand is open (played or paused). Nothing to refuse when it stays."""
    if currency == table.currency:
        return
    check_currency(currency)
    seated = PokerSeat.objects.filter(table=table).count()
    hand = current_hand(table)
    if seated or hand is not None:
        raise CurrencyInUse(table=table.code, currency=table.currency, seated=seated,
                            hand_id=hand.hand_id if hand is not None else None)  # fmt: skip


def update_table(*, table_id: int, changes: Mapping[str, Any]) -> PokerTable:
    """Write ``changes`` (setting -> new value) to the table under its row lock
    and return it. Refusals, nothing written: ``poker_table_not_found``, the
    currency's (``check_currency_change``, checked again under the lock, so a
    player sitting down since the form was checked still counts), a name
    outside ``SETTINGS`` (``ValueError``: a programming error)."""
    unknown = set(changes) - set(SETTINGS)
    if unknown:
        raise ValueError(f"not a poker table setting: {sorted(unknown)}")
    with transaction.atomic():
        table = lock_table(table_id)
        if "currency" in changes:
            check_currency_change(table=table, currency=changes["currency"])
        for name, value in changes.items():
            setattr(table, name, value)
        if changes:
            PokerTable.objects.filter(pk=table.pk).update(**changes)
        return table
