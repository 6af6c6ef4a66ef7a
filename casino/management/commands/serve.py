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
        if not options["no_seed"]:
            for line in seed_demo():
                self.stdout.write(line)
        python = sys.executable
        # Every child writes its metrics under PROMETHEUS_MULTIPROC_DIR (exported by the settings): start empty.
        metrics.reset_multiprocess_dir()
        token = settings.HEALTH_CHECK_TOKEN or secrets.token_urlsafe(32)
        web_env = dict(os.environ, HEALTH_CHECK_TOKEN=token)
        commands = {
            "web": uvicorn_command(host=host, port=port),
            "worker": [
                python, "-m", "celery", "-A", "casino", "worker", "--loglevel", "INFO",
                "--hostname", "dealer@%h", "--concurrency", str(options["worker_concurrency"]),
            ],
            "beat": [
                python, "-m", "celery", "-A", "casino", "beat", "--loglevel", "INFO",
                "--schedule", settings.CELERY_BEAT_SCHEDULE_FILENAME,
            ],
        }  # fmt: skip
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
        dealer_env = None if options["no_seed"] else dict(os.environ, CASINO_DEMO_BOTS="1")
        for name, command in commands.items():
            env = web_env if name == "web" else dealer_env
            children[name] = subprocess.Popen(command, start_new_session=True, env=env)
        base = f"http://{host}:{port}"
        announced = False
        exit_code = 0
        try:
            while not stopping:
                for name, child in children.items():
                    if child.poll() is not None:
                        self.stderr.write(f"{name} exited with code {child.returncode}; stopping everything")
                        exit_code = 1
                        stopping = True
                if not announced and not stopping and _healthy(f"{base}/api/health/", token):
                    announced = True
                    self.stdout.write(
                        self.style.SUCCESS(
                            "\nThe casino is up (Ctrl-C stops it):\n"
                            f"  API root      {base}/api/\n"
                            f"  OpenAPI docs  {base}/api/docs/  (schema {base}/api/schema/)\n"
                            f"  AsyncAPI      {base}/api/asyncapi.json  (the websockets)\n"
                            f"  Health        {base}/api/health/live  (readiness {base}/api/health/: staff,\n"
                            "                or the X-Health-Check-Token header with HEALTH_CHECK_TOKEN)\n"
                            f"  Admin         {base}/admin/\n"
                        )
                    )
                time.sleep(0.5)
        finally:
            self.stdout.write("stopping: web, worker, beat ...")
            _stop_all(children)
            self.stdout.write("stopped.")
        if exit_code:
            sys.exit(exit_code)


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
