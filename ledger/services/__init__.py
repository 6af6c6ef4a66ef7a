"""Application services of the ledger: the API the game services call.

All functions are keyword-only and run inside the caller's
``transaction.atomic`` (they open one themselves when called outside).
"""

from __future__ import annotations

from ledger.services.batch import (
    BatchResult,
    EventRef,
    HoldOpening,
    HoldSettlement,
    PreparedBatch,
    TransferSpec,
    prepare_batch,
    settle_batch,
    settle_prepared,
)
from ledger.services.events import (
    GlobalPosition,
    NewEvent,
    RecordedEvent,
    StreamAppend,
    append_events,
    iter_stream,
    position_of,
    read_global,
    read_stream,
    replay,
)
from ledger.services.money import (
    CashierResult,
    HoldResult,
    PlayerAccounts,
    TransferResult,
    balance_of,
    cashier_account,
    deposit,
    ensure_account,
    house_account,
    open_hold,
    player_accounts,
    player_balances,
    post_hold,
    suspense_account,
    transfer,
    void_hold,
    withdraw,
)

__all__ = [
    "BatchResult",
    "CashierResult",
    "EventRef",
    "GlobalPosition",
    "HoldOpening",
    "HoldResult",
    "HoldSettlement",
    "NewEvent",
    "PlayerAccounts",
    "PreparedBatch",
    "RecordedEvent",
    "StreamAppend",
    "TransferResult",
    "TransferSpec",
    "append_events",
    "balance_of",
    "cashier_account",
    "deposit",
    "ensure_account",
    "house_account",
    "iter_stream",
    "open_hold",
    "player_accounts",
    "player_balances",
    "position_of",
    "post_hold",
    "prepare_batch",
    "read_global",
    "read_stream",
    "replay",
    "settle_batch",
    "settle_prepared",
    "suspense_account",
    "transfer",
    "void_hold",
    "withdraw",
]
