"""Live-table benchmarks (issue 6), on PostgreSQL + Redis, each in a scratch database.

- ``bench live_round``: one shared-hand UTH round with N players (default
  10,000), each with Ante (+ automatic Ante Plus) and Best Five placed through
  ``place_chip``; ``decided`` of them (default: all) decide through
  ``make_decision`` (half call 4x preflop, half check and call 2x on the flop),
  the rest take the timeout defaults (check, check, fold).
  Timed: the dealer's advance at the end of the last decision window, which
  settles every wager and updates every balance in one transaction; beside it
  a raw COPY of the rows it wrote (``settle_ratio``), and the same round with
  ``small`` players (default 1,000: ``settle_growth``)
  (``games.benchmarks.live_round_peer``).
- ``bench bets``: chips through a real uvicorn server (``workers`` processes,
  default 2), each bet path beside its bare peer on the same server
  (``games.benchmarks.bare``) under the same load generator: websocket bets
  (``ws_clients`` sockets) beside the bare websocket peer, REST bets
  (``clients`` HTTP clients) beside the bare DRF endpoint; closed loop
  (``ws_ratio``, ``rest_ratio``), then each paced at half its peer's capacity
  (``ws_paced_p99_ratio``, ``rest_paced_p99_ratio``); ``verify_ledger`` after.

``bench fanout`` lives in ``games.benchmarks.fanout`` (it shares this module's
server and setup helpers).

Options: ``-o players=10000 [-o decided=N]``; ``-o clients=50 -o ws_clients=100
-o seconds=10 -o workers=2 -o players_per_client=1 -o pool=0 -o slices=3`` (``-o ws_rate=N
-o rate=N``: pace at a fixed rate instead of half the bare peer's capacity).
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
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
from games.house.services import assign_seat, start_table
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
def live_round(
    out: Writer, players: int = 10_000, small: int = 1_000, decided: int | None = None, seed: str = "live_round"
) -> BenchResult:
    """The settlement of ``players`` beside a raw COPY of the rows it writes
    (``settle_ratio``), and the same round with ``small`` players in the same run
    (``settle_growth``: seconds at ``players`` / at ``small``); money checked by
    ``verify_ledger`` at the end (``games.benchmarks.live_round_peer``). Both
    rounds are dealt from one ``seed``: the same cards, so the same outcome."""
    from games.benchmarks.live_round_peer import INSERTED, copy_peer, play_round, settlement_census
    from ledger.services.seals import seal_key
    from ledger.services.verify import verify_ledger

    players, small = int(players), int(small)
    decided = players if decided is None else int(decided)
    with scratch_database():
        dsn = database_url_of(connection.settings_dict)
        # The dealer worker builds the evaluator's tables when it starts (games.house.tasks),
        # so the timed showdown runs with them built, as it does in production.
        warm_up()
        runs, copies, census = {}, {}, {}
        setup_seconds = 0.0
        for size, code in ((small, "BR0"), (players, "BR1")):  # the small round first, on a younger database
            table = _table(code, betting_seconds=3600)
            started = time.perf_counter()
            ids = _players(table, size)
            setup_seconds = time.perf_counter() - started
            out.write(f"{size} players funded and seated in {setup_seconds:.1f} s (bulk)\n")
            run = play_round(out, table, ids, min(decided, size), seed=str(seed))
            census[size] = settlement_census(run)
            copies[size] = copy_peer(dsn, run)
            runs[size] = run
            out.write(f"{size} players: settled in {run.settle_seconds:.3f} s, raw COPY {copies[size]:.3f} s\n")
        problems = verify_ledger(key=seal_key())
        for problem in problems[:5]:
            out.write(f"verify_ledger: {problem}\n")
    big, little = runs[players], runs[small]
    written = census[players]
    rows = [[f"{size} players: advance from {phase}", round(seconds, 3)] for size, run in runs.items()
            for phase, seconds in run.steps]  # fmt: skip
    rows += [[f"{size} players: raw COPY of the settlement's rows", round(copies[size], 3)] for size in runs]
    rows += [[f"rows written at {players}: {table}", count] for table, count in written.items()]
    return BenchResult(
        title=f"live_round: shared-hand UTH, {players} and {small} players (Ante + Best Five; {decided} decide)",
        columns=["step", "seconds / rows"],
        rows=rows,
        figures={
            "players": players,
            "settle_seconds": round(big.settle_seconds, 3),
            "settle_copy_seconds": round(copies[players], 3),
            "settle_ratio": round(copies[players] / big.settle_seconds, 3),
            "small_players": small,
            "settle_seconds_small": round(little.settle_seconds, 3),
            "settle_copy_seconds_small": round(copies[small], 3),
            "settle_ratio_small": round(copies[small] / little.settle_seconds, 3),
            "settle_growth": round(big.settle_seconds / little.settle_seconds, 3),
            "settle_rows": sum(written[table] for table in INSERTED) + written["games_playerround (updated)"],
            "rows_written": written,
            "rows_written_small": census[small],
            "verify_ledger_problems": len(problems),
            "players_per_s": round(players / big.settle_seconds, 1),
            "decided_explicitly": decided,
            "decisions": big.decisions,
            "setup_seconds": round(setup_seconds, 1),
            "bet_placement_in_process_per_s": round(2 * players / big.bet_seconds, 1),
            "decisions_in_process_per_s": round(big.decisions / big.decide_seconds, 1) if big.decide_seconds else None,
        },
        notes=[
            "settle = the advance at the end of the last decision window (showdown, settlement, balances)",
            "peer: raw psycopg COPY of the rows the settlement inserted (events, transfers, statement lines) and of "
            "its player rows, into empty same-shaped tables; no UPDATE of holds or balances (as bench ledger's peer)",
            "settle_ratio = COPY seconds / settle seconds (target >= 0.3); "
            f"settle_growth = settle seconds at {players} / at {small} (target <= 11)",
        ],
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


def _ws_bet_load(base: str, path: str, tokens: list[str], seconds: float, rate: float | None = None) -> LoadResult:
    """One websocket per token to ``path`` (a table's ``/ws/tables/<id>/`` or the
    bare peer's ``/ws/bench/bare/``), each placing 100-unit Ante chips as ``bet``
    frames (``ws_bets``): closed loop, or ``rate`` bets/s in all."""
    url = base.replace("http://", "ws://") + f"{path}?ticket="
    body = {"type": "bet", **CHIP}
    result, codes = ws_bets.run_load(url=url, origin=base, tokens=tokens, body=body, seconds=seconds, rate=rate)
    if codes:
        print(f"bets over the websocket {path}: error codes {codes}", file=sys.stderr)
    return result


def _load_figures(result: LoadResult, elapsed: float) -> tuple[float, float, float]:
    """(answers per second, p50 ms, p99 ms); the rate over the load's own time
    (``result.seconds``: from its first request on), else over ``elapsed``."""
    ms = [v * 1000 for v in result.latencies]
    if not ms:
        return 0.0, float("nan"), float("nan")
    seconds = result.seconds or elapsed
    return round(len(ms) / seconds, 1), round(statistics.median(ms), 2), round(_pct(ms, 0.99), 2)


def _timed(run: Any) -> tuple[LoadResult, float, float]:
    """(result, wall seconds, this process's CPU seconds) of ``run()``."""
    started, cpu_started = time.perf_counter(), time.process_time()
    result = run()
    return result, time.perf_counter() - started, time.process_time() - cpu_started


def _ratio(figure: float, peer: float) -> float | None:
    return round(figure / peer, 3) if peer and math.isfinite(figure) and math.isfinite(peer) else None


@dataclass
class _Load:
    """One load's outcome: its table row and its figures."""

    name: str
    clients: int
    result: LoadResult
    elapsed: float
    cpu: float

    @property
    def figures(self) -> tuple[float, float, float]:
        return _load_figures(self.result, self.elapsed)

    @property
    def per_s(self) -> float:
        return self.figures[0]

    @property
    def p99(self) -> float:
        return self.figures[2]

    def row(self) -> list[Any]:
        return [self.name, self.clients, *self.figures, self.result.errors]


def _merged(parts: list[tuple[LoadResult, float, float]]) -> tuple[LoadResult, float, float]:
    """One load's slices ``(result, wall seconds, CPU seconds)`` as one."""
    result = LoadResult()
    for part, _, _ in parts:
        result.latencies += part.latencies
        for status, count in part.statuses.items():
            result.statuses[status] = result.statuses.get(status, 0) + count
        result.seconds += part.seconds
    return result, sum(wall for _, wall, _ in parts), sum(cpu for _, _, cpu in parts)


def _half(capacity: float, fixed: float) -> float:
    """The paced rate: ``fixed`` bets/s when given, else half the bare peer's
    measured ``capacity`` (at least 1/s)."""
    return fixed if fixed > 0 else max(1.0, round(capacity / 2, 1))


@benchmark("bets")
def bets(
    out: Writer,
    clients: int = 50,
    ws_clients: int = 100,
    seconds: float = 10.0,
    workers: int = 2,
    pool: int = 0,
    ws_rate: float = 0,
    rate: float = 0,
    players_per_client: int = 1,
    slices: int = 3,
) -> BenchResult:
    """Chips at one UTH table through one ``uvicorn --workers`` server, eight
    loads, each bet path beside its bare peer on the same
    server (``games.benchmarks.bare``: ticket or token, JSON parse, one
    ``INSERT``, JSON answer) under the same load generator:

    1. the bare websocket peer, closed loop: ``ws_clients`` sockets, each
       sending its next frame when the last was answered (capacity);
    2. websocket bets (group commit), closed loop, the same sockets' players;
    3. the bare websocket peer and 4. websocket bets, paced at half the bare
       peer's capacity (``ws_rate``: a fixed rate instead); latency from the
       scheduled time;
    5. the bare DRF endpoint, closed loop, ``clients`` keep-alive HTTP clients;
    6. REST bets (the chip endpoint), closed loop, the same clients' players;
    7. the bare DRF endpoint and 8. REST bets, paced at half the bare
       endpoint's capacity (``rate``: a fixed rate instead).

    Each load and its peer's run in turn in ``slices`` slices of
    ``seconds / slices`` (peer, path, peer, path...), so a burst of the
    machine's other work falls on both alike; each figure is over all its slices.
    Then ``verify_ledger`` over the scratch database (money exact).
    """
    from ledger.services.seals import seal_key
    from ledger.services.verify import verify_ledger

    clients, ws_clients, seconds, workers = int(clients), int(ws_clients), float(seconds), int(workers)
    pool, ws_rate, rate, per_client = int(pool), float(ws_rate), float(rate), int(players_per_client)
    slices = max(1, int(slices))
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
    bare_path, bare_ws_path = "/api/bench/bare/", "/ws/bench/bare/"
    with scratch_database():
        table = _table("BB1", betting_seconds=3600)
        rest_players = 2 * clients * per_client
        ws_players = 2 * ws_clients
        tokens = _tokens(_players(table, rest_players + ws_players + 1))
        rest_tokens, ws_tokens, warm_token = tokens[:rest_players], tokens[rest_players:-1], [[tokens[-1]]]
        groups = [rest_tokens[i : i + per_client] for i in range(0, rest_players, per_client)]
        # The closed and the paced loads bet as players of their own (a socket's
        # connection slot is released after it closes); each bare peer runs before
        # its bet path with the same players (it holds no slot).
        ws_closed_tokens, ws_paced_tokens = ws_tokens[:ws_clients], ws_tokens[ws_clients:]
        rest_closed_groups, rest_paced_groups = groups[:clients], groups[clients:]
        start_table(table_id=table.pk, now=timezone.now())
        path, ws_path = chip_path.format(table.pk), f"/ws/tables/{table.pk}/"
        loads: list[_Load] = []

        def pair(
            base: str, run: Any, n: int, peer: tuple[str, str], real: tuple[str, str], fixed: float, players: Any
        ) -> tuple[_Load, _Load, float, _Load, _Load]:
            """The bare peer and the real path (``(name, path)`` each) with ``n``
            clients, in turn slice by slice: closed loop as the first of ``players``,
            then paced at half the peer's capacity (or at ``fixed``) as the second:
            (peer, real, pace, peer paced, real paced)."""

            def alternate(who: Any, rate: float | None) -> tuple[_Load, _Load]:
                parts: list[list[tuple[LoadResult, float, float]]] = [[], []]
                for _ in range(slices):
                    for side, (_, path) in zip(parts, (peer, real), strict=True):
                        side.append(_timed(functools.partial(run, base, path, who, seconds / slices, rate)))
                how = f"paced at {rate:.0f}/s" if rate else "closed loop"
                names = (peer[0], real[0])
                both = [_Load(f"{name}, {how}", n, *_merged(side)) for name, side in zip(names, parts, strict=True)]
                loads.extend(both)
                return both[0], both[1]

            closed_who, paced_who = players
            peer_closed, real_closed = alternate(closed_who, None)
            pace = _half(peer_closed.per_s, fixed)
            return peer_closed, real_closed, pace, *alternate(paced_who, pace)

        with asgi_server(workers=workers, extra_env=server_env) as base:
            warm = min(1.0, seconds)  # one client on each path first: imports, connections, prepared statements
            for warm_path in (path, bare_path):
                _bet_load(base, warm_path, warm_token, warm)
            for warm_path in (ws_path, bare_ws_path):
                _ws_bet_load(base, warm_path, warm_token[0], warm)
            bare_ws, ws_closed, ws_pace, bare_ws_paced, ws_paced = pair(
                base, _ws_bet_load, ws_clients, ("bare websocket peer", bare_ws_path), ("websocket bets", ws_path),
                ws_rate, (ws_closed_tokens, ws_paced_tokens),
            )  # fmt: skip
            bare, rest_closed, rest_pace, bare_paced, rest_paced = pair(
                base, _bet_load, clients, ("bare DRF endpoint", bare_path), ("REST bets", path), rate,
                (rest_closed_groups, rest_paced_groups),
            )  # fmt: skip
        problems = verify_ledger(key=seal_key())
    if problems:
        out.write(f"verify_ledger: {len(problems)} problems, the first: {problems[0]}\n")
    errors = sum(one.result.errors for one in loads)
    figures: dict[str, Any] = {
        "ws_clients": ws_clients,
        "ws_p50_ms": ws_closed.figures[1],
        "ws_p99_ms": ws_closed.p99,
        "bare_ws_p99_ms": bare_ws.p99,
        "rest_clients": clients,
        "rest_p99_ms": rest_closed.p99,
        "bare_p99_ms": bare.p99,
        # The load generator's own CPU (it shares the two cores with the server).
        "load_generator_cpu_ms_per_ws_bet": round(ws_closed.cpu * 1000 / max(len(ws_closed.result.latencies), 1), 3),
        "load_generator_cpu_ms_per_rest_bet": round(
            rest_closed.cpu * 1000 / max(len(rest_closed.result.latencies), 1), 3
        ),
        "uvicorn_workers": workers,
        "pool_per_worker": pool,
        # The issue's keys last, each ratio after its figure and its peer's.
        "ws_bets_per_s": ws_closed.per_s,
        "bare_ws_per_s": bare_ws.per_s,
        "ws_ratio": _ratio(ws_closed.per_s, bare_ws.per_s),
        "rest_bets_per_s": rest_closed.per_s,
        "bare_per_s": bare.per_s,
        "rest_ratio": _ratio(rest_closed.per_s, bare.per_s),
        "ws_paced_rate": ws_pace,
        "ws_paced_p99_ms": ws_paced.p99,
        "bare_ws_paced_p99_ms": bare_ws_paced.p99,
        "ws_paced_p99_ratio": _ratio(ws_paced.p99, bare_ws_paced.p99),
        "rest_paced_rate": rest_pace,
        "rest_paced_p99_ms": rest_paced.p99,
        "bare_rest_paced_p99_ms": bare_paced.p99,
        "rest_paced_p99_ratio": _ratio(rest_paced.p99, bare_paced.p99),
        "errors": errors,
        "verify_ledger_problems": len(problems),
    }
    return BenchResult(
        title=f"bets: {seconds:g} s per load at one UTH table; uvicorn x{workers}",
        columns=["load", "clients", "bets_per_s", "p50_ms", "p99_ms", "errors"],
        rows=[one.row() for one in loads],
        figures=figures,
        notes=[
            "paced latency counts from each bet's scheduled send time (no coordinated omission)",
            "targets (issue 39): ws_ratio >= 0.6, rest_ratio >= 0.7, ws_paced_p99_ratio <= 3, "
            "rest_paced_p99_ratio <= 3",
        ],
    )
