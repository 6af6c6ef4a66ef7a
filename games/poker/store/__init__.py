"""The poker tables' store: the hot SQL of the lean command path, owned by poker
(prepared psycopg 3 statements; PostgreSQL only, callers keep their portable
ORM path for SQLite).

- ``act``: a player's action read in one round trip (``read_act``: the
  idempotency key claimed, the table row locked, then the hand row, the seats
  dealt in, the hand stream's head and the ledger accounts the action may
  move, each read after the lock); the rows written without the ORM
  (``save_row``, ``save_table_phase``, ``save_result``,
  ``save_stacks_after``); and ``deferred_writes``, which sends the action's
  ledger batch (``ledger.services.small.small_batch_writes``) and those
  UPDATEs as one statement at its end.
- ``leases``: a tournament's tables leased to its worker processes
  (session-level advisory locks; ``games.poker.tournament.workers``).
"""
