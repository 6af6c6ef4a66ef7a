"""``manage.py serve``: the whole system in one command (what ``make run`` calls).

Migrates, loads the demo data, then supervises three processes: the ASGI
server (API + websockets), the Celery dealer worker (which consumes the dealer's
queue and the health check's) and Celery beat. It prints the URLs once the
readiness check ``/api/health/`` answers 200: it calls it with
``HEALTH_CHECK_TOKEN``, or, when none is set, with a random token it gives the
web process for this run only. Ctrl-C (or SIGTERM) stops all three:
each gets SIGTERM (Celery's warm shutdown finishes the task in hand), and
whatever is still running after the grace period is killed. With the demo
data the worker and beat run the demo bots (``CASINO_DEMO_BOTS``): they fill
and play the demo Sit & Go (``games.poker.demo_bots``).

The terminal stays readable (docs/live.md, "Logs"): each process logs every
line as JSON to its file under ``var/log/`` (``server.log``, ``worker.log``,
``beat.log``, and the demo bots' ``bots.log``: ``CASINO_LOG_FILE``,
``CASINO_BOTS_LOG_FILE``), and only warnings and errors to the terminal; the
banner lists the URLs, the demo logins and these files. Celery runs with
``--quiet`` (no banner of its own: the config it shows is in the settings).
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import FrameType
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

from casino import metrics
from casino.demo import seed_demo
from casino.processes import uvicorn_command

GRACE_SECONDS = 15


class Command(BaseCommand):
    help = "Run the ASGI server, the dealer worker and beat together; Ctrl-C stops all."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--no-seed", action="store_true", help="skip the demo data")
        parser.add_argument("--worker-concurrency", type=int, default=2)

    def handle(self, *args: Any, **options: Any) -> None:
        host, port = options["host"], options["port"]
        call_command("migrate", interactive=False, verbosity=0)
        logins: list[str] = []
        if not options["no_seed"]:
            for line in seed_demo():
                # The logins go in the banner, which stays on screen; the rest is said once, here.
                if " login" in line:
                    logins.append(line)
                else:
                    self.stdout.write(line)
        python = sys.executable
        # Every child writes its metrics under PROMETHEUS_MULTIPROC_DIR (exported by the settings): start empty.
        metrics.reset_multiprocess_dir()
        token = settings.HEALTH_CHECK_TOKEN or secrets.token_urlsafe(32)
        logs = log_files()
        if options["no_seed"]:
            del logs["bots"]  # no demo data, no bots
        commands = {
            "web": uvicorn_command(host=host, port=port),
            "worker": [
                # Celery logs through the project's LOGGING (casino.celery): LOG_LEVEL, not --loglevel.
                python, "-m", "celery", "-A", "casino", "--quiet", "worker",
                "--hostname", "dealer@%h", "--concurrency", str(options["worker_concurrency"]),
            ],
            "beat": [
                python, "-m", "celery", "-A", "casino", "--quiet", "beat",
                "--schedule", settings.CELERY_BEAT_SCHEDULE_FILENAME,
            ],
        }  # fmt: skip
        envs = {
            "web": {"HEALTH_CHECK_TOKEN": token, "CASINO_LOG_FILE": str(logs["web"])},
            "worker": {"CASINO_LOG_FILE": str(logs["worker"])}
            | ({"CASINO_BOTS_LOG_FILE": str(logs["bots"])} if "bots" in logs else {}),
            "beat": {"CASINO_LOG_FILE": str(logs["beat"])},
        }
        children: dict[str, subprocess.Popen[bytes]] = {}
        stopping = False

        def request_stop(signum: int, frame: FrameType | None) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, request_stop)
        signal.signal(signal.SIGTERM, request_stop)
        # Own sessions: the terminal's Ctrl-C reaches only this supervisor,
        # which then stops the children in order.
        # The demo data comes with bots that fill and play the demo Sit & Go (beat's demo-bots).
        bots = {} if options["no_seed"] else {"CASINO_DEMO_BOTS": "1"}
        for name, command in commands.items():
            env = dict(os.environ, **envs[name], **({} if name == "web" else bots))
            children[name] = subprocess.Popen(command, start_new_session=True, env=env)
        base = f"http://{host}:{port}"
        announced = False
        exit_code = 0
        try:
            while not stopping:
                for name, child in children.items():
                    if child.poll() is not None:
                        self.stderr.write(
                            f"{name} exited with code {child.returncode}; stopping everything (its log: {logs[name]})"
                        )
                        exit_code = 1
                        stopping = True
                if not announced and not stopping and _healthy(f"{base}/api/health/", token):
                    announced = True
                    self.stdout.write(self.style.SUCCESS(banner(base=base, logins=logins, logs=logs)))
                time.sleep(0.5)
        finally:
            self.stdout.write("stopping: web, worker, beat ...")
            _stop_all(children)
            self.stdout.write("stopped.")
        if exit_code:
            sys.exit(exit_code)


def log_files() -> dict[str, Path]:
    """Each process's log file under ``var/log/`` (created), by process name; ``bots``: the demo bots'."""
    directory = settings.VAR_DIR / "log"
    directory.mkdir(parents=True, exist_ok=True)
    return {name: directory / f"{file}.log" for name, file in LOG_FILES.items()}


#: The process (or part) each file under ``var/log/`` is for.
LOG_FILES = {"web": "server", "worker": "worker", "beat": "beat", "bots": "bots"}


def banner(*, base: str, logins: list[str], logs: dict[str, Path]) -> str:
    """What stays on the terminal once the casino is up: the URLs, the demo logins and the log files."""
    lines = [
        "",
        "The casino is up (Ctrl-C stops it):",
        f"  Play          {base}/  (the player's web client)",
        f"  API root      {base}/api/",
        f"  OpenAPI docs  {base}/api/docs/  (schema {base}/api/schema/)",
        f"  AsyncAPI      {base}/api/asyncapi.json  (the websockets)",
        f"  Health        {base}/api/health/live  (readiness {base}/api/health/: staff,",
        "                or the X-Health-Check-Token header with HEALTH_CHECK_TOKEN)",
        f"  Admin         {base}/admin/",
    ]
    if logins:
        lines += ["", "Demo logins:", *(f"  {line}" for line in logins)]
    lines += [
        "",
        "Logs (JSON lines; this terminal shows only warnings and errors):",
        *(f"  {name:<7} {path}" for name, path in logs.items()),
        "",
    ]
    return "\n".join(lines)


def _healthy(url: str, token: str) -> bool:
    request = urllib.request.Request(url, headers={"X-Health-Check-Token": token})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _stop_all(children: dict[str, subprocess.Popen[bytes]]) -> None:
    for child in children.values():
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + GRACE_SECONDS
    for child in children.values():
        remaining = max(0.1, deadline - time.monotonic())
        try:
            child.wait(timeout=remaining)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        metrics.process_dead(child.pid)
