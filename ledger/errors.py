"""The ledger's refusals: each a ``DomainError`` with a stable, documented code.

A service that raises one of these has written nothing that can commit: it
raises before its first write, or inside ``transaction.atomic`` so the
enclosing transaction is marked for rollback (see docs/ledger.md).
"""

from __future__ import annotations

from casino.errors import Conflict, DomainError, NotFound


class LedgerError(DomainError):
    """A ledger command was refused."""

    code = "ledger_error"


class StaleStreamVersion(Conflict):
    """The stream moved on since the caller read it (optimistic concurrency)."""

    code = "stale_stream_version"


class InvalidEvent(LedgerError):
    """The event cannot be recorded (bad type, data or schema version)."""

    code = "invalid_event"


class UnknownEvent(NotFound):
    """No event has this position (a money command must name its cause)."""

    code = "unknown_event"


class InvalidTransferKind(LedgerError):
    """A transfer kind is 1..16 characters."""

    code = "invalid_transfer_kind"


class UnknownAccount(NotFound):
    """No ledger account has this id."""

    code = "unknown_account"


class CurrencyMismatch(LedgerError):
    """The accounts or the command do not share one currency."""

    code = "currency_mismatch"


class UnknownCurrency(LedgerError):
    """Not an ISO 4217 currency this ledger knows."""

    code = "unknown_currency"


class InvalidAmount(LedgerError):
    """Amounts are positive integers in minor units."""

    code = "invalid_amount"


class InsufficientFunds(Conflict):
    """The account may not go negative and does not hold enough."""

    code = "insufficient_funds"


class SameAccount(LedgerError):
    """A transfer needs two different accounts."""

    code = "same_account"


class UnknownHold(NotFound):
    """No hold has this id."""

    code = "unknown_hold"


class HoldAlreadyResolved(Conflict):
    """The hold was already posted or voided; a hold resolves at most once."""

    code = "hold_already_resolved"


class PostExceedsHold(LedgerError):
    """A post may move at most the held amount."""

    code = "post_exceeds_hold"


class IdempotencyKeyReused(Conflict):
    """This idempotency key was used for a different request."""

    code = "idempotency_key_reused"
