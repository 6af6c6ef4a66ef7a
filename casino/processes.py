"""Helpers for starting the project's own processes (tests and benchmarks)."""

from __future__ import annotations

import socket
import sys
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


def uvicorn_command(*, host: str, port: int, extra: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The command line that serves the project with uvicorn, with the websocket
    limits of the settings: ``--ws-max-size`` is ``CASINO_WS_MAX_FRAME_BYTES``,
    so a bigger frame is refused (close 1009) before anything parses it
    (uvicorn's default is 16 MiB), and ``--no-proxy-headers``: uvicorn would
    otherwise take ``X-Forwarded-For`` from any peer in ``FORWARDED_ALLOW_IPS``
    (127.0.0.1 by default) as the client's address; the application resolves
    the client itself from ``TRUSTED_PROXY_COUNT`` (``casino.auth.client_ip``),
    so the ASGI client must stay the TCP peer. Every way the project serves
    uses it: the ``serve`` command, the tests' ``asgi_server`` and the
    benchmarks' servers."""
    from django.conf import settings

    return [
        sys.executable, "-m", "uvicorn", "casino.asgi:application", "--host", host, "--port", str(port),
        "--lifespan", "off", "--no-access-log", "--no-proxy-headers",
        "--ws-max-size", str(settings.CASINO_WS_MAX_FRAME_BYTES), *extra,
    ]  # fmt: skip
