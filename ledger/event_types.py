"""The ledger's own event types (catalogue: docs/events.md) and their upcasters."""

from __future__ import annotations

from ledger.currencies import major_to_minor
from ledger.upcasting import Data, register_event_type, upcaster

DEPOSITED = "cashier.deposited"
WITHDRAWN = "cashier.withdrawn"

register_event_type(DEPOSITED, 2)
register_event_type(WITHDRAWN, 1)


@upcaster(DEPOSITED, 1)
def _deposited_v1_to_v2(data: Data) -> Data:
    """v1 carried the provider's decimal string (``"amount": "12.34"``) and
    ``reference``; v2 carries integer minor units and ``external_reference``."""
    return {
        "account_id": data["account_id"],
        "amount": major_to_minor(data["amount"], data["currency"]),
        "currency": data["currency"],
        "external_reference": data["reference"],
        "actor": data.get("actor", ""),
    }
