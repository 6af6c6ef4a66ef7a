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
- ``step``: the tournament's step read in one round trip (``read_step``: the
  tournament row, the open tables with the waiting ones locked, their seats,
  the busts' entries locked and the stacks they started their hand with, the
  pool collected) and a balancing move's destinations locked (``lock_tables``).
- ``rows``: what they share (a model's columns, a row as the ORM's instance,
  statements read together in one round trip).
"""
