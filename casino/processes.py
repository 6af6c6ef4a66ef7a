"""Helpers for starting the project's own processes (tests and benchmarks)."""

from __future__ import annotations

import socket
from typing import Any


def database_url_of(db: dict[str, Any]) -> str:
    """The ``DATABASE_URL`` that points a child process at the database ``db``
    (a Django ``DATABASES`` entry), e.g. the test or a benchmark's scratch database."""
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
