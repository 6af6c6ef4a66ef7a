"""Django's PostgreSQL backend with a health check that costs no round trip
(and ``json`` read as text, like ``jsonb``).

With ``CONN_HEALTH_CHECKS`` Django asks a reused connection ``SELECT 1`` before
each request's first query: one more round trip on every API request (six for
a chip instead of five). A connection the server has ended (restart, ``pg_terminate_backend``,
an idle timeout) turns readable: the server's closing error message or the
end of the stream is waiting on the socket. An idle connection with nothing to
read is therefore usable without asking; one with something to read (that, or
a notification) gets Django's ``SELECT 1``, as does one not idle. Not caught: a
peer that vanished without a word (no FIN, no RST). The request's first query
then waits for TCP to give up and fails, where Django's ``SELECT 1`` would have
waited as long and reconnected.
"""

from __future__ import annotations

import select
from typing import Any

from django.db.backends.postgresql import base
from psycopg.pq import TransactionStatus
from psycopg.types.string import TextLoader


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        connection = super().get_new_connection(conn_params)
        # ``json`` columns (the ledger's events) reach Python as text, as Django
        # has psycopg hand over ``jsonb``: the field or the reader decodes it.
        connection.adapters.register_loader("json", TextLoader)
        return connection

    def is_usable(self) -> bool:
        pg = self.connection
        if pg is None or pg.closed or pg.broken:
            return False
        if pg.info.transaction_status == TransactionStatus.IDLE and not _readable(pg.fileno()):
            return True
        return bool(super().is_usable())


def _readable(fd: int) -> bool:
    """Whether the socket has data (or an end of stream) waiting, without blocking.
    ``poll`` where there is one: ``select`` fails on descriptors past 1,023, which a
    web process holding thousands of websockets reaches."""
    if not hasattr(select, "poll"):  # Windows
        return bool(select.select([fd], [], [], 0)[0])
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLERR | select.POLLHUP)
    return bool(poller.poll(0))
