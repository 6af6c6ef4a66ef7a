"""A quiet ``make run`` (issue 36, part 4): ``manage.py serve`` on the embedded
default (no database or broker server, a scratch ``var/``, a free port) puts
its banner on the terminal (the URLs, every demo login, the log files under
``var/log/``) and then, idle, at most ``MAX_IDLE_LINES`` lines a minute; the
routine lines are in the log files, as JSON lines.

This file takes a minute and a half or more (it has a pytest-xdist worker to
itself under ``--dist loadfile``); ``make quiet-check`` runs it alone. The one
window of time here is the issue's own measure (lines per idle minute), not a
bound on how fast anything runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from casino.demo import (
    OPERATOR_PASSWORD,
    OPERATOR_USERNAME,
    OPPONENT_PASSWORD,
    OPPONENT_USERNAME,
    PLAYER_PASSWORD,
    PLAYER_USERNAME,
)
from casino.processes import free_port
from compliance.demo import COMPLIANCE_PASSWORD, COMPLIANCE_USERNAME
from tests.conftest import ROOT

pytestmark = pytest.mark.slow

#: The issue's bound: an idle ``make run`` prints at most this many lines a minute after start-up.
MAX_IDLE_LINES = 10
IDLE_SECONDS = 60
#: Start-up on a fresh var/ (migrations on SQLite, the demo data) on a busy shared machine.
START_SECONDS = 300
#: What a newcomer cannot act on, never on the terminal.
NEVER_ON_TERMINAL = ("superuser privileges", "No hostname was supplied", "AXES: BEGIN", "Traceback")
LOG_FILES = ("server.log", "worker.log", "beat.log", "bots.log")


def embedded_default_env(var_dir: Path) -> dict[str, str]:
    """The environment of a fresh ``make run``: the tests' own database, Redis and
    broker settings removed, ``var/`` in ``var_dir``."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("DATABASE_", "REDIS_", "CELERY_", "CASINO_", "LOG_", "HEALTH_CHECK_"))
    }
    return {**env, "CASINO_VAR_DIR": str(var_dir), "PYTHONUNBUFFERED": "1"}


def test_an_idle_make_run_keeps_its_banner_on_screen(tmp_path: Path) -> None:
    var_dir = tmp_path / "var"
    terminal_path = tmp_path / "terminal.txt"
    port = free_port()
    with terminal_path.open("wb") as terminal:
        serve = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--port", str(port)],
            cwd=ROOT, env=embedded_default_env(var_dir), stdout=terminal, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + START_SECONDS
            while "bots.log" not in terminal_path.read_text(errors="replace"):
                assert serve.poll() is None, f"serve exited:\n{terminal_path.read_text(errors='replace')}"
                assert time.monotonic() < deadline, f"no banner:\n{terminal_path.read_text(errors='replace')}"
                time.sleep(0.5)
            banner = terminal_path.read_text(errors="replace")
            lines_at_start = len(banner.splitlines())
            time.sleep(IDLE_SECONDS)
            terminal_text = terminal_path.read_text(errors="replace")
            idle_lines = terminal_text.splitlines()[lines_at_start:]
        finally:
            serve.send_signal(signal.SIGINT)
            try:
                serve.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(serve.pid, signal.SIGKILL)
                serve.wait()

    assert len(idle_lines) <= MAX_IDLE_LINES, "\n".join(idle_lines)
    assert f"http://127.0.0.1:{port}/api/" in banner
    logins = {
        OPERATOR_USERNAME: OPERATOR_PASSWORD,
        PLAYER_USERNAME: PLAYER_PASSWORD,
        OPPONENT_USERNAME: OPPONENT_PASSWORD,
        COMPLIANCE_USERNAME: COMPLIANCE_PASSWORD,
    }
    for username, password in logins.items():
        assert f"{username} / {password}" in banner, username
    logs = var_dir / "log"
    for name in LOG_FILES:
        assert str(logs / name) in banner, name
    for text in NEVER_ON_TERMINAL:
        assert text not in terminal_text, text
    # The routine lines went to the files, one JSON object per line.
    for name in ("server.log", "worker.log", "beat.log"):
        records = [json.loads(line) for line in (logs / name).read_text().splitlines()]
        assert records, name
        assert all({"timestamp", "level", "logger", "message"} <= set(record) for record in records), name
    worker = (logs / "worker.log").read_text()
    assert "dealer@" in worker
    assert "ready." in worker
