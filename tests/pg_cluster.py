"""A throwaway PostgreSQL server of its own for one pytest-xdist worker (docs/testing.md).

Why a server and not only a database: the ledger's safe bound
(``ledger.services.events.safe_txid_bound``, ``pg_snapshot_xmin``) is the oldest
transaction still running in the whole server, any database. The seals, audit
exports and the websocket feed wait for it, so one worker's open test
transaction (a ``django_db`` test runs in one) holds back the other worker's
feed and seals: the tests that read them would see the other's transactions
instead of their own. Each worker's server has only that worker's transactions.

The server is ``initdb``'d into a temporary directory (owned by ``postgres``
when the run is root, as PostgreSQL refuses to run as root), listens on
127.0.0.1 on a free port with trust authentication and no fsync (the data is
thrown away), and is stopped and removed when the worker ends. A server left
by a killed worker is removed by the next run (its ``owner.pid`` is dead).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from casino.processes import free_port

PREFIX = "casino-test-pg-"
SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "100",  # as the shared server
    "timezone": "UTC",
}


def _bindir() -> Path | None:
    """The directory of ``initdb`` and ``pg_ctl``: on the PATH, else Debian's newest."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return Path(versions[-1]).parent if versions else None


def _as_postgres(command: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: root runs it as the ``postgres`` user."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class Cluster:
    bindir: Path
    data: Path
    port: int

    def stop(self) -> None:
        """Stop the server at once and remove its files (again: nothing to do)."""
        if not self.data.parent.exists():
            return
        subprocess.run(
            _as_postgres([str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"]),
            capture_output=True, timeout=60,
        )  # fmt: skip
        shutil.rmtree(self.data.parent, ignore_errors=True)


def remove_abandoned(bindir: Path) -> None:
    """Stop and remove the servers whose worker process is gone (a killed run)."""
    for top in Path(tempfile.gettempdir()).glob(PREFIX + "*"):
        try:
            owner: int | None = int((top / "owner.pid").read_text())
        except (OSError, ValueError):
            owner = None
        if owner is not None and _alive(owner):
            continue
        with contextlib.suppress(OSError):
            if owner is None and time.time() - top.stat().st_mtime < 3600:
                continue  # another worker is setting it up right now
        Cluster(bindir, top / "data", 0).stop()


def start(worker: str) -> Cluster:
    """initdb and start a server for ``worker``; raises RuntimeError naming what failed."""
    bindir = _bindir()
    if bindir is None:
        raise RuntimeError("no initdb/pg_ctl found (Debian: apt-get install postgresql)")
    remove_abandoned(bindir)
    top = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{worker}-"))
    (top / "owner.pid").write_text(str(os.getpid()))
    data = top / "data"
    data.mkdir()
    if os.geteuid() == 0:
        shutil.chown(top, "postgres")
        shutil.chown(data, "postgres")
    os.chmod(top, 0o755)
    os.chmod(data, 0o700)
    cluster = Cluster(bindir, data, 0)
    initdb = subprocess.run(
        _as_postgres([str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                      "--locale", "C.UTF-8", "--no-sync"]),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    if initdb.returncode:
        cluster.stop()
        raise RuntimeError(f"initdb failed: {initdb.stderr.strip()[-500:]}")
    log = data / "server.log"
    for _ in range(3):  # a free port can be taken before the server binds it: another one then
        cluster.port = free_port()
        options = " ".join(f"-c {name}={value}" for name, value in {**SETTINGS, "port": cluster.port}.items())
        started = subprocess.run(
            _as_postgres([str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "120",
                          "-o", f"{options} -c unix_socket_directories={data}", "start"]),
            capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        if started.returncode == 0:
            return cluster
    tail = log.read_text(errors="replace")[-500:] if log.exists() else ""
    cluster.stop()
    raise RuntimeError(f"pg_ctl start failed: {started.stderr.strip()[-300:]} {tail}")
