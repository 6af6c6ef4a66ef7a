"""The ledger's refusals: each a ``DomainError`` with a stable, documented code.

A service that raises one of these has written nothing that can commit: it
raises before its first write, or inside ``transaction.atomic`` so the
enclosing transaction is marked for rollback (see docs/ledger.md).
"""

from __future__ import annotations

from casino.errors import Conflict, DomainError, NotFound


class LedgerError(DomainError, code="ledger_error"):
    """A ledger command was refused."""


class StaleStreamVersion(Conflict, code="stale_stream_version"):
    """The stream moved on since the caller read it (optimistic concurrency)."""


class InvalidEvent(LedgerError, code="invalid_event"):
    """The event cannot be recorded (bad type, data or schema version)."""


class UnknownEvent(NotFound, code="unknown_event"):
    """No event has this position (a money command must name its cause)."""


class InvalidTransferKind(LedgerError, code="invalid_transfer_kind"):
    """A transfer kind is 1..16 characters."""


class UnknownAccount(NotFound, code="unknown_account"):
    """No ledger account has this id."""


class CurrencyMismatch(LedgerError, code="currency_mismatch"):
    """The accounts or the command do not share one currency."""


class UnknownCurrency(LedgerError, code="unknown_currency"):
    """Not an ISO 4217 currency this ledger knows."""


class InvalidAmount(LedgerError, code="invalid_amount"):
    """Amounts are positive integers in minor units."""


class InsufficientFunds(Conflict, code="insufficient_funds"):
    """The account may not go negative and does not hold enough."""


class SameAccount(LedgerError, code="same_account"):
    """A transfer needs two different accounts."""


class UnknownHold(NotFound, code="unknown_hold"):
    """No hold has this id."""


class HoldAlreadyResolved(Conflict, code="hold_already_resolved"):
    """The hold was already posted or voided; a hold resolves at most once."""


class PostExceedsHold(LedgerError, code="post_exceeds_hold"):
    """A post may move at most the held amount."""


class IdempotencyKeyReused(Conflict, code="idempotency_key_reused"):
    """This idempotency key was used for a different request."""


class SealRefused(LedgerError, code="seal_refused"):
    """The seal found the ledger tampered with and signed nothing past it
    (docs/ledger.md, "Event MACs"); ``details["sealed"]``: the seal it wrote
    before the problem, or ``None``."""


class EventNotAuthentic(SealRefused, code="event_not_authentic"):
    """An event at or after the ``mac`` integrity epoch has no valid MAC under the
    application's event keys (written by someone without them): the seal stops
    before it."""


class IntegrityEpochMoved(SealRefused, code="integrity_epoch_moved"):
    """An integrity epoch differs from the one the last seal signed (a row
    changed, deleted or added below it): the seal signs nothing."""
