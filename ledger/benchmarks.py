"""``manage.py bench ledger``: the ledger's services side by side with raw
psycopg on the same table shape (and the ``eventsourcing`` library's
PostgreSQL recorder as a named peer), in a scratch database of their own.

1. single-command transactions (one event + one hold each), 8 writer
   processes, vs raw single-row INSERT commits and vs eventsourcing;
2. one 10,000-player settlement (events + hold posts/voids + payouts +
   statement lines + balances) in one transaction vs raw COPY of as many rows;
3. replay of a 100,000-event stream vs raw read-and-decode of the same rows,
   and vs the replay of a stream a tenth as long (``replay_growth``: linear
   in events when about 10).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import multiprocessing
import os
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from django.core.management import call_command
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction

from casino.bench import BenchResult, Writer, benchmark

CURRENCY = "EUR"


def _dsn(name: str) -> str:
    db = connection.settings_dict
    parts = [f"dbname={name}", f"host={db['HOST'] or '127.0.0.1'}", f"port={db['PORT'] or 5432}"]
    parts += [f"user={db['USER']}"] + ([f"password={db['PASSWORD']}"] if db["PASSWORD"] else [])
    return " ".join(parts)


#: Set (to anything) for runs that open many scratch databases in one process (the
#: test suite's bench smoke slice): the first is migrated once as a template of this
#: process, and every scratch database after it is a copy of it (``CREATE DATABASE
#: … TEMPLATE``, under a second instead of a migration's many seconds).
REUSE_TEMPLATE_ENV = "CASINO_BENCH_REUSE_TEMPLATE"
_templates: dict[str, str] = {}  # the owner's database -> its migrated template here


@contextmanager
def scratch_database() -> Iterator[str]:
    """A fresh, migrated database for the run; Django points at it meanwhile
    and the database is dropped afterwards. With ``CASINO_BENCH_REUSE_TEMPLATE``
    set, a copy of this process's migrated template (``_template``)."""
    original = connection.settings_dict["NAME"]
    name = f"{original}_bench_{os.getpid()}"
    admin_dsn = _dsn("postgres")
    template = _template(original, admin_dsn) if os.environ.get(REUSE_TEMPLATE_ENV) else None
    connections.close_all()
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
    connection.settings_dict["NAME"] = name
    try:
        if template is None:
            call_command("migrate", database=DEFAULT_DB_ALIAS, verbosity=0)  # the scratch database, not the owner's
        yield name
    finally:
        connections.close_all()
        connection.settings_dict["NAME"] = original
        with psycopg.connect(admin_dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _template(original: str, admin_dsn: str) -> str:
    """This process's migrated template of scratch databases (made on first use,
    dropped when the process exits). Nothing connects to it after its migration,
    as ``CREATE DATABASE … TEMPLATE`` requires."""
    if original in _templates:
        return _templates[original]
    name = f"{original}_benchtpl_{os.getpid()}"
    connections.close_all()
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    connection.settings_dict["NAME"] = name
    try:
        call_command("migrate", database=DEFAULT_DB_ALIAS, verbosity=0)
    finally:
        connections.close_all()
        connection.settings_dict["NAME"] = original
    _templates[original] = name

    def drop() -> None:
        with contextlib.suppress(psycopg.Error), psycopg.connect(admin_dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    atexit.register(drop)
    return name


# --- 1. single-command transactions, N writer processes --------------------------


def _ledger_writer(index: int, go: Any, stop_at: Any, out: Any) -> None:
    from ledger.services import NewEvent, StreamAppend, deposit, house_account, open_hold, player_accounts

    accounts = player_accounts(player_id=f"bench-{index}", currency=CURRENCY)
    house = house_account(table_id="bench", currency=CURRENCY)
    deposit(
        wallet=accounts.wallet,
        amount=10**12,
        currency=CURRENCY,
        external_reference=f"bench-{index}",
        idempotency_key=f"bench-fund-{index}",
        actor="bench",
    )
    prefix = uuid.uuid4().hex[:8]
    go.wait()
    count = 0
    while time.perf_counter() < stop_at.value:
        # The bench's own stream namespace: ``round-…-player-…`` belongs to the
        # house game, whose registered check (house_hold) rightly names a
        # pending hold in such a stream with no player round in play.
        stream = f"bench-bet-{prefix}-{count}"
        # A single-command transaction: called outside any transaction,
        # open_hold runs as one autocommitted statement.
        open_hold(
            source=accounts.wallet,
            escrow=accounts.held,
            destination=house,
            amount=100,
            currency=CURRENCY,
            idempotency_key=f"{stream}-bet",
            cause=StreamAppend(
                stream,
                0,
                [NewEvent("bench.bet_placed", {"amount": 100, "spot": "main"})],
                {"actor": f"player:{index}", "idempotency_key": f"{stream}-bet"},
            ),
        )
        count += 1
    out.put(count)
    connections.close_all()


def _raw_writer(index: int, go: Any, stop_at: Any, out: Any, dsn: str) -> None:
    from ledger.canonical import GENESIS_HASH

    prefix = uuid.uuid4().hex[:8]
    with psycopg.connect(dsn) as conn:
        go.wait()
        count = 0
        while time.perf_counter() < stop_at.value:
            conn.execute(
                "INSERT INTO raw_event (stream_id, version, type, schema_version, data, metadata, recorded_at, "
                "prev_hash, hash) VALUES (%s, 1, 'bench.bet_placed', 1, %s, %s, now(), %s, %s)",
                [
                    f"raw-{prefix}-{count}",
                    json.dumps({"amount": 100, "spot": "main"}),
                    json.dumps({"actor": f"player:{index}"}),
                    GENESIS_HASH,
                    GENESIS_HASH,
                ],
            )
            conn.commit()
            count += 1
    out.put(count)


def _eventsourcing_recorder(db_name: str) -> tuple[Any, Any]:
    """The eventsourcing library's PostgreSQL application recorder on the scratch database."""
    from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore

    db = connection.settings_dict
    datastore = PostgresDatastore(dbname=db_name, host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432,
                                  user=db["USER"], password=db["PASSWORD"] or "")  # fmt: skip
    return datastore, PostgresApplicationRecorder(datastore, events_table_name="es_stored_events")


def _eventsourcing_writer(index: int, go: Any, stop_at: Any, out: Any, db_name: str) -> None:
    from eventsourcing.persistence import StoredEvent

    datastore, recorder = _eventsourcing_recorder(db_name)
    state = json.dumps({"amount": 100, "spot": "main"}).encode()
    go.wait()
    count = 0
    while time.perf_counter() < stop_at.value:
        recorder.insert_events([StoredEvent(uuid.uuid4(), 1, "bench.bet_placed", state)])
        count += 1
    out.put(count)
    datastore.close()


def _run_writers(target: Callable[..., None], writers: int, seconds: float, *extra: Any) -> float:
    """Commits per second of ``writers`` processes running ``target`` for ``seconds``."""
    ctx = multiprocessing.get_context("fork")
    connections.close_all()  # children open their own connections
    go, out, stop_at = ctx.Event(), ctx.Queue(), ctx.Value("d", 0.0)
    processes = [ctx.Process(target=target, args=(i, go, stop_at, out, *extra)) for i in range(writers)]
    for process in processes:
        process.start()
    time.sleep(1.5)  # let every writer connect and set up
    start = time.perf_counter()
    stop_at.value = start + seconds
    go.set()
    counts = [out.get(timeout=seconds + 120) for _ in processes]
    elapsed = time.perf_counter() - start
    for process in processes:
        process.join(30)
    return sum(counts) / elapsed


def _setup_peers(db_name: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE raw_event (LIKE ledger_event INCLUDING ALL)")
        cursor.execute("CREATE TABLE raw_transfer (LIKE ledger_transfer INCLUDING ALL)")
        cursor.execute("CREATE TABLE raw_statement_line (LIKE ledger_statement_line INCLUDING ALL)")
    datastore, recorder = _eventsourcing_recorder(db_name)
    recorder.create_table()
    datastore.close()


# --- 2. a 10,000-player settlement in one transaction ---------------------------------


def _settlement_round(players: int, tag: str) -> tuple[dict[str, Any], tuple[int, int, int]]:
    """Bets for ``players`` (set up here), and the settlement of that round:
    three in four lose (stake posted to the house), one in four wins (stake
    released, 1:1 paid by the house)."""
    from ledger.services import (
        EventRef,
        HoldOpening,
        HoldSettlement,
        NewEvent,
        StreamAppend,
        TransferSpec,
        house_account,
        settle_batch,
    )
    from ledger.services.money import cashier_account

    house = house_account(table_id="bench-settle", currency=CURRENCY)
    cashier = cashier_account(currency=CURRENCY)
    with connection.cursor() as cursor:  # accounts for the players, in one statement
        cursor.execute(
            "INSERT INTO ledger_account (key, kind, owner, currency, may_go_negative, balance, created_at) "
            "SELECT k || ':' || %s || 'p' || n || ':EUR', k, %s || 'p' || n, 'EUR', false, 0, now() "
            "FROM generate_series(1, %s) n, unnest(ARRAY['wallet', 'held']) k",
            [tag, tag, players],
        )
        cursor.execute("SELECT key, id FROM ledger_account WHERE owner LIKE %s", [f"{tag}p%"])
        ids = dict(cursor.fetchall())
    wallets = [ids[f"wallet:{tag}p{n}:EUR"] for n in range(1, players + 1)]
    helds = [ids[f"held:{tag}p{n}:EUR"] for n in range(1, players + 1)]
    hold_ids = [uuid.uuid4() for _ in wallets]
    funding = [StreamAppend(f"account-{w}", 0, [NewEvent("bench.funded", {"amount": 10_000})]) for w in wallets]
    settle_batch(
        idempotency_key=f"{tag}-fund",
        currency=CURRENCY,
        appends=funding,
        transfers=[TransferSpec(cashier, w, 10_000, EventRef(f"account-{w}", 1), "deposit") for w in wallets],
    )
    bets = [
        StreamAppend(
            f"{tag}-p{n}", 0, [NewEvent("bench.bet_placed", {"amount": 500, "spot": "main"})], {"actor": f"player:{n}"}
        )
        for n in range(players)
    ]
    settle_batch(
        idempotency_key=f"{tag}-bets",
        currency=CURRENCY,
        appends=bets,
        open_holds=[
            HoldOpening(hold_ids[n], wallets[n], helds[n], house, 500, EventRef(f"{tag}-p{n}", 1))
            for n in range(players)
        ],
    )
    appends, holds, transfers = [], [], []
    for n in range(players):
        won = n % 4 == 0
        appends.append(
            StreamAppend(
                f"{tag}-p{n}",
                1,
                [NewEvent("bench.settled", {"won": won, "payout": 1000 if won else 0})],
                {"actor": "dealer"},
            )
        )
        holds.append(HoldSettlement(hold_ids[n], 0 if won else 500, EventRef(f"{tag}-p{n}", 2)))
        if won:
            transfers.append(TransferSpec(house, wallets[n], 500, EventRef(f"{tag}-p{n}", 2)))
    transfer_count = players + len(transfers)
    counts = (players, transfer_count, 2 * transfer_count)  # events, transfers, statement lines
    return {"appends": appends, "holds": holds, "transfers": transfers}, counts


def _raw_copy(dsn: str, counts: tuple[int, int, int], tag: str) -> float:
    """Seconds to COPY ``rows`` rows split like a settlement (events,
    transfers, statement lines) into same-shaped tables, in one transaction."""
    from ledger.canonical import GENESIS_HASH

    events, transfers, lines = counts
    data = json.dumps({"won": False, "payout": 0})
    meta = json.dumps({"actor": "dealer"})
    with psycopg.connect(dsn) as conn:
        cur = conn.cursor()
        cur.execute("SELECT id FROM ledger_event LIMIT 1")
        (event_id,) = cur.fetchone() or (1,)
        cur.execute("SELECT id FROM ledger_account ORDER BY id LIMIT 2")
        account_id, other_id = (row[0] for row in cur.fetchall())
        start = time.perf_counter()
        with cur.copy(
            "COPY raw_event (stream_id, version, type, schema_version, data, metadata, recorded_at, "
            "prev_hash, hash, txid) FROM STDIN"
        ) as copy:
            now = time.time()
            for n in range(events):
                copy.write_row(
                    (f"raw-{tag}-p{n}", 2, "bench.settled", 1, data, meta, _ts(now), GENESIS_HASH, GENESIS_HASH, 1)
                )
        with cur.copy(
            "COPY raw_transfer (debit_account_id, credit_account_id, amount, currency, kind, hold_id, "
            "event_id, created_at) FROM STDIN"
        ) as copy:
            for _ in range(transfers):
                copy.write_row((account_id, other_id, 500, CURRENCY, "post", uuid.uuid4(), event_id, _ts(now)))
        with cur.copy(
            "COPY raw_statement_line (account_id, transfer_id, event_id, amount, balance_after, created_at) FROM STDIN"
        ) as copy:
            for n in range(lines):
                copy.write_row((account_id, n // 2 + 1, event_id, -500, 9_500, _ts(now)))
        conn.commit()
        return time.perf_counter() - start


def _ts(epoch: float) -> Any:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(epoch, UTC)


# --- 3. replay of a 100,000-event stream -----------------------------------------------


def _fill_stream(stream: str, events: int) -> None:
    from ledger.services import NewEvent, StreamAppend, settle_batch

    batch = [NewEvent("bench.bet_placed", {"amount": n % 500 + 1, "spot": "main"}) for n in range(events)]
    settle_batch(
        idempotency_key=f"fill-{stream}",
        currency=CURRENCY,
        appends=[StreamAppend(stream, 0, batch, {"actor": "bench"})],
    )
    # The statistics autovacuum would gather within a minute of such a bulk insert.
    # Without them the planner expects ~50 rows for the stream, answers each page
    # of the replay by sorting every row after it, and the replay turns quadratic
    # in events (replay_growth 22.9 on 2026-11-28): a state of the scratch
    # database, not of a production one.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE ledger_event")


def _apply(state: tuple[int, int], event: Any) -> tuple[int, int]:
    return state[0] + 1, state[1] + event.data["amount"]


def _replay(stream: str) -> tuple[float, tuple[int, int]]:
    from ledger.services import replay

    start = time.perf_counter()
    state, _ = replay(stream_id=stream, apply=_apply, initial=(0, 0))
    return time.perf_counter() - start, state


def _raw_read(dsn: str, stream: str, batch: int = 5000) -> tuple[float, tuple[int, int]]:
    """Read the same rows with raw psycopg, decode data and metadata, fold the same sum."""
    start = time.perf_counter()
    count = total = 0
    with psycopg.connect(dsn) as conn:
        conn.adapters.register_loader("jsonb", psycopg.types.string.TextLoader)
        conn.adapters.register_loader("json", psycopg.types.string.TextLoader)  # ledger_event's columns
        cur = conn.cursor()
        after = 0
        while True:
            cur.execute(
                "SELECT id, txid, stream_id, version, type, schema_version, data, metadata, recorded_at, prev_hash, "
                "hash FROM ledger_event WHERE stream_id = %s AND version > %s ORDER BY version LIMIT %s",
                [stream, after, batch],
            )
            rows = cur.fetchall()
            for row in rows:
                data = json.loads(row[6])
                json.loads(row[7])
                count += 1
                total += data["amount"]
            if len(rows) < batch:
                break
            after = rows[-1][3]
    return time.perf_counter() - start, (count, total)


@benchmark("ledger")
def bench_ledger(
    *,
    out: Writer,
    writers: int = 8,
    seconds: float = 5.0,
    rounds: int = 2,
    players: int = 10_000,
    replay_events: int = 100_000,
    **options: Any,
) -> BenchResult:
    """Ledger vs raw psycopg (and eventsourcing): single commits, a round's settlement, replay."""
    if connection.vendor != "postgresql":  # the peers are PostgreSQL ones; `bench all` goes on
        note = "not run: bench ledger compares against raw psycopg on PostgreSQL; set DATABASE_URL"
        return BenchResult("Ledger vs raw psycopg", ["case"], [], {"not_run": note}, notes=[note])
    with scratch_database() as name:
        dsn = _dsn(name)
        _setup_peers(name)
        out.write(f"single commits: {writers} writer processes, {rounds} interleaved rounds x {seconds:.0f} s\n")
        # Interleaved rounds, so load from elsewhere on a shared machine hits all three alike.
        rates: dict[str, list[float]] = {"raw": [], "ledger": [], "eventsourcing": []}
        for _ in range(rounds):
            rates["raw"].append(_run_writers(_raw_writer, writers, seconds, dsn))
            rates["ledger"].append(_run_writers(_ledger_writer, writers, seconds))
            rates["eventsourcing"].append(_run_writers(_eventsourcing_writer, writers, seconds, name))
        raw_single, ledger_single, es_single = (sum(r) / len(r) for r in rates.values())

        out.write(f"settlement: {players:,} players\n")
        from ledger.services import settle_batch

        settle_seconds = raw_seconds = 0.0
        for round_no in range(rounds):  # interleaved with the raw COPY, like the writers
            request, counts = _settlement_round(players, f"r{round_no}")
            start = time.perf_counter()
            with transaction.atomic():
                settle_batch(idempotency_key=f"settle-r{round_no}", currency=CURRENCY, **request)
            settle_seconds += time.perf_counter() - start
            raw_seconds += _raw_copy(dsn, counts, f"r{round_no}")
        rows = sum(counts)
        settle_seconds, raw_seconds = settle_seconds / rounds, raw_seconds / rounds

        # Replay growth: the same replay of a stream a tenth as long, so replay time
        # is seen to be linear in events (``replay_growth``, target <= 11).
        small_events = max(1, replay_events // 10)
        out.write(f"replay: {replay_events:,} events (and {small_events:,})\n")
        _fill_stream("replay-1", replay_events)
        _fill_stream("replay-small", small_events)
        connections.close_all()
        replay_seconds = raw_read_seconds = replay_small_seconds = 0.0
        for _ in range(rounds):
            seconds_taken, replay_state = _replay("replay-1")
            replay_seconds += seconds_taken / rounds
            seconds_taken, raw_state = _raw_read(dsn, "replay-1")
            raw_read_seconds += seconds_taken / rounds
            if replay_state != raw_state:
                raise RuntimeError(f"replay disagrees with the raw read: {replay_state} != {raw_state}")
            seconds_taken, small_state = _replay("replay-small")
            replay_small_seconds += seconds_taken / rounds
            if small_state[0] != small_events:
                raise RuntimeError(f"replay of {small_events} events folded {small_state[0]}")

        from ledger.services.seals import seal_key
        from ledger.services.verify import verify_ledger

        problems = verify_ledger(key=seal_key())
        if problems:
            raise RuntimeError(f"the benchmark left an inconsistent ledger: {problems[0]}")

    figures = {
        "single_commits_per_s": round(ledger_single),
        "raw_single_commits_per_s": round(raw_single),
        "single_ratio": round(ledger_single / raw_single, 3),
        "eventsourcing_commits_per_s": round(es_single),
        "single_vs_eventsourcing": round(ledger_single / es_single, 2),
        "settle_rows": rows,
        "settle_rows_per_s": round(rows / settle_seconds),
        "raw_copy_rows_per_s": round(rows / raw_seconds),
        "settle_ratio": round(raw_seconds / settle_seconds, 3),
        "replay_events_per_s": round(replay_events / replay_seconds),
        "raw_read_events_per_s": round(replay_events / raw_read_seconds),
        "replay_ratio": round(raw_read_seconds / replay_seconds, 3),
        "replay_seconds": round(replay_seconds, 4),
        "replay_events": replay_events,
        "replay_seconds_small": round(replay_small_seconds, 4),
        "replay_events_small": small_events,
        "replay_growth": round(replay_seconds / replay_small_seconds, 3),
        "writers": writers,
    }
    rows_table = [
        [
            "single: event + hold per commit",
            figures["single_commits_per_s"],
            "raw INSERT commit",
            figures["raw_single_commits_per_s"],
            figures["single_ratio"],
            0.5,
        ],
        [
            "single: eventsourcing recorder",
            figures["eventsourcing_commits_per_s"],
            "raw INSERT commit",
            figures["raw_single_commits_per_s"],
            round(es_single / raw_single, 3),
            "-",
        ],
        [
            f"settle {players:,} players (rows/s)",
            figures["settle_rows_per_s"],
            "raw COPY rows/s",
            figures["raw_copy_rows_per_s"],
            figures["settle_ratio"],
            0.5,
        ],
        [
            f"replay {replay_events:,} events (events/s)",
            figures["replay_events_per_s"],
            "raw read+decode",
            figures["raw_read_events_per_s"],
            figures["replay_ratio"],
            0.7,
        ],
        [
            f"replay {replay_events:,} events (s)",
            figures["replay_seconds"],
            f"replay {small_events:,} events (s)",
            figures["replay_seconds_small"],
            figures["replay_growth"],
            "<= 11",
        ],
    ]
    return BenchResult(
        "Ledger vs raw psycopg (same table shapes, scratch database)",
        ["case", "ledger", "peer", "peer figure", "ratio", "target"],
        rows_table,
        figures,
        notes=[
            f"{writers} writer processes; every figure is the mean of {rounds} interleaved rounds",
            f"settlement writes {rows:,} rows (events, transfers, statement lines) and updates holds and balances",
            f"replay_growth = replay seconds of {replay_events:,} events / of {small_events:,} (target <= 11)",
        ],
    )
