"""A tournament's tables leased to worker processes (``games.poker.tournament.workers``;
issue #39): session-level advisory locks, PostgreSQL only. The SQL of the leases
lives here, in poker's store, as the project keeps raw SQL in the store modules
that own it."""

from __future__ import annotations

from django.db import connection

LEASE_TABLE = 0x7039  # advisory lock namespace (first key): a table's lease, second key the table id
LEASE_WORKER = 0x703A  # shared by every worker of a tournament (second key its id) while it plays


class Leases:
    """This process's leases on a tournament's tables: session-level advisory locks
    on its own connection (Django's default one), held until released or until the
    session ends (the process dies, the connection drops)."""

    def __init__(self, tournament_id: int) -> None:
        self.tournament_id = tournament_id

    def join(self) -> None:
        """Count this process among the tournament's workers (until it leaves or dies)."""
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock_shared(%s, %s)", [LEASE_WORKER, self.tournament_id])

    def leave(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock_all()")

    def holders(self, table_ids: list[int]) -> tuple[set[int], set[int], int]:
        """(the tables of ``table_ids`` this session holds, those another session
        holds, the workers alive), from ``pg_locks`` in one query."""
        mine: set[int] = set()
        theirs: set[int] = set()
        alive = 0
        with connection.cursor() as cursor:  # an empty ``table_ids``: the workers alive only
            cursor.execute(
                "SELECT classid::int8, objid::int8, pid = pg_backend_pid() FROM pg_locks "
                "WHERE locktype = 'advisory' AND granted AND objsubid = 2 "
                "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
                "AND ((classid = %s AND objid::int8 = ANY(%s)) OR (classid = %s AND objid::int8 = %s))",
                [LEASE_TABLE, [int(pk) for pk in table_ids] or [0], LEASE_WORKER, self.tournament_id],
            )
            for kind, key, own in cursor.fetchall():
                if kind == LEASE_WORKER:
                    alive += 1
                else:
                    (mine if own else theirs).add(int(key))
        return mine, theirs, alive

    def claim(self, table_ids: list[int]) -> set[int]:
        """Try to take the leases of ``table_ids`` (without waiting); those taken."""
        if not table_ids:
            return set()
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT t FROM unnest(%s::int8[]) AS t WHERE pg_try_advisory_lock(%s, t::int4)",
                [table_ids, LEASE_TABLE],
            )
            return {int(row[0]) for row in cursor.fetchall()}

    def evict_stalled(self, stalled_seconds: float) -> list[int]:
        """End the sessions of this tournament's other workers whose backend has sent
        no statement for ``stalled_seconds`` (idle, or idle in a transaction, since
        then: a hung process with its connection alive); their backends' pids.

        ``pg_stat_activity.state_change`` is PostgreSQL's own heartbeat of a session:
        every statement a worker sends moves it, and a live worker sends several a
        round (``holders`` at least; an idle worker every ``IDLE_SLEEP``). A session
        running a statement (``active``, a lock wait included) is never evicted.
        ``pg_terminate_backend`` rolls the session's transaction back and ends it, and
        its advisory locks (its leases) go with it: the other workers claim its
        tables in the next round, once the backend has exited."""
        with connection.cursor() as cursor:
            cursor.execute(
                "WITH stalled AS MATERIALIZED (SELECT a.pid FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid "
                "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.classid = %s "
                "AND l.objid::int8 = %s "
                "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
                "AND a.pid <> pg_backend_pid() "
                "AND a.state IN ('idle', 'idle in transaction', 'idle in transaction (aborted)') "
                "AND a.state_change < clock_timestamp() - make_interval(secs => %s)) "
                "SELECT pid FROM stalled WHERE pg_terminate_backend(pid)",  # only the stalled: the CTE first
                [LEASE_WORKER, self.tournament_id, float(stalled_seconds)],
            )
            return [int(row[0]) for row in cursor.fetchall()]

    def release(self, table_ids: list[int]) -> None:
        if table_ids:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, t::int4) FROM unnest(%s::int8[]) AS t",
                               [LEASE_TABLE, table_ids])  # fmt: skip
