"""``bench fanout`` (issues 6 and 39): websockets on one UTH table, the time from a
phase change's commit to each client having its delta, beside a bare broadcast
peer on the same server, in the same run.

One uvicorn server (``workers`` processes, ``CASINO_BENCH_ENDPOINTS`` on, so it
also serves the peer ``games.benchmarks.bare_broadcast``), one fleet of
``clients`` reading websockets (``procs`` client processes,
``games.benchmarks.ws_clients``), phase changes ``every`` seconds, each
preceded by one unmeasured warm-up change:

1. **real**: ``changes`` phase changes committed by ``advance_table``; the
   process's feed reads them from the log and hands each delta frame to every
   socket's outbox (``games.tables.feed``): ``p99_ms``;
2. **with never-reading clients**: the same reading clients, plus ``slow_share``
   of ``clients`` that never read after their first snapshot (``ws_clients``'
   slow fleet, asking for a snapshot twice a second), ``slow_changes`` phase changes, then ``drain``
   seconds: the reading clients' ``p99_ms_with_slow`` (``slow_p99_ratio`` =
   ÷ ``p99_ms``, target ≤ 1.2) and ``slow_closed``: how many of the
   ``slow_clients`` the server closed within the run (4408, or the connection
   aborted or ended), which must be all of them (the run lasts at least the
   server's bound for that after its last change);
3. **bare**: the same number of clients on ``ws/bench/broadcast/``, sent the
   very frames run 1's clients received (the same bytes), one ``NOTIFY`` per
   change carrying that change's frames, committed as run 1's changes were:
   ``bare_p99_ms``, and ``fanout_p99_ratio`` = ``p99_ms`` ÷ ``bare_p99_ms``
   (target ≤ 1.5);
4. ``big_clients`` (10,000; ``0`` skips it) reading websockets over
   ``big_workers`` processes on a server of their own: an absolute figure,
   ``clients_10k_p99_ms``.

The server runs with the collector probe (``games.benchmarks.gc_probe``): the
run prints each load window's full collections (and how many of them
walked everything) and a census of the server's
tracked objects by type after the reading clients connect and after the
never-reading ones were closed (figures ``full_collections`` and
``server_*``; docs/benchmarks.md, "bench fanout").

Options: ``-o clients=2000 -o changes=5 -o every=1 -o slow_share=0.05
-o slow_changes=20 -o big_clients=10000 -o big_workers=2 -o drain=10``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from casino.bench import BenchResult, Writer, benchmark
from games.benchmarks.bare_broadcast import CHANNEL, FRAME_SEPARATOR
from games.benchmarks.gc_probe import CENSUS_REQUEST
from games.benchmarks.live import ROOT, _pct, _players, _table, _tokens, asgi_server
from games.house.models import HouseTable
from games.house.services import advance_table, start_table
from ledger.benchmarks import scratch_database

# A delta not received within ``drain`` seconds of the last change of its run counts as infinite.
INF = float("inf")
NOTIFY_MAX_BYTES = 7999  # PostgreSQL's limit on a NOTIFY payload


def _client_fleet(
    url: str,
    origin: str,
    tokens: list[str],
    procs: int,
    deflate: bool,
    *,
    slow: bool = False,
    keep_frames: bool = False,
) -> list[subprocess.Popen[str]]:
    """``procs`` client processes (``games.benchmarks.ws_clients``), each holding
    its share of the sockets; returns once every socket has its snapshot.
    ``keep_frames``: the first process keeps the
    text of each delta it receives."""
    fleet = []
    for index in range(procs):
        child = subprocess.Popen(
            [sys.executable, "-m", "games.benchmarks.ws_clients"],
            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert child.stdin is not None
        share = tokens[index::procs]
        config = {"url": url, "origin": origin, "tokens": share, "deflate": deflate, "slow": slow,
                  "keep_frames": keep_frames and index == 0}  # fmt: skip
        child.stdin.write(json.dumps(config) + "\n")
        child.stdin.flush()
        fleet.append(child)
    for child in fleet:
        assert child.stdout is not None
        line = child.stdout.readline()
        if not line.startswith("connected"):
            raise RuntimeError(f"a fanout client process failed: {line!r}")
    return fleet


class Collected:
    """What a stopped fleet reports: seq -> receive times, how its sockets
    ended (a slow fleet), and seq -> the delta's text (``keep_frames``)."""

    def __init__(self) -> None:
        self.received: dict[int, list[float]] = {}
        self.closed: dict[str, int] = {}
        self.frames: dict[int, str] = {}


def _collect(fleet: list[subprocess.Popen[str]]) -> Collected:
    """Stop the fleet and gather its reports."""
    got = Collected()
    for child in fleet:
        assert child.stdin is not None
        child.stdin.write("stop\n")
        child.stdin.flush()
    for child in fleet:
        assert child.stdout is not None
        answer = json.loads(child.stdout.readline())
        for seq, times in answer["received"].items():
            got.received.setdefault(int(seq), []).extend(times)
        for how, n in answer.get("closed", {}).items():
            got.closed[how] = got.closed.get(how, 0) + n
        got.frames.update({int(seq): text for seq, text in answer.get("frames", {}).items()})
        child.wait(timeout=60)
    return got


def _kill(fleet: list[subprocess.Popen[str]]) -> None:
    for child in fleet:
        if child.poll() is None:
            child.kill()
            child.wait()


# A change: commit something, return (the seqs it published, when it committed).
# Both kinds of change stamp the time just before their COMMIT goes to the
# server: what is notified is delivered from the commit on, and a stamp taken
# after the commit returns can come after the bare peer's frames have arrived.
Change = Callable[[], tuple[list[int], float]]


def _advance(table_id: int) -> Change:
    """The real change: the dealer's next phase of the table, committed."""

    def change() -> tuple[list[int], float]:
        table = HouseTable.objects.get(pk=table_id)
        with transaction.atomic():
            advance_table(table_id=table.pk, expected_seq=table.phase_seq, now=table.deadline or timezone.now())
            committed = time.time()
        after = HouseTable.objects.get(pk=table_id).public_seq
        return list(range(table.public_seq + 1, after + 1)), committed

    return change


def _payload(frames: dict[int, str], seqs: list[int]) -> str:
    """One change's frames as the bare peer's NOTIFY payload (in seq order, one a line)."""
    return FRAME_SEPARATOR.join(frames[seq] for seq in seqs)


def _replay(frames: dict[int, str], changes: list[list[int]]) -> Change:
    """The bare peer's change: the next recorded change's frames, in ONE NOTIFY
    (in seq order): one commit, one wake, one pass over the sockets with all its
    frames, as the real feed reads a commit's deltas in one batch and hands
    each socket all of them together. (One NOTIFY per frame made the peer pass
    over every socket once per frame: its last frame of a change reached the
    last socket only after every socket had the ones before.)"""
    queue = list(changes)

    def change() -> tuple[list[int], float]:
        seqs = queue.pop(0)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT pg_notify(%s, %s)", [CHANNEL, _payload(frames, seqs)])
            committed = time.time()
        return seqs, committed

    return change


def _changes(change: Change, count: int, every: float, drain: float) -> list[tuple[list[int], float]]:
    """``count`` changes ``every`` seconds, ``drain`` seconds (at least ``every``)
    after the last; each change's seqs and commit time."""
    done = []
    for index in range(count):
        done.append(change())
        time.sleep(max(every, drain) if index == count - 1 else every)
    return done


def _latencies(
    done: list[tuple[list[int], float]], received: dict[int, list[float]], clients: int, out: Writer
) -> list[float]:
    """Every (client, delta) latency in ms; ``inf`` for a delta a client had not received."""
    latencies: list[float] = []
    for seq, at in ((seq, at) for seqs, at in done for seq in seqs):
        times = received.get(seq, [])
        spread = f", {(min(times) - at) * 1000:.0f}-{(max(times) - at) * 1000:.0f} ms" if times else ""
        out.write(f"seq {seq}: {len(times)} of {clients} clients{spread}\n")
        latencies.extend((t - at) * 1000 for t in times)
        latencies.extend([INF] * (clients - len(times)))
    return latencies


FANOUT_COLUMNS = ["run", "reading", "never reading", "uvicorn workers", "p50_ms", "p99_ms", "max_ms", "missed",
                  "slow ended"]  # fmt: skip
# How a never-reading client's socket counts as closed by the server: its 4408, or the
# connection aborted (reset) or ended without a close frame (eof).
CLOSED_BY_SERVER = ("4408", "reset", "eof")


def _census(probe: Path, label: str, out: Writer) -> dict[str, Any]:
    """Ask the probed server processes for their census of tracked objects
    (``games.benchmarks.gc_probe``) and wait for it; one process's, printed."""
    (probe / CENSUS_REQUEST).write_text(label)
    deadline = time.monotonic() + 60
    while not (found := sorted(probe.glob(f"census-{label}-*.json"))) and time.monotonic() < deadline:
        time.sleep(0.5)
    (probe / CENSUS_REQUEST).unlink()
    if not found:
        return {}
    census: dict[str, Any] = json.loads(found[0].read_text())
    out.write(f"server process census {label}: {census['tracked']} tracked objects {census['per_generation']} "
              f"(generations 0-2), {census['frozen']} frozen; by type: "
              f"{', '.join(f'{name} {n}' for name, n in census['top'])}\n")  # fmt: skip
    return census


def _collections(probe: Path, windows: dict[str, tuple[float, float]], out: Writer) -> dict[str, dict[str, float]]:
    """Per load window (its first commit to a second after its last), per
    server process: the full (generation 2) collections that ran in it, how
    many and the longest, and how many of them walked everything (the
    freezer's walks, or every full collection without it); printed with
    every process's young ones, and the whole run's full collections in
    order, each with its start in seconds from the first window's (``*``:
    walked everything), beside the windows' spans on the same clock."""
    time.sleep(1.5)  # the probe writes once a second
    figures: dict[str, dict[str, float]] = {}
    zero = min(start for start, _ in windows.values())
    spans = [f"{name} {start - zero:.1f}-{end - zero:.1f}" for name, (start, end) in windows.items()]
    out.write(f"windows (s from the first one's start): {', '.join(spans)}\n")
    for log in sorted(probe.glob("gc-*.jsonl")):
        records = [json.loads(line) for line in log.read_text().splitlines()]
        for name, (start, end) in windows.items():
            inside = [r for r in records if start <= r[0] <= end]
            full = [r[2] for r in inside if r[1] == 2]
            everything = [r[2] for r in inside if r[1] == 2 and r[3]]
            young = [r[2] for r in inside if r[1] < 2]
            out.write(f"{log.stem} {name}: {len(full)} full collections (longest {max(full, default=0):.0f} ms), "
                      f"{len(everything)} of them walking everything, "
                      f"{len(young)} young (longest {max(young, default=0):.1f} ms)\n")  # fmt: skip
            figure = figures.setdefault(name, {"full": 0, "full_longest_ms": 0.0, "walked_everything": 0})
            figure["full"] += len(full)
            figure["full_longest_ms"] = round(max(figure["full_longest_ms"], *full, 0.0), 1)
            figure["walked_everything"] += len(everything)
        full_all = [f"{r[2]:.0f}{'*' if r[3] else ''}@{r[0] - zero:+.1f}" for r in records if r[1] == 2]
        out.write(f"{log.stem} whole run: {len(full_all)} full collections ({', '.join(full_all)}; "
                  "ms@s, *: walked everything)\n")  # fmt: skip
    return figures


def _window(done: list[tuple[list[int], float]], every: float) -> tuple[float, float]:
    return done[0][1], done[-1][1] + every


def _summary(ms: list[float]) -> dict[str, float]:
    finite = [v for v in ms if v != INF]
    return {
        "p50_ms": round(_pct(finite, 0.5), 1),
        "p99_ms": round(_pct(ms, 0.99), 1),
        "max_ms": round(max(ms), 1) if ms else float("nan"),
        "missed": len(ms) - len(finite),
    }


def _ratio(numerator: float, denominator: float) -> float | None:
    return round(numerator / denominator, 3) if denominator and denominator != INF else None


@benchmark("fanout")
def fanout(
    out: Writer,
    clients: int = 2000,
    changes: int = 5,
    every: float = 1.0,
    procs: int = 2,
    workers: int = 1,
    slow_share: float = 0.05,
    slow_changes: int = 20,
    big_clients: int = 10_000,
    big_workers: int = 2,
    big_procs: int = 4,
    ws: str = "auto",
    deflate: str = "off",
    client_deflate: str = "on",
    drain: float = 10.0,
) -> BenchResult:
    """The runs of the module's docstring; figures as one JSON line (ratios
    beside both their figures)."""
    clients, changes, every, procs, workers = int(clients), int(changes), float(every), int(procs), int(workers)
    slow_changes, drain = int(slow_changes), float(drain)
    big_clients, big_workers, big_procs = int(big_clients), int(big_workers), int(big_procs)
    if not settings.REDIS_URL:
        raise SystemExit("bench fanout needs REDIS_URL (production's channel layer carries chat and notices)")
    server_env = {
        "UVICORN_WS": ws,
        "UVICORN_WS_PER_MESSAGE_DEFLATE": "true" if deflate == "on" else "false",
        "CASINO_BENCH_ENDPOINTS": "true",
    }
    # The server closes a never-reading client within CASINO_WS_SEND_TIMEOUT_SECONDS of
    # its receive window filling up (games.tables.feed.Outbox): the run with them
    # lasts at least that long after its last change, plus two seconds for the
    # window to fill and the watchdog's tick.
    slow_bound = float(settings.CASINO_WS_SEND_TIMEOUT_SECONDS) + 2.0
    slow_count = max(1, round(clients * float(slow_share))) if float(slow_share) > 0 else 0
    client_deflate_on = client_deflate == "on"
    rows: list[list[Any]] = []
    probe = Path(tempfile.mkdtemp(prefix="fanout-gc-"))
    server_env["CASINO_GC_PROBE"] = str(probe)
    with scratch_database():
        table = _table("BF1", betting_seconds=2)
        tokens = _tokens(_players(table, max(clients + slow_count, big_clients), funds=0))
        reading, slow = tokens[:clients], tokens[clients : clients + slow_count]
        start_table(table_id=table.pk, now=timezone.now() - timedelta(seconds=60))
        real = _advance(table.pk)

        def row(
            name: str, n_reading: int, n_slow: int, n_workers: int, ms: list[float], ended: str
        ) -> dict[str, float]:
            summary = _summary(ms)
            rows.append([name, n_reading, n_slow, n_workers, *summary.values(), ended])
            return summary

        with asgi_server(workers=workers, extra_env=server_env) as base:
            ws_base = base.replace("http://", "ws://")
            table_url = f"{ws_base}/ws/tables/{table.pk}/?ticket="
            fleet = _client_fleet(table_url, base, reading, procs, client_deflate_on, keep_frames=True)
            slow_fleet: list[subprocess.Popen[str]] = []
            try:
                out.write(f"{len(reading)} reading websockets from {procs} client processes\n")
                census = _census(probe, "connected", out)
                _changes(real, 1, every, 0)  # warm-up, not measured
                plain_commits = _changes(real, changes, every, drain)
                slow_fleet = _client_fleet(table_url, base, slow, 1, client_deflate_on, slow=True)
                out.write(f"+ {len(slow)} never reading\n")
                _changes(real, 1, every, 0)
                slow_commits = _changes(real, slow_changes, every, max(drain, slow_bound))
                closed = _collect(slow_fleet).closed
                # What the never-reading sockets' ends left tracked (frozen cycles wait for a walk).
                census_after = _census(probe, "after-never-reading", out)
                got = _collect(fleet)
            finally:
                _kill(fleet + slow_fleet)
            plain = row("reading clients", clients, 0, workers,
                        _latencies(plain_commits, got.received, clients, out), "")  # fmt: skip
            with_slow = row(f"+ {slow_count} never reading", clients, slow_count, workers,
                            _latencies(slow_commits, got.received, clients, out), json.dumps(closed))  # fmt: skip
            # The bare peer: the same clients, the frames run 1's clients received.
            recorded = [seqs for seqs, _ in plain_commits]
            missing = [seq for seqs in recorded for seq in seqs if seq not in got.frames]
            if missing:
                raise RuntimeError(f"no client received the deltas {missing}: nothing to replay")
            too_big = [seqs for seqs in recorded if len(_payload(got.frames, seqs).encode()) > NOTIFY_MAX_BYTES]
            if too_big:
                raise RuntimeError(f"the deltas of changes {too_big} are over a NOTIFY's {NOTIFY_MAX_BYTES} bytes")
            bare_url = f"{ws_base}/ws/bench/broadcast/?ticket="
            fleet = _client_fleet(bare_url, base, reading, procs, client_deflate_on)
            try:
                warm = min(got.frames)
                _changes(_replay(got.frames, [[warm]]), 1, every, 0)
                bare_commits = _changes(_replay(got.frames, recorded), len(recorded), every, drain)
                bare_got = _collect(fleet)
            finally:
                _kill(fleet)
            bare = row("bare broadcast peer", clients, 0, workers,
                       _latencies(bare_commits, bare_got.received, clients, out), "")  # fmt: skip
            windows = {"reading": _window(plain_commits, every), "with never-reading": _window(slow_commits, every),
                       "bare": _window(bare_commits, every)}  # fmt: skip
            collections = _collections(probe, windows, out)
        big = None
        if big_clients:
            with asgi_server(workers=big_workers, extra_env=server_env) as base:
                url = base.replace("http://", "ws://") + f"/ws/tables/{table.pk}/?ticket="
                fleet = _client_fleet(url, base, tokens[:big_clients], big_procs, client_deflate_on)
                try:
                    out.write(f"{big_clients} reading websockets from {big_procs} client processes\n")
                    _changes(real, 1, every, 0)
                    big_commits = _changes(real, changes, every, drain)
                    big_got = _collect(fleet)
                finally:
                    _kill(fleet)
                big = row("many clients", big_clients, 0, big_workers,
                          _latencies(big_commits, big_got.received, big_clients, out), "")  # fmt: skip
    shutil.rmtree(probe, ignore_errors=True)
    if ws == "auto":  # what `make run` serves with: name the implementation uvicorn picked
        from uvicorn.protocols.websockets.auto import AutoWebSocketsProtocol

        ws = f"auto ({getattr(AutoWebSocketsProtocol, '__name__', 'none')})"
    frame_bytes = sorted(len(got.frames[seq].encode()) for seqs in recorded for seq in seqs)
    return BenchResult(
        title="fanout: websockets on one table, latency from a phase change's commit to each client",
        columns=FANOUT_COLUMNS,
        rows=rows,
        figures={
            "ws": ws,
            "server_deflate": deflate,
            "client_procs": procs,
            "uvicorn_workers": workers,
            "every_s": every,
            "changes": changes,
            "slow_changes": slow_changes,
            "delta_bytes": [frame_bytes[0], frame_bytes[-1]] if frame_bytes else None,
            "slow_closed_how": closed,
            "clients_10k": big_clients,
            "clients_10k_p99_ms": big["p99_ms"] if big else None,
            "server_tracked_objects": census.get("tracked"),
            "server_frozen_objects": census.get("frozen"),
            "server_tracked_after_never_reading": census_after.get("tracked"),
            "server_frozen_after_never_reading": census_after.get("frozen"),
            "full_collections": collections,
            "layer": f"deltas: the process's feed; chat and notices: {settings.CHANNEL_LAYERS['default']['BACKEND']}",
            # The keys last, each ratio beside both its figures.
            "clients": clients,
            "p99_ms": plain["p99_ms"],
            "bare_p99_ms": bare["p99_ms"],
            "fanout_p99_ratio": _ratio(plain["p99_ms"], bare["p99_ms"]),
            "slow_clients": slow_count,
            "p99_ms_with_slow": with_slow["p99_ms"],
            "slow_p99_ratio": _ratio(with_slow["p99_ms"], plain["p99_ms"]),
            "slow_closed": sum(closed.get(how, 0) for how in CLOSED_BY_SERVER),
        },
        notes=[
            f"uvicorn --ws {ws}, permessage-deflate {deflate}; client processes run games.benchmarks.ws_clients; "
            "latency = client's parse time - commit time (the phase change's; the bare peer's NOTIFY) on the same "
            f"host clock; a delta not received within {drain:.0f} s of its run's last change counts as infinite",
            "the reading clients are the same sockets with and without the never-reading ones; slow_closed counts "
            f"those the server closed within the run ({', '.join(CLOSED_BY_SERVER)})",
        ],
    )
