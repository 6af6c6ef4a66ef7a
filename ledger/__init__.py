"""The system of record: event store (hash chain, seals) and double-entry money ledger."""
