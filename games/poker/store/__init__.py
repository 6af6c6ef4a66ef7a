"""The poker tables' store: the hot SQL of the lean command path, owned by poker
(prepared psycopg 3 statements; PostgreSQL only, callers keep their portable
ORM path for SQLite).

- ``act``: a player's action read in one round trip (``read_act``: the
  idempotency key claimed, the table row locked, then the hand row, the seats
  dealt in, the hand stream's head and the ledger accounts the action may
  move, each read after the lock) and the table's pacing written without the
  ORM (``save_table_phase``).
"""
