"""Live-table benchmarks (issue 6), on PostgreSQL + Redis, each in a scratch database.

- ``bench live_round``: one shared-hand UTH round with N players (default
  10,000), each with Ante (+ automatic Ante Plus) and Best Five placed through
  ``place_chip``; ``decided`` of them (default: all) decide through
  ``make_decision`` (half call 4x preflop, half check and call 2x on the flop),
  the rest take the timeout defaults (check, check, fold).
  Timed: the dealer's advance at the end of the last decision window, which
  settles every wager and updates every balance in one transaction.
- ``bench bets``: ``clients`` (50) concurrent HTTP clients on loopback placing
  chips through a real uvicorn process (``workers`` processes, default 2):
  closed loop (capacity), then paced at ``rate`` bets/s (latency at that load).
- ``bench fanout``: ``clients`` (2,000) websockets on one table of a uvicorn
  process; time from a phase change's commit to each client receiving its
  delta, for each Redis channel layer (``layers``).

Options: ``-o players=10000 [-o decided=N]``, ``-o clients=50 -o seconds=10 -o
workers=2 -o rate=500 -o players_per_client=1 -o pool=0``, ``-o clients=2000 -o
changes=5 -o layers=core,pubsub -o drain=10``.
"""

from __future__ import annotations

import json
import logging
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from casino.bench import BenchResult, Writer, benchmark
from casino.processes import database_url_of, free_port, uvicorn_command
from games.benchmarks import http_clients
from games.benchmarks.http_clients import LoadResult
from games.cards.evaluator import warm_up
from games.house.models import HouseTable, TableSeat
from games.house.services import advance_table, make_decision, place_chip, start_table
from ledger.benchmarks import scratch_database
from ledger.models import Account, AccountKind
from ledger.services import EventRef, NewEvent, StreamAppend, TransferSpec, cashier_account, settle_batch
from ledger.services.money import account_key

ROOT = Path(__file__).resolve().parents[2]
# httpx logs every request at INFO: thousands of lines that bury the figures.
logging.getLogger("httpx").setLevel(logging.WARNING)
LAYERS = {
    "core": "channels_redis.core.RedisChannelLayer",
    "pubsub": "channels_redis.pubsub.RedisPubSubChannelLayer",
}
# Fanout variants: (relay delivery, channel layer). "local" hands deltas to the
# process's consumers directly (the layer then carries only chat and notices).
VARIANTS = {
    "local": ("local", LAYERS["core"]),
    "core": ("layer", LAYERS["core"]),
    "pubsub": ("layer", LAYERS["pubsub"]),
}
WIDE = {"min": 100, "max": 10_000_000}


def _table(code: str, *, betting_seconds: int = 60) -> HouseTable:
    return HouseTable.objects.create(
        code=code,
        name=f"bench {code}",
        game="uth",
        currency="EUR",
        limits={"ante": WIDE, "best_five": WIDE},
        pay_tables={"ante_plus": 1, "best_five": 1},
        betting_seconds=betting_seconds,
        warning_seconds=1,
        decision_seconds=5,
        deal_pause_seconds=1,
        between_rounds_seconds=1,
        is_open=True,
    )


def _players(table: HouseTable, count: int, funds: int = 10_000_000) -> list[int]:
    """``count`` players seated at ``table``, each funded with ``funds`` (setup in
    bulk: the accounts in one insert, every deposit in one ``settle_batch``)."""
    users = get_user_model().objects.bulk_create(
        [get_user_model()(username=f"bench-{uuid.uuid4().hex[:12]}") for _ in range(count)]
    )
    ids = [int(u.pk) for u in users]
    if funds:
        _fund(ids, funds)
    TableSeat.objects.bulk_create([TableSeat(table=table, player_id=pid) for pid in ids])
    return ids


def _fund(ids: list[int], funds: int, currency: str = "EUR") -> None:
    """Open every player's wallet and held accounts and deposit ``funds`` into each
    wallet from the cashier, all in one transaction (benchmark setup only)."""
    Account.objects.bulk_create(
        [
            Account(
                key=account_key(kind, f"player:{pid}", currency), kind=kind, owner=f"player:{pid}", currency=currency
            )
            for pid in ids
            for kind in (AccountKind.WALLET, AccountKind.HELD)
        ],
        batch_size=5000,
    )
    wallets = dict(
        Account.objects.filter(kind=AccountKind.WALLET, owner__in=[f"player:{pid}" for pid in ids]).values_list(
            "owner", "id"
        )
    )
    cashier = cashier_account(currency=currency)
    stream = f"bench-funding-{uuid.uuid4().hex[:12]}"
    cause = EventRef(stream, 1)
    with transaction.atomic():
        settle_batch(
            idempotency_key=f"{stream}:ledger",
            currency=currency,
            appends=[StreamAppend(stream, 0, [NewEvent("bench.funded", {"players": len(ids), "each": funds})], {})],
            transfers=[TransferSpec(cashier, wallets[f"player:{pid}"], funds, cause, "deposit") for pid in ids],
        )


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


# --- live_round ------------------------------------------------------------------------------


@benchmark("live_round")
def live_round(out: Writer, players: int = 10_000, decided: int | None = None) -> BenchResult:
    players = int(players)
    decided = players if decided is None else int(decided)
    with scratch_database():
        table = _table("BR1", betting_seconds=3600)
        started = time.perf_counter()
        ids = _players(table, players)
        setup_seconds = time.perf_counter() - started
        out.write(f"{players} players funded and seated in {setup_seconds:.1f} s (bulk)\n")
        # The dealer worker builds the evaluator's tables when it starts (games.house.tasks),
        # so the timed showdown runs with them built, as it does in production.
        warm_up()
        tick = start_table(table_id=table.pk, now=timezone.now())
        assert tick.deadline is not None
        at = tick.deadline - timedelta(seconds=1)
        started = time.perf_counter()
        for pid in ids:
            for spot in ("ante", "best_five"):
                place_chip(
                    table_id=table.pk, player_id=pid, spot=spot, amount=100, idempotency_key=f"b-{pid}-{spot}", now=at
                )
        bet_seconds = time.perf_counter() - started
        out.write(f"{2 * players} chips in {bet_seconds:.1f} s ({2 * players / bet_seconds:.0f}/s, in process)\n")
        dealt = advance_table(table_id=table.pk, expected_seq=tick.phase_seq, now=tick.deadline)
        assert dealt is not None
        assert dealt.phase == "preflop", dealt
        tick = dealt
        # Preflop: every deciding player decides (even ones call 4x, odd ones check);
        # on the flop the checkers call 2x, so no river window is needed and the flop
        # window is the last one. The rest (``decided`` < players) take the defaults.
        deciders = ids[:decided]
        plan = [("preflop", [(pid, "call4x" if i % 2 == 0 else "check") for i, pid in enumerate(deciders)]),
                ("flop", [(pid, "call2x") for i, pid in enumerate(deciders) if i % 2 == 1])]  # fmt: skip
        decisions = 0
        decide_seconds = 0.0
        steps: list[tuple[str, float]] = []
        for street, choices in plan:
            assert tick.phase == street, (tick.phase, street)
            assert tick.deadline is not None
            decide_at = tick.deadline - timedelta(seconds=1)
            started = time.perf_counter()
            result = None
            for pid, option in choices:
                result = make_decision(table_id=table.pk, player_id=pid, option=option,
                                       idempotency_key=f"d-{street}-{pid}", now=decide_at)  # fmt: skip
            decide_seconds += time.perf_counter() - started
            decisions += len(choices)
            if result is not None and decided == players:
                assert result.all_decided, f"the last {street} decision must report everyone decided"
            started = time.perf_counter()
            nxt = advance_table(table_id=table.pk, expected_seq=tick.phase_seq, now=tick.deadline)
            steps.append((street, time.perf_counter() - started))
            assert nxt is not None
            tick = nxt
        while tick.phase not in ("between", "idle"):
            phase = tick.phase
            started = time.perf_counter()
            assert tick.deadline is not None
            nxt = advance_table(table_id=table.pk, expected_seq=tick.phase_seq, now=tick.deadline)
            steps.append((phase, time.perf_counter() - started))
            assert nxt is not None
            tick = nxt
        out.write(f"{decisions} decisions in {decide_seconds:.1f} s ({decisions / decide_seconds:.0f}/s, in process)\n")
        settle_seconds = steps[-1][1]
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM games_playerround WHERE status = 'settled'")
            settled = cursor.fetchone()[0]
        assert settled == players, (settled, players)
    rows = [[f"advance from {phase}", round(seconds, 3)] for phase, seconds in steps]
    return BenchResult(
        title=f"live_round: shared-hand UTH, {players} players (Ante + Best Five; {decided} decide explicitly)",
        columns=["step", "seconds"],
        rows=rows,
        figures={
            "players": players,
            "settle_seconds": round(settle_seconds, 3),
            "players_per_s": round(players / settle_seconds, 1),
            "decided_explicitly": decided,
            "decisions": decisions,
            "setup_seconds": round(setup_seconds, 1),
            "bet_placement_in_process_per_s": round(2 * players / bet_seconds, 1),
            "decisions_in_process_per_s": round(decisions / decide_seconds, 1) if decide_seconds else None,
        },
        notes=["settle = the advance at the end of the last decision window (showdown, settlement, balances)"],
    )


# --- an ASGI server for bets and fanout ----------------------------------------------------------


@contextmanager
def asgi_server(
    *, workers: int = 1, layer: str | None = None, delivery: str | None = None, extra_env: dict[str, str] | None = None
) -> Iterator[str]:
    """A uvicorn process tree on the current (scratch) database; yields its base URL."""
    import httpx

    port = free_port()
    env = dict(
        os.environ, DATABASE_URL=database_url_of(connection.settings_dict), PYTHONUNBUFFERED="1", LOG_LEVEL="WARNING"
    )
    if layer:
        env["CHANNEL_LAYER_BACKEND"] = layer
    if delivery:
        env["CASINO_RELAY_DELIVERY"] = delivery
    env |= extra_env or {}
    command = uvicorn_command(host="127.0.0.1", port=port, extra=["--log-level", "warning", "--workers", str(workers)])
    process = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{base}/api/", timeout=2)
                break
            except httpx.HTTPError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("uvicorn did not start") from None
                time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _tokens(ids: list[int]) -> list[str]:
    from rest_framework.authtoken.models import Token

    return [Token.objects.create(user_id=pid).key for pid in ids]


# --- bets ---------------------------------------------------------------------------------------


def _bet_load(
    base: str, table_id: int, tokens: list[list[str]], seconds: float, rate: float | None = None
) -> LoadResult:
    """One client per entry of ``tokens`` places 100-unit Ante chips for ``seconds``,
    for each of its players in turn (see ``http_clients``)."""
    host, port = base.removeprefix("http://").split(":")
    result = http_clients.run(
        http_clients.post_load(
            host=host, port=int(port), path=f"/api/tables/{table_id}/bets/chip/",
            clients=[[{"Authorization": f"Token {t}"} for t in group] for group in tokens],
            body=json.dumps({"spot": "ante", "amount": 100}).encode(), seconds=seconds, rate=rate,
        )
    )  # fmt: skip
    if result.errors:
        print(f"bets: answers by status: {result.statuses}", file=sys.stderr)
    return result


def _load_figures(result: LoadResult, elapsed: float) -> tuple[float, float, float]:
    """(answers per second, p50 ms, p99 ms)."""
    ms = [v * 1000 for v in result.latencies]
    return round(len(ms) / elapsed, 1), round(statistics.median(ms), 2), round(_pct(ms, 0.99), 2)


@benchmark("bets")
def bets(
    out: Writer,
    clients: int = 50,
    seconds: float = 10.0,
    workers: int = 2,
    pool: int = 0,
    rate: float = 500,
    players_per_client: int = 1,
) -> BenchResult:
    """Closed loop first (capacity), then paced at ``rate`` bets/s by as many other
    players (latency at that load, counted from each bet's scheduled time)."""
    clients, seconds, workers, pool, rate = int(clients), float(seconds), int(workers), int(pool), float(rate)
    per_client = int(players_per_client)
    # ``pool``: psycopg pool connections per worker; 0 (default, as deployed):
    # each of the worker's HTTP threads keeps its own connection.
    server_env = {"DB_POOL_MAX_SIZE": str(pool)}
    with scratch_database():
        table = _table("BB1", betting_seconds=3600)
        tokens = _tokens(_players(table, 2 * clients * per_client + 1))
        groups = [tokens[i : i + per_client] for i in range(0, 2 * clients * per_client, per_client)]
        closed_tokens, paced_tokens, warm_token = groups[:clients], groups[clients:], [[tokens[-1]]]
        start_table(table_id=table.pk, now=timezone.now())
        with asgi_server(workers=workers, extra_env=server_env) as base:
            _bet_load(base, table.pk, warm_token, 1.0)
            started, cpu_started = time.perf_counter(), time.process_time()
            closed = _bet_load(base, table.pk, closed_tokens, seconds)
            elapsed, client_cpu = time.perf_counter() - started, time.process_time() - cpu_started
            paced_started = time.perf_counter()
            paced = _bet_load(base, table.pk, paced_tokens, seconds, rate=rate) if rate else None
            paced_elapsed = time.perf_counter() - paced_started
    bets_per_s, p50, p99 = _load_figures(closed, elapsed)
    figures: dict[str, Any] = {
        "clients": clients,
        "bets": len(closed.latencies),
        "errors": closed.errors,
        "bets_per_s": bets_per_s,
        "p50_ms": p50,
        "p99_ms": p99,
        # The load generator's own CPU (it shares the two cores with the server).
        "load_generator_cpu_ms_per_bet": round(client_cpu * 1000 / max(len(closed.latencies), 1), 2),
    }
    if paced is not None:
        paced_per_s, paced_p50, paced_p99 = _load_figures(paced, paced_elapsed)
        figures |= {"paced_rate": rate, "paced_bets_per_s": paced_per_s, "paced_p50_ms": paced_p50,
                    "paced_p99_ms": paced_p99, "paced_errors": paced.errors}  # fmt: skip
    figures |= {"uvicorn_workers": workers, "pool_per_worker": pool}
    return BenchResult(
        title=f"bets: {clients} concurrent HTTP clients, {seconds:.0f} s closed loop, then paced at {rate:.0f}/s; "
        f"uvicorn x{workers}",
        columns=list(figures),
        rows=[list(figures.values())],
        figures=figures,
    )


# --- fanout -------------------------------------------------------------------------------------


def _client_fleet(url: str, origin: str, tokens: list[str], procs: int, deflate: bool) -> list[subprocess.Popen[str]]:
    """``procs`` client processes (``games.benchmarks.ws_clients``), each holding
    its share of the sockets; returns once every socket has its snapshot."""
    fleet = []
    for index in range(procs):
        child = subprocess.Popen(
            [sys.executable, "-m", "games.benchmarks.ws_clients"],
            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert child.stdin is not None
        share = tokens[index::procs]
        child.stdin.write(json.dumps({"url": url, "origin": origin, "tokens": share, "deflate": deflate}) + "\n")
        child.stdin.flush()
        fleet.append(child)
    for child in fleet:
        assert child.stdout is not None
        line = child.stdout.readline()
        if not line.startswith("connected"):
            raise RuntimeError(f"a fanout client process failed: {line!r}")
    return fleet


def _collect(fleet: list[subprocess.Popen[str]]) -> dict[int, list[float]]:
    received: dict[int, list[float]] = {}
    for child in fleet:
        assert child.stdin is not None
        assert child.stdout is not None
        child.stdin.write("stop\n")
        child.stdin.flush()
        for seq, times in json.loads(child.stdout.readline())["received"].items():
            received.setdefault(int(seq), []).extend(times)
        child.wait(timeout=60)
    return received


def _fanout(
    base: str,
    table_id: int,
    tokens: list[str],
    *,
    changes: int,
    procs: int,
    deflate: bool,
    drain: float,
    out: Writer,
) -> list[float]:
    """Connect the fleet, commit ``changes`` phase changes 2 s apart, wait ``drain``
    seconds after the last, return every (client, delta) latency in ms (``inf``
    for a delta a client had not received by then)."""
    url = base.replace("http://", "ws://") + f"/ws/tables/{table_id}/?token="
    fleet = _client_fleet(url, base, tokens, procs, deflate)
    try:
        out.write(f"{len(tokens)} websockets connected from {procs} client processes\n")
        commits: dict[int, float] = {}
        for change in range(changes):
            table = HouseTable.objects.get(pk=table_id)
            with transaction.atomic():
                advance_table(table_id=table.pk, expected_seq=table.phase_seq, now=table.deadline or timezone.now())
            committed = time.time()
            after = HouseTable.objects.get(pk=table_id).public_seq
            for seq in range(table.public_seq + 1, after + 1):
                commits[seq] = committed
            # The last change gets the drain: a slow layer still delivers it late.
            time.sleep(max(2.0, drain) if change == changes - 1 else 2.0)
        received = _collect(fleet)
    finally:
        for child in fleet:
            if child.poll() is None:
                child.kill()
                child.wait()
    latencies: list[float] = []
    for seq, at in commits.items():
        times = received.get(seq, [])
        out.write(f"seq {seq}: {len(times)} of {len(tokens)} clients\n")
        latencies.extend((t - at) * 1000 for t in times)
        latencies.extend([float("inf")] * (len(tokens) - len(times)))
    return latencies


@benchmark("fanout")
def fanout(
    out: Writer,
    clients: int = 2000,
    changes: int = 5,
    layers: str = "local,core,pubsub",
    procs: int = 2,
    workers: int = 1,
    ws: str = "auto",
    deflate: str = "off",
    client_deflate: str = "on",
    drain: float = 10.0,
) -> BenchResult:
    clients, changes, procs, workers = int(clients), int(changes), int(procs), int(workers)
    drain = float(drain)
    if not settings.REDIS_URL:
        raise SystemExit("bench fanout needs REDIS_URL (the Redis channel layers are compared)")
    server_env = {"UVICORN_WS": ws, "UVICORN_WS_PER_MESSAGE_DEFLATE": "true" if deflate == "on" else "false"}
    rows = []
    results: dict[str, dict[str, float]] = {}
    with scratch_database():
        table = _table("BF1", betting_seconds=2)
        tokens = _tokens(_players(table, clients, funds=0))
        for name in layers.split(","):
            start_table(table_id=table.pk, now=timezone.now() - timedelta(seconds=60))
            delivery, layer = VARIANTS[name]
            with asgi_server(layer=layer, delivery=delivery, workers=workers, extra_env=server_env) as base:
                ms = _fanout(
                    base,
                    table.pk,
                    tokens,
                    changes=changes,
                    procs=procs,
                    deflate=client_deflate == "on",
                    drain=drain,
                    out=out,
                )
            finite = [v for v in ms if v != float("inf")]
            results[name] = {
                "p50_ms": round(_pct(finite, 0.5), 1),
                "p99_ms": round(_pct(ms, 0.99), 1),
                "max_ms": round(max(ms), 1),
                "missed": len(ms) - len(finite),
            }
            rows.append([name, f"{delivery}, {layer.rsplit('.', 2)[-2]}", *results[name].values()])
    best = min(results, key=lambda n: results[n]["p99_ms"])
    if ws == "auto":  # what `make run` serves with: name the implementation uvicorn picked
        from uvicorn.protocols.websockets.auto import AutoWebSocketsProtocol

        ws = f"auto ({getattr(AutoWebSocketsProtocol, '__name__', 'none')})"
    return BenchResult(
        title=f"fanout: {clients} websockets on one table, {changes} phase changes per layer",
        columns=["variant", "delivery, layer", "p50_ms", "p99_ms", "max_ms", "missed"],
        rows=rows,
        figures={
            "clients": clients,
            "p99_ms": results[best]["p99_ms"],
            "layer": f"{best}: relay delivery {VARIANTS[best][0]}, {VARIANTS[best][1]}",
            **{f"{n}_p99_ms": r["p99_ms"] for n, r in results.items()},
            "uvicorn_workers": workers,
            "ws": ws,
            "server_deflate": deflate,
            "client_procs": procs,
        },
        notes=[
            f"uvicorn x{workers} --ws {ws}, permessage-deflate {deflate}; {procs} client processes "
            "(games.benchmarks.ws_clients); latency = client's parse time - phase-change commit time (same host clock)"
        ],
    )
