"""Live-table benchmarks (issue 6), on PostgreSQL + Redis, each in a scratch database.

- ``bench live_round``: one shared-hand UTH round with N players (default
  10,000), each with Ante (+ automatic Ante Plus) and Best Five placed through
  ``place_chip``; ``decided`` of them (default: all) decide through
  ``make_decision`` (half call 4x preflop, half check and call 2x on the flop),
  the rest take the timeout defaults (check, check, fold).
  Timed: the dealer's advance at the end of the last decision window, which
  settles every wager and updates every balance in one transaction.
- ``bench bets``: chips through a real uvicorn server (``workers`` processes,
  default 2) over the websocket (``ws_clients`` sockets: closed loop, then
  paced at ``ws_rate``) and over REST (``clients`` HTTP clients: closed loop,
  the bare DRF endpoint as its peer, then paced at ``rate``).

``bench fanout`` lives in ``games.benchmarks.fanout`` (it shares this module's
server and setup helpers).

Options: ``-o players=10000 [-o decided=N]``; ``-o clients=50 -o ws_clients=100
-o seconds=10 -o workers=2 -o ws_rate=1000 -o rate=250 -o players_per_client=1
-o pool=0``.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from casino.bench import BenchResult, Writer, benchmark
from casino.processes import database_url_of, free_port, uvicorn_command
from games.benchmarks import http_clients, ws_bets
from games.benchmarks.http_clients import LoadResult
from games.cards.evaluator import warm_up
from games.house.models import HouseTable
from games.house.services import advance_table, assign_seat, make_decision, place_chip, start_table
from ledger.benchmarks import scratch_database
from ledger.models import Account, AccountKind
from ledger.services import EventRef, NewEvent, StreamAppend, TransferSpec, cashier_account, settle_batch
from ledger.services.money import account_key

ROOT = Path(__file__).resolve().parents[2]
# httpx logs every request at INFO: thousands of lines that bury the figures.
logging.getLogger("httpx").setLevel(logging.WARNING)
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
    with transaction.atomic():
        for pid in ids:  # seats are taken by events (their rows are projections)
            assign_seat(table_id=table.pk, player_id=pid)
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
    *, workers: int = 1, extra_env: dict[str, str] | None = None, log: Path | None = None, args: Sequence[str] = ()
) -> Iterator[str]:
    """A uvicorn process tree on the current (scratch) database; yields its base
    URL. ``log``: a file for its output (appended), else this process's.
    ``args``: more uvicorn options (a repeated option's last value wins)."""
    import httpx

    port = free_port()
    env = dict(
        os.environ, DATABASE_URL=database_url_of(connection.settings_dict), PYTHONUNBUFFERED="1", LOG_LEVEL="WARNING"
    )
    env |= extra_env or {}
    command = uvicorn_command(
        host="127.0.0.1", port=port,
        # A bounded shutdown: open sockets and the feed's tasks are cancelled after 2 s, not waited for.
        extra=["--log-level", "warning", "--workers", str(workers), "--timeout-graceful-shutdown", "2", *args],
    )  # fmt: skip
    output = log.open("ab") if log is not None else None
    process = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True, stdout=output, stderr=output)
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
        # The whole process group (uvicorn's workers too) before the scratch database goes.
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        if output is not None:
            output.close()


def _tokens(ids: list[int]) -> list[str]:
    from django.contrib.auth import get_user_model

    from casino.auth import issue_token

    users = get_user_model().objects.in_bulk(ids)
    return [issue_token(user=users[pid]) for pid in ids]


# --- bets ---------------------------------------------------------------------------------------

CHIP = {"spot": "ante", "amount": 100}


def _bet_load(base: str, path: str, tokens: list[list[str]], seconds: float, rate: float | None = None) -> LoadResult:
    """One HTTP client per entry of ``tokens`` POSTs a 100-unit Ante chip to
    ``path`` for ``seconds``, for each of its players in turn (``http_clients``)."""
    host, port = base.removeprefix("http://").split(":")
    result = http_clients.run(
        http_clients.post_load(
            host=host, port=int(port), path=path,
            clients=[[{"Authorization": f"Token {t}"} for t in group] for group in tokens],
            body=json.dumps(CHIP).encode(), seconds=seconds, rate=rate,
        )
    )  # fmt: skip
    if result.errors:
        print(f"bets {path}: answers by status: {result.statuses}", file=sys.stderr)
    return result


def _ws_bet_load(base: str, table_id: int, tokens: list[str], seconds: float, rate: float | None = None) -> LoadResult:
    """One websocket per token, each placing 100-unit Ante chips as ``bet`` frames
    (``ws_bets``): closed loop, or ``rate`` bets/s in all."""
    url = base.replace("http://", "ws://") + f"/ws/tables/{table_id}/?ticket="
    body = {"type": "bet", **CHIP}
    result, codes = ws_bets.run_load(url=url, origin=base, tokens=tokens, body=body, seconds=seconds, rate=rate)
    if codes:
        print(f"bets over the websocket: error codes {codes}", file=sys.stderr)
    return result


def _load_figures(result: LoadResult, elapsed: float) -> tuple[float, float, float]:
    """(answers per second, p50 ms, p99 ms)."""
    ms = [v * 1000 for v in result.latencies]
    if not ms:
        return 0.0, float("nan"), float("nan")
    return round(len(ms) / elapsed, 1), round(statistics.median(ms), 2), round(_pct(ms, 0.99), 2)


def _timed(run: Any) -> tuple[LoadResult, float, float]:
    """(result, wall seconds, this process's CPU seconds) of ``run()``."""
    started, cpu_started = time.perf_counter(), time.process_time()
    result = run()
    return result, time.perf_counter() - started, time.process_time() - cpu_started


@benchmark("bets")
def bets(
    out: Writer,
    clients: int = 50,
    ws_clients: int = 100,
    seconds: float = 10.0,
    workers: int = 2,
    pool: int = 0,
    ws_rate: float = 1000,
    rate: float = 250,
    players_per_client: int = 1,
) -> BenchResult:
    """Chips at one UTH table through one ``uvicorn --workers`` server, five loads
    one after the other, each from players of its own:

    1. websocket, closed loop: ``ws_clients`` sockets, each sending its next
       ``bet`` frame when the last was acknowledged (capacity);
    2. websocket, paced at ``ws_rate`` bets/s (latency from the scheduled time);
    3. REST, closed loop: ``clients`` keep-alive HTTP clients on the chip endpoint;
    4. the bare DRF endpoint (``games.benchmarks.bare``: token, parse, one
       INSERT, JSON), closed loop, same clients: the REST path's peer;
    5. REST, paced at ``rate`` bets/s.
    """
    clients, ws_clients, seconds, workers = int(clients), int(ws_clients), float(seconds), int(workers)
    pool, ws_rate, rate, per_client = int(pool), float(ws_rate), float(rate), int(players_per_client)
    # ``pool``: psycopg pool connections per worker; 0 (default, as deployed):
    # each of the worker's HTTP threads keeps its own connection.
    # The websocket's per-connection message rate (CASINO_WS_RATE 10 a second,
    # CASINO_WS_BURST 20) is opened, as the backpressure tests open it: a
    # closed-loop socket sends its next bet as soon as the last is answered, so
    # once a bet takes under 100 ms it runs into the limit (refused rate_limited,
    # then closed 1008 after CASINO_WS_FLOOD_CLOSE refusals in a row), and the
    # load would measure the limit, not the server.
    unlimited = {"CASINO_WS_RATE": "100000", "CASINO_WS_BURST": "100000", "CASINO_WS_FLOOD_CLOSE": "100000"}
    server_env = {"DB_POOL_MAX_SIZE": str(pool), "CASINO_BENCH_ENDPOINTS": "true", **unlimited}
    chip_path = "/api/tables/{}/bets/chip/"
    with scratch_database():
        table = _table("BB1", betting_seconds=3600)
        rest_players = 2 * clients * per_client
        ws_players = 2 * ws_clients
        tokens = _tokens(_players(table, rest_players + ws_players + 1))
        rest_tokens, ws_tokens, warm_token = tokens[:rest_players], tokens[rest_players:-1], [[tokens[-1]]]
        groups = [rest_tokens[i : i + per_client] for i in range(0, rest_players, per_client)]
        start_table(table_id=table.pk, now=timezone.now())
        path = chip_path.format(table.pk)
        with asgi_server(workers=workers, extra_env=server_env) as base:
            _bet_load(base, path, warm_token, 1.0)
            _ws_bet_load(base, table.pk, warm_token[0], 1.0)
            ws_closed, ws_elapsed, ws_cpu = _timed(
                lambda: _ws_bet_load(base, table.pk, ws_tokens[:ws_clients], seconds)
            )
            ws_paced, ws_paced_elapsed, _ = _timed(
                lambda: _ws_bet_load(base, table.pk, ws_tokens[ws_clients:], seconds, rate=ws_rate)
            )
            rest_closed, rest_elapsed, rest_cpu = _timed(lambda: _bet_load(base, path, groups[:clients], seconds))
            bare, bare_elapsed, _ = _timed(lambda: _bet_load(base, "/api/bench/bare/", groups[:clients], seconds))
            rest_paced, rest_paced_elapsed, _ = _timed(
                lambda: _bet_load(base, path, groups[clients:], seconds, rate=rate)
            )
    ws_per_s, ws_p50, ws_p99 = _load_figures(ws_closed, ws_elapsed)
    ws_paced_per_s, ws_paced_p50, ws_paced_p99 = _load_figures(ws_paced, ws_paced_elapsed)
    rest_per_s, rest_p50, rest_p99 = _load_figures(rest_closed, rest_elapsed)
    bare_per_s, bare_p50, bare_p99 = _load_figures(bare, bare_elapsed)
    rest_paced_per_s, rest_paced_p50, rest_paced_p99 = _load_figures(rest_paced, rest_paced_elapsed)
    rows = [
        ["websocket, closed loop", ws_clients, ws_per_s, ws_p50, ws_p99, ws_closed.errors],
        [f"websocket, paced at {ws_rate:.0f}/s", ws_clients, ws_paced_per_s, ws_paced_p50, ws_paced_p99,
         ws_paced.errors],
        ["REST, closed loop", clients, rest_per_s, rest_p50, rest_p99, rest_closed.errors],
        ["bare DRF endpoint, closed loop", clients, bare_per_s, bare_p50, bare_p99, bare.errors],
        [f"REST, paced at {rate:.0f}/s", clients, rest_paced_per_s, rest_paced_p50, rest_paced_p99, rest_paced.errors],
    ]  # fmt: skip
    figures: dict[str, Any] = {
        "ws_clients": ws_clients,
        "ws_p50_ms": ws_p50,
        "ws_p99_ms": ws_p99,
        "ws_errors": ws_closed.errors + ws_paced.errors,
        "rest_clients": clients,
        "rest_p99_ms": rest_p99,
        "rest_errors": rest_closed.errors + rest_paced.errors + bare.errors,
        # The load generator's own CPU (it shares the two cores with the server).
        "load_generator_cpu_ms_per_ws_bet": round(ws_cpu * 1000 / max(len(ws_closed.latencies), 1), 3),
        "load_generator_cpu_ms_per_rest_bet": round(rest_cpu * 1000 / max(len(rest_closed.latencies), 1), 3),
        "uvicorn_workers": workers,
        "pool_per_worker": pool,
        # The issue's keys last, in its order.
        "ws_bets_per_s": ws_per_s,
        "ws_paced_rate": ws_rate,
        "ws_paced_p99_ms": ws_paced_p99,
        "rest_bets_per_s": rest_per_s,
        "bare_per_s": bare_per_s,
        "rest_ratio": round(rest_per_s / bare_per_s, 3) if bare_per_s else None,
        "rest_paced_rate": rate,
        "rest_paced_p99_ms": rest_paced_p99,
    }
    return BenchResult(
        title=f"bets: {seconds:.0f} s per load at one UTH table; uvicorn x{workers}",
        columns=["load", "clients", "bets_per_s", "p50_ms", "p99_ms", "errors"],
        rows=rows,
        figures=figures,
        notes=["paced latency counts from each bet's scheduled send time (no coordinated omission)"],
    )
