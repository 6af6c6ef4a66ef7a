"""Two of everything (issue 35, part 4): the production topology on one machine.

Two uvicorn processes (REST + websockets) and two Celery workers plus one beat,
all real subprocesses with ``CASINO_PRODUCTION=true``, connected to the test
database as the runtime role (``casino.db_roles``) and to one Redis (broker and
channel layer). Players at a house table and a poker table are connected to
*both* processes: a house player's socket is on one process while they bet
over REST on the other; the poker players sit on different processes. Then one
ASGI process and one worker are SIGKILLed (process group: nothing of theirs
survives) while a round and a hand are in play. What must hold (docs/live.md,
"Production topology"):

- every house round and poker hand is dealt once and ends (settled or voided)
  once, read from the log;
- every client on either process gets every public delta in order: per table,
  a connection's ``seq`` (house) or stream versions (poker) are contiguous from
  its snapshot, and every client ends at the table's last committed position;
- a bet placed through one process reaches the bettor's socket on the other,
  and a poker action taken on one process reaches the opponent on the other;
- the login rate (per client address) is counted across both processes;
- the clients of the killed process reconnect to the survivor with their last
  position (``?since=``) and are refused nothing; the round and the hand in play
  at the kill complete or void exactly once; the ledger sums to zero.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
import websockets
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connections
from websockets.typing import Origin

from casino import metrics
from casino.auth import issue_token
from casino.processes import free_port, uvicorn_command
from games.house.models import HouseRound, HouseTable, PlayerRound
from games.poker.models import PokerHand, PokerTable
from ledger.models import Event
from tests.db import ledger_sums
from tests.house.live.conftest import fast_table, make_player
from tests.platform.conftest import RuntimeRole
from tests.poker.tables import make_table as make_poker_table

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True, databases=["default", "owner"])]
ROOT = Path(__file__).resolve().parents[2]
# TLS ends at the load balancer, which tells the application so (SECURE_PROXY_SSL_HEADER):
# with CASINO_PRODUCTION the HTTPS redirect stays on and the clients speak as the proxy would.
PROXY = {"X-Forwarded-Proto": "https"}
HOUSE_ENDS = {"house_round.settled", "house_round.voided"}
RECOVERY_SECONDS = 90
T = TypeVar("T")


# --- the processes ------------------------------------------------------------------------------


@dataclass
class Process:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def signal_group(self, signum: int) -> None:
        """``signum`` to the process's whole group (a prefork worker's pool children too)."""
        with suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signum)

    def kill(self) -> None:
        self.signal_group(signal.SIGKILL)
        self.popen.wait(timeout=30)
        metrics.process_dead(self.popen.pid)  # its open sockets leave casino_ws_connections

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after a short grace; the group is killed either way."""
        if self.popen.poll() is None:
            self.signal_group(signal.SIGTERM)
            with suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=5)
        self.signal_group(signal.SIGKILL)
        with suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=10)
        metrics.process_dead(self.popen.pid)

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""


def production_env(database_url: str, health_token: str) -> dict[str, str]:
    """The environment of every process: production settings, the test database
    as the runtime role, the tests' Redis; the keys are the test process's own,
    so the events the test writes and the processes verify agree."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CASINO_", "DJANGO_", "DATABASE_"))}
    env.update(
        PYTHONUNBUFFERED="1",
        CASINO_PRODUCTION="true",
        DATABASE_URL=database_url,
        REDIS_URL=settings.REDIS_URL,
        ALLOWED_HOSTS="127.0.0.1",
        DJANGO_SECRET_KEY=settings.SECRET_KEY,
        CASINO_SEAL_KEY=settings.CASINO_SEAL_KEY,
        CASINO_EVENT_MAC_KEY=settings.CASINO_EVENT_MAC_KEY,
        CASINO_EXPORT_SIGNING_KEY=settings.CASINO_EXPORT_SIGNING_KEY,
        CASINO_CARD_KEY=settings.CASINO_CARD_KEY,
        CASINO_PSP_CALLBACK_KEY=settings.CASINO_PSP_CALLBACK_KEY,
        HEALTH_CHECK_TOKEN=health_token,
        # The backstop sooner than its default 3 s: the sweeper then races the
        # workers' own tasks often, which is what the locks must make harmless.
        CASINO_SWEEP_GRACE_SECONDS="1",
    )
    return env


class Topology:
    """Spawns the processes, each in a session (process group) of its own, and
    kills every one of them on exit, whatever happened."""

    def __init__(self, env: dict[str, str], logs: Path) -> None:
        self.env, self.logs = env, logs
        self.processes: list[Process] = []

    def spawn(self, name: str, command: list[str]) -> Process:
        log = self.logs / f"{name}.log"
        with open(log, "wb") as out:
            popen = subprocess.Popen(
                command, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        process = Process(name, popen, log)
        self.processes.append(process)
        return process

    def asgi(self, name: str) -> tuple[Process, str]:
        port = free_port()
        command = uvicorn_command(host="127.0.0.1", port=port, extra=["--timeout-graceful-shutdown", "2"])
        return self.spawn(name, command), f"http://127.0.0.1:{port}"

    def worker(self, name: str) -> Process:
        # Prefork as in production (one pool process: the machine has two cores).
        return self.spawn(name, [
            sys.executable, "-m", "celery", "-A", "casino", "worker", "--loglevel", "INFO", "--concurrency", "1",
            "--without-gossip", "--without-mingle", "--hostname", f"{name}-{os.getpid()}@%h",
        ])  # fmt: skip

    def beat(self) -> Process:
        return self.spawn("beat", [
            sys.executable, "-m", "celery", "-A", "casino", "beat", "--loglevel", "INFO",
            "--schedule", str(self.logs / "celerybeat-schedule"), "--pidfile", str(self.logs / "beat.pid"),
        ])  # fmt: skip

    def stop_all(self) -> None:
        for process in self.processes:
            process.stop()

    def logs_of_failure(self) -> str:
        return "\n".join(f"--- {p.name} (exit {p.popen.poll()}) ---\n{p.tail()}" for p in self.processes)


@contextmanager
def topology(env: dict[str, str], logs: Path) -> Iterator[Topology]:
    topo = Topology(env, logs)
    try:
        yield topo
    except BaseException:
        print(topo.logs_of_failure())
        raise
    finally:
        topo.stop_all()


def wait_ready(processes: list[Process], bases: list[str], timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    pending_bases, workers = list(bases), [p for p in processes if p.name.startswith("worker")]
    while pending_bases or workers:
        for process in processes:
            assert process.popen.poll() is None, f"{process.name} exited:\n{process.tail()}"
        for base in list(pending_bases):
            with suppress(httpx.HTTPError):
                if httpx.get(f"{base}/api/health/live", headers=PROXY, timeout=2).status_code == 200:
                    pending_bases.remove(base)
        workers = [w for w in workers if b"ready." not in w.log.read_bytes()]
        assert time.monotonic() < deadline, f"not ready: {pending_bases} {[w.name for w in workers]}"
        time.sleep(0.2)


# --- the clients --------------------------------------------------------------------------------


class Servers:
    """The ASGI processes' base URLs and which of them were killed: a client
    whose server is gone uses the survivor."""

    def __init__(self, bases: list[str]) -> None:
        self.bases, self.dead = bases, set[str]()

    def alive(self, base: str) -> str:
        return base if base not in self.dead else next(b for b in self.bases if b not in self.dead)


@dataclass
class Connection:
    """One websocket connection's frames, as received."""

    base: str
    since: str | None
    frames: list[dict[str, Any]] = field(default_factory=list)
    received: list[float] = field(default_factory=list)  # when each frame arrived (a failure's dump)


class Client(ABC):
    """A player with an API token: REST on ``rest``, a websocket to one table on ``ws``."""

    path: str

    def __init__(self, name: str, token: str, table_id: int, servers: Servers, *, rest: str, ws: str) -> None:
        self.name, self.token, self.table_id, self.servers = name, token, table_id, servers
        self.rest_base, self.ws_base = rest, ws
        self.connections: list[Connection] = []
        self.socket: Any = None
        self.stopping = False
        self.tasks: set[asyncio.Future[None]] = set()

    def spawn(self, work: Any) -> None:
        """Work in the background (a REST call) that must not hold up reading the socket."""
        task = asyncio.ensure_future(work)
        self.tasks.add(task)

    def headers(self, key: str | None = None) -> dict[str, str]:
        headers = {"Authorization": f"Token {self.token}", **PROXY}
        if key:
            headers["Idempotency-Key"] = key
        return headers

    async def request(
        self, method: str, path: str, body: Any = None, *, key: str | None = None, via: str | None = None
    ) -> httpx.Response:
        """A REST call through ``via`` (default: ``rest``); if that server is
        gone, the same call (same idempotency key) to the survivor."""
        for _attempt in range(3):
            base = self.servers.alive(via or self.rest_base)
            try:
                async with httpx.AsyncClient(base_url=base, timeout=20) as http:
                    return await http.request(method, path, json=body, headers=self.headers(key))
            except httpx.TransportError:
                if base not in self.servers.dead:
                    await asyncio.sleep(0.5)  # the kill may not be recorded yet
        raise AssertionError(f"{self.name}: {method} {path} reached no server")

    @abstractmethod
    def resume_token(self) -> str | None:
        """The position to resume from (``?since=``) after a reconnect; None: a fresh snapshot."""

    @abstractmethod
    async def on_frame(self, message: dict[str, Any]) -> None:
        """Take one frame the server sent (the player's side of the game)."""

    async def run(self) -> None:
        """Connect, read, and when the server goes away reconnect (to the
        survivor) with the last position applied, until asked to stop."""
        while not self.stopping:
            base = self.servers.alive(self.ws_base)
            since = self.resume_token() if self.connections else None
            ticket = (await self.request("POST", "/api/auth/ws-ticket/")).json()["ticket"]
            url = base.replace("http://", "ws://") + f"{self.path}?ticket={ticket}"
            if since is not None:
                url += f"&since={since}"
            connection = Connection(base, since)
            self.connections.append(connection)
            try:
                async with websockets.connect(url, origin=Origin(base), open_timeout=20) as socket:
                    self.socket = socket
                    async for text in socket:
                        message = json.loads(text)
                        connection.frames.append(message)
                        connection.received.append(time.time())
                        await self.on_frame(message)
            except (websockets.ConnectionClosed, OSError):
                pass
            finally:
                self.socket = None
            if not self.stopping:
                assert base in self.servers.dead, f"{self.name}: the socket to a live server closed"

    async def send(self, frame: dict[str, Any]) -> None:
        with suppress(websockets.ConnectionClosed, AttributeError):
            await self.socket.send(json.dumps(frame))


class HousePlayer(Client):
    """Bets the minimum Ante of every round over REST, through ``rest`` and its
    socket's process in turn (so each process serves bets of a player whose
    state the other changed last); answers its decisions over its socket on
    ``ws``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.path = f"/ws/tables/{self.table_id}/"
        self.last_seq: int | None = None
        self.tried: set[str] = set()  # rounds a bet was sent for
        self.open_round: str | None = None  # the round whose betting is open, as far as the frames tell
        self.bets: list[tuple[str, str]] = []  # (round, server) of every Ante accepted
        self.betting = True
        self.refusals: list[str] = []

    def resume_token(self) -> str | None:
        return None if self.last_seq is None else str(self.last_seq)

    async def on_frame(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind in ("snapshot", "delta"):
            self.last_seq = message["seq"]
        opened = None
        if kind == "snapshot" and (message["table"].get("round") or {}).get("phase") == "betting":
            opened = message["table"]["round"]["round_id"]
        elif kind == "delta" and message["event"] == "house_round.opened":
            opened = message["round_id"]
        if kind == "delta":
            self.open_round = None if message["event"] == "house_round.betting_closed" else self.open_round
        if opened and self.betting and opened not in self.tried:
            self.tried.add(opened)
            self.open_round = opened
            self.spawn(self.bet(opened))
        if kind == "private" and message["event"] == "decision.offered":
            option = message["data"]["options"][0]
            await self.send({"type": "decision", "id": uuid.uuid4().hex, "option": option})

    async def bet(self, round_id: str) -> None:
        """The Ante, into whatever round is betting when the request arrives;
        none for a round whose betting this client already saw closed (frames
        that arrive together: the feed was held back)."""
        await asyncio.sleep(0)
        if self.open_round != round_id:
            return
        base = self.servers.alive((self.rest_base, self.ws_base)[len(self.tried) % 2])
        answer = await self.request("POST", f"/api/tables/{self.table_id}/bets/chip/", {"spot": "ante", "amount": 100},
                                    key=uuid.uuid4().hex, via=base)  # fmt: skip
        if answer.status_code == 200:
            self.bets.append((answer.json()["round_id"], f"http://{answer.url.host}:{answer.url.port}"))
        else:  # betting_closed: too late for that round (a loaded machine), the next one
            self.refusals.append(answer.json()["error"]["code"])

    def settled_rounds(self) -> set[str]:
        return {
            f["round_id"]
            for c in self.connections
            for f in c.frames
            if f["type"] == "private" and f["event"] == "house_player.settled"
        }


class PokerPlayer(Client):
    """Sits down over REST on ``rest`` and plays over its socket: check, or call
    when checking is refused."""

    def __init__(self, *args: Any, seat: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.path = f"/ws/poker/{self.table_id}/"
        self.seat = seat
        self.table_version = 0
        self.hand_id = ""
        self.hand_version = 0
        self.acts: list[tuple[str, str]] = []  # (hand, server) of each act answered

    def resume_token(self) -> str | None:
        return f"{self.table_version}:{self.hand_version}:{self.hand_id}"

    async def on_frame(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "snapshot":
            self.table_version = message["table_version"]
            self.hand_id, self.hand_version = message["hand_id"] or "", message["hand_version"]
            legal = (message["table"].get("hand") or {}).get("legal")
            if legal is not None:  # resumed on our turn (it came while we were away): play it
                action = "check" if legal["can_check"] else "call"
                await self.send({"type": "act", "id": uuid.uuid4().hex, "action": action})
        elif kind == "table":
            self.table_version = message["version"]
            event = message["event"]
            if (
                event["type"] == "poker_table.sat_out"
                and event.get("seat") == self.seat
                and event.get("reason") == "timeout"
            ):
                # Back at the table (a late turn timed out): as a player would, sit in again.
                self.spawn(self.request("POST", f"/api/poker/tables/{self.table_id}/sit-in/", key=uuid.uuid4().hex))
        elif kind in ("delta", "private"):
            self.hand_id, self.hand_version = message["hand_id"], message["version"]
            event = message["event"]
            if event["type"] == "poker_hand.turn" and event["seat"] == self.seat:
                await self.send({"type": "act", "id": uuid.uuid4().hex, "action": "check"})
        elif kind == "error" and message.get("request") == "act" and message["code"] == "poker_cannot_check":
            await self.send({"type": "act", "id": uuid.uuid4().hex, "action": "call"})
        elif kind == "ack" and message.get("request") == "act":
            self.acts.append((message["result"]["hand_id"], self.servers.alive(self.ws_base)))


# --- what the clients saw -----------------------------------------------------------------------


def house_gaps(connection: Connection) -> list[str]:
    """Where a house connection's seq is not snapshot, snapshot+1, ... (one by one)."""
    gaps, last = [], None
    for frame in connection.frames:
        if frame["type"] == "snapshot":
            if last is not None and frame["seq"] < last:
                gaps.append(f"snapshot {frame['seq']} behind {last}")
            last = frame["seq"]
        elif frame["type"] == "delta":
            if last is None or frame["seq"] != last + 1:
                gaps.append(f"delta {frame['seq']} after {last}")
            last = frame["seq"]
    return gaps


def poker_gaps(connection: Connection) -> list[str]:
    """Where a poker connection's lanes are not contiguous: the table stream's
    versions, and each hand's from its first event (or the snapshot's version)."""
    gaps: list[str] = []
    table, hand, version = None, None, 0
    for frame in connection.frames:
        kind = frame["type"]
        if kind == "snapshot":
            table, hand, version = frame["table_version"], frame["hand_id"] or None, frame["hand_version"]
        elif kind == "table":
            if table is None or frame["version"] != table + 1:
                gaps.append(f"table {frame['version']} after {table}")
            table = frame["version"]
        elif kind in ("delta", "private"):
            expected = version + 1 if frame["hand_id"] == hand else 1
            if frame["version"] != expected:
                gaps.append(f"hand {frame['hand_id']} v{frame['version']} after {hand} v{version}")
            hand, version = frame["hand_id"], frame["version"]
    return gaps


def errors_of(connection: Connection) -> list[dict[str, Any]]:
    """Error frames other than a decision or act that came too late (its window closed or
    its hand ended) and the check refused with a bet to call (the client then calls)."""
    late = {"no_decision_window", "already_decided", "poker_not_your_turn", "poker_no_hand", "poker_hand_complete",
            "wrong_phase", "poker_cannot_check"}  # fmt: skip
    return [f for f in connection.frames if f["type"] == "error" and f.get("code") not in late]


def public_frames(client: Client, kinds: tuple[str, ...]) -> list[dict[str, Any]]:
    return [f for c in client.connections for f in c.frames if f["type"] in kinds]


def stream_head(stream_id: str) -> int:
    return Event.objects.filter(stream_id=stream_id).order_by("-version").values_list("version", flat=True).first() or 0


# The scenario's database reads run on one thread of their own (Django's ORM is synchronous).
DB_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="topology-db")


async def in_db_thread(function: Callable[[], T]) -> T:
    return await asyncio.get_running_loop().run_in_executor(DB_THREAD, function)


async def until(predicate: Callable[[], Any], *, timeout: float, what: str, reads_db: bool = False) -> None:
    deadline = time.monotonic() + timeout
    while not (await in_db_thread(predicate) if reads_db else predicate()):
        assert time.monotonic() < deadline, f"timed out after {timeout} s waiting for {what}"
        await asyncio.sleep(0.1)


# --- the cast: two tables, four players -----------------------------------------------------------


Players = tuple[HousePlayer, HousePlayer, PokerPlayer, PokerPlayer]  # alice, bob, carol, dave


@dataclass
class Cast:
    """A fast house table with two funded players seated, a poker table, two funded players, their tokens."""

    house: HouseTable
    poker: PokerTable
    house_ids: list[int]
    tokens: list[str]  # alice, bob (house); carol, dave (poker)

    @classmethod
    def make(cls) -> Cast:
        house = fast_table("casino_holdem", betting_seconds=3, warning_seconds=1)
        # A long turn (players act at once): a timeout would sit a player out and stop the table.
        poker = make_poker_table(turn_seconds=20, between_hands_seconds=1, disconnection_bank_seconds=2)
        house_ids = [make_player(house, funds=50_000) for _ in range(2)]
        ids = house_ids + [make_player(funds=50_000) for _ in range(2)]
        return cls(house, poker, house_ids, [issue_token(user=get_user_model().objects.get(pk=pk)) for pk in ids])

    def clients(self, servers: Servers, base1: str, base2: str) -> Players:
        """Each house player's socket on one process (bets through either); the poker players' on each."""
        alice, bob, carol, dave = self.tokens
        return (
            HousePlayer("alice", alice, self.house.pk, servers, rest=base1, ws=base2),
            HousePlayer("bob", bob, self.house.pk, servers, rest=base2, ws=base1),
            PokerPlayer("carol", carol, self.poker.pk, servers, rest=base1, ws=base1, seat=1),
            PokerPlayer("dave", dave, self.poker.pk, servers, rest=base2, ws=base2, seat=2),
        )


async def sit_down(players: tuple[PokerPlayer, ...], poker: PokerTable) -> None:
    """Each poker player sits down (over REST on their ``rest`` process) with a 1,000 buy-in."""
    for player in players:
        body = {"seat": player.seat, "buy_in": 1000}
        sat = await player.request("POST", f"/api/poker/tables/{poker.pk}/sit/", body, key=uuid.uuid4().hex)
        assert sat.status_code == 201, sat.text


async def stop_clients(clients: Sequence[Client], tasks: Sequence[asyncio.Future[None]]) -> None:
    """Close the scenario's database thread and every client's socket; raise the first failure of a client's tasks."""
    await in_db_thread(connections.close_all)
    for client in clients:
        client.stopping = True
        if client.socket is not None:
            await client.socket.close()
    await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), timeout=30)
    for task in [*tasks, *(t for client in clients for t in client.tasks)]:
        if task.done() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]


# --- the test -----------------------------------------------------------------------------------


def test_two_asgi_processes_and_two_workers_lose_nothing_when_one_of_each_is_killed(
    runtime_role: RuntimeRole, tmp_path: Path
) -> None:
    cast = Cast.make()
    house, poker, house_ids = cast.house, cast.poker, cast.house_ids
    env = production_env(runtime_role.url, uuid.uuid4().hex)

    with ExitStack() as stack:
        topo = stack.enter_context(topology(env, tmp_path))
        asgi1, base1 = topo.asgi("asgi1")
        asgi2, base2 = topo.asgi("asgi2")
        worker1, worker2 = topo.worker("worker1"), topo.worker("worker2")
        topo.beat()
        wait_ready(topo.processes, [base1, base2])
        check_login_rate_is_shared(base1, base2)
        servers = Servers([base1, base2])
        a, b, c, d = cast.clients(servers, base1, base2)
        clients: list[Client] = [a, b, c, d]
        kill: dict[str, Any] = {}

        async def scenario() -> None:
            tasks = [asyncio.ensure_future(client.run()) for client in clients]
            try:
                await sit_down((c, d), poker)
                # Both processes carry play: a round settled for each house player, a hand ended for both.
                await until(lambda: a.settled_rounds() and b.settled_rounds(), timeout=60, what="house rounds")
                await until(lambda: hands_ended(c) and hands_ended(d), timeout=60, what="poker hands")
                # Kill in the middle of a round both bet on (betting closed, not yet settled).
                await until(lambda: mid_round(a, b) and hand_in_play(c), timeout=60, what="a round and a hand in play")
                kill["round"], kill["hand"] = mid_round(a, b), await in_db_thread(poker_hand_in_play)
                kill["rounds_before"] = {f["round_id"] for f in public_frames(b, ("delta",))}
                kill["hands_before"] = hands_ended(c) | {kill["hand"]}
                servers.dead.add(base2)
                asgi2.kill()
                worker2.kill()
                kill["at"] = time.monotonic()
                # The round and hand in play at the kill end, and the table plays on: a later
                # round both players settle, and a later hand both see end.
                await until(lambda: after_kill(a, b, c, d, kill), timeout=RECOVERY_SECONDS, what="play after the kill")
                for bettor in (a, b):
                    bettor.betting = False
                    await asyncio.gather(*bettor.tasks)
                # Every client reaches the tables' last committed position.
                await until(
                    lambda: caught_up(clients, house, poker), timeout=60, what="clients caught up", reads_db=True
                )
            finally:
                await stop_clients(clients, tasks)

        try:
            asyncio.run(scenario())
        except BaseException:  # what each client saw, for the failure's reader
            dump = {
                c.name: [
                    {"base": n.base, "since": n.since, "frames": n.frames, "received": n.received}
                    for n in c.connections
                ]
                for c in clients
            }
            kill["refusals"] = {c.name: getattr(c, "refusals", []) for c in clients}
            (Path(settings.VAR_DIR) / "test-topology-clients.json").write_text(
                json.dumps({"kill": kill, "clients": dump}, default=str)
            )
            raise
        assert worker1.popen.poll() is None, worker1.tail()
        assert asgi1.popen.poll() is None, asgi1.tail()
        # No exception in the surviving ASGI process (a worker may meet stale tasks of earlier tests
        # on the shared broker; what it did to these tables is checked in the log below).
        assert "Traceback" not in asgi1.log.read_text(errors="replace"), asgi1.tail()

    check_log_once(house, poker)
    check_clients(a, b, c, d, base1, base2)
    assert set(a.refusals + b.refusals) <= {"betting_closed"}, (a.refusals, b.refusals)
    # Each bet was placed once, even one retried on the survivor with its key after the kill.
    for player, player_id in zip((a, b), house_ids, strict=True):
        accepted = Counter(round_id for round_id, _base in player.bets)
        placed = Counter(
            e.stream_id.removeprefix("round-").removesuffix(f"-player-{player_id}")
            for e in Event.objects.filter(stream_id__endswith=f"-player-{player_id}", type="house_bet.placed")
        )
        assert placed == accepted, (player.name, placed, accepted)
    # The round and the hand in play at the kill ended once (checked with every round above), and
    # the killed process's clients resumed on the survivor from their last position.
    assert HouseRound.objects.get(round_id=kill["round"]).status in ("settled", "voided")
    if kill["hand"]:
        assert PokerHand.objects.get(hand_id=kill["hand"]).status != "playing"
    for client in (a, d):
        assert len(client.connections) >= 2
        resumed = client.connections[1]
        assert resumed.base == base1, client.name
        assert resumed.since is not None, client.name
    assert a.connections[1].frames[0]["seq"] >= int(a.connections[1].since or 0)
    assert ledger_sums() == {"EUR": 0}


def check_login_rate_is_shared(base1: str, base2: str) -> None:
    """The login throttle (20 a minute per client address, docs/auth.md) counts the requests
    to either process: 20 logins alternating between the two are answered, the 21st (whichever
    process gets it) is refused 429 ``throttled``. Kept in each process's memory, the two
    would let 40 through."""
    get_user_model().objects.create_user("rates", password="rates-Pw-35")
    answers = [
        httpx.post(
            f"{(base1, base2)[n % 2]}/api/auth/token/",
            json={"username": "rates", "password": "rates-Pw-35"},
            headers=PROXY,
            timeout=20,
        )
        for n in range(21)
    ]
    assert [answer.status_code for answer in answers] == [200] * 20 + [429], [a.text for a in answers[-2:]]
    assert answers[-1].json()["error"]["code"] == "throttled"


def hands_ended(player: PokerPlayer) -> set[str]:
    return {
        f["hand_id"]
        for f in public_frames(player, ("delta",))
        if f["event"]["type"] in ("poker.hand_ended", "poker_hand.voided")
    }


def mid_round(a: HousePlayer, b: HousePlayer) -> str | None:
    """The round in play that both players bet on and whose betting closed, if any."""
    last = next((f for f in reversed(public_frames(b, ("delta",)))), None)
    after = ("house_round.opened", "house_round.deck_revealed", "house_round.closed")
    if last is None or last["event"] in HOUSE_ENDS or last["event"] in after:
        return None
    round_id = last["round_id"]
    closed = last["event"] != "house_round.shuffled"
    both = all(round_id in {r for r, _base in player.bets} for player in (a, b))
    return round_id if closed and both else None


def hand_in_play(player: PokerPlayer) -> bool:
    last = next((f for f in reversed(public_frames(player, ("delta",)))), None)
    return last is not None and last["event"]["type"] not in ("poker.hand_ended", "poker_hand.cards_revealed")


def poker_hand_in_play() -> str:
    return PokerHand.objects.filter(status="playing").values_list("hand_id", flat=True).first() or ""


def after_kill(a: HousePlayer, b: HousePlayer, c: PokerPlayer, d: PokerPlayer, kill: dict[str, Any]) -> bool:
    ended = {f["round_id"] for f in public_frames(b, ("delta",)) if f["event"] in HOUSE_ENDS}
    if kill["round"] not in ended:
        return False
    later = a.settled_rounds() & b.settled_rounds() - kill["rounds_before"]
    if not later:
        return False
    # The killed process's client may resume after the hand in play ended (its snapshot covers it):
    # that hand's end is seen by the client that stayed connected.
    if kill["hand"] and kill["hand"] not in hands_ended(c):
        return False
    return bool(hands_ended(c) & hands_ended(d) - kill["hands_before"])


def caught_up(clients: list[Client], house: HouseTable, poker: PokerTable) -> bool:
    """Every client's connection has applied the tables' last committed position."""
    seq = HouseTable.objects.get(pk=house.pk).public_seq
    poker_now = PokerTable.objects.get(pk=poker.pk)
    table_version = stream_head(f"poker-table-{poker.pk}")
    hand = poker_now.current_hand_id
    hand_version = stream_head(f"poker-hand-{hand}") if hand else 0
    for client in clients:
        if isinstance(client, HousePlayer) and client.last_seq != seq:
            return False
        if isinstance(client, PokerPlayer) and (
            client.table_version != table_version
            or (hand and (client.hand_id, client.hand_version) != (hand, hand_version))
        ):
            return False
    return True


def check_log_once(house: HouseTable, poker: PokerTable) -> None:
    """Every round and hand of the two tables, from the log: opened and dealt
    once, ended once (the last may still be in play), one settlement per player."""
    rounds = list(HouseRound.objects.filter(table=house).order_by("opened_at"))
    assert len(rounds) >= 3
    for number, round_ in enumerate(rounds):
        events = Event.objects.filter(stream_id=f"round-{round_.round_id}").values_list("type", flat=True)
        counts = Counter(events)
        once = ("house_round.opened", "house_round.shuffled")
        assert all(counts[t] == 1 for t in once), (round_.round_id, counts)
        at_most_once = ("house_round.betting_closed", "house_round.cards_dealt", "house_round.deck_revealed",
                        "house_round.closed")  # fmt: skip
        assert all(counts[t] <= 1 for t in at_most_once), (round_.round_id, counts)
        ends = counts["house_round.settled"] + counts["house_round.voided"]
        last = number == len(rounds) - 1
        empty = ends == 0 and counts["house_round.closed"] == 1 and round_.participants == 0  # nobody bet
        assert ends == 1 or empty or (last and round_.status == "open"), (round_.round_id, round_.status, counts)
        # One decision window per street; each card revealed once (the showdown reveals the board, then the dealer).
        streets = Counter(
            (e.type, e.data["street"], json.dumps(e.data.get("cards"), sort_keys=True))
            for e in Event.objects.filter(
                stream_id=f"round-{round_.round_id}",
                type__in=("house_round.decision_window_opened", "house_round.cards_revealed"),
            )
        )
        assert set(streets.values()) <= {1}, (round_.round_id, streets)
        for row in PlayerRound.objects.filter(round=round_):
            player_events = Counter(
                Event.objects.filter(stream_id=f"round-{round_.round_id}-player-{row.player_id}").values_list(
                    "type", flat=True
                )
            )
            ended = player_events["house_player.settled"] + player_events["house_player.voided"]
            assert ended == (0 if round_.status == "open" else 1), (round_.round_id, row.player_id, player_events)
    hands = list(PokerHand.objects.filter(table=poker).order_by("hand_number"))
    assert len(hands) >= 3
    assert [h.hand_number for h in hands] == list(range(1, len(hands) + 1))
    for number, hand in enumerate(hands):
        counts = Counter(Event.objects.filter(stream_id=f"poker-hand-{hand.hand_id}").values_list("type", flat=True))
        assert counts["poker.hand_started"] == 1, (hand.hand_id, counts)
        assert counts["poker_hand.shuffled"] == 1, (hand.hand_id, counts)
        assert counts["poker.hole_cards_dealt"] == len(hand.players), (hand.hand_id, counts)
        ends = counts["poker.hand_ended"] + counts["poker_hand.voided"]
        assert ends == 1 or (number == len(hands) - 1 and ends == 0), (hand.hand_id, counts)


def check_clients(a: HousePlayer, b: HousePlayer, c: PokerPlayer, d: PokerPlayer, base1: str, base2: str) -> None:
    for client in (a, b, c, d):
        for connection in client.connections:
            gaps = (house_gaps if isinstance(client, HousePlayer) else poker_gaps)(connection)
            assert gaps == [], (client.name, connection.base, gaps)
            assert errors_of(connection) == [], (client.name, errors_of(connection))
            if connection.frames:
                assert connection.frames[0]["type"] == "snapshot", (client.name, connection.frames[0])
    # Both house clients saw the same event at every seq, whichever process they read.
    seen: dict[int, tuple[str, str]] = {}
    for client in (a, b):
        for frame in public_frames(client, ("delta",)):
            assert seen.setdefault(frame["seq"], (frame["event"], frame["round_id"])) == (
                frame["event"], frame["round_id"],
            )  # fmt: skip
    # A bet placed through one process reached the bettor's socket on the other.
    for player, rest, ws in ((a, base1, base2), (b, base2, base1)):
        placed = {
            f["round_id"]
            for conn in player.connections
            if conn.base == ws
            for f in conn.frames
            if f["type"] == "private" and f["event"] == "house_bet.placed"
        }
        crossed = {r for r, base in player.bets if base == rest}
        assert crossed & placed, (player.name, crossed, placed)
    # A poker action taken on one process reached the opponent's socket on the other.
    carol_acted = {hand for hand, base in c.acts if base == base1}
    dave_saw = {
        f["hand_id"]
        for conn in d.connections
        if conn.base == base2
        for f in conn.frames
        if f["type"] == "delta" and f["event"]["type"] == "poker.action_taken" and f["event"].get("seat") == c.seat
    }
    assert carol_acted & dave_saw, (carol_acted, dave_saw)
