"""The poker action as a service call beside a raw psycopg transaction doing
the same reads and writes (issue #39, ``bench commands``: ``poker_action_ratio``).

``measure_poker_action`` runs inside an open ``ledger.benchmarks.scratch_database()``
(``bench commands`` calls it; ``bench poker_action`` runs it alone). It seats
``players`` funded players at a no-limit ring table (blinds 5/10, deep
stacks) and plays ``actions`` player actions through ``services.act``: every
player calls preflop (the big blind checks) and checks every later street,
so hands go to showdown and a new one is dealt by the dealer's step
(``advance_table``, not timed) between them.

The floor: for every service action of a round, a raw psycopg 3 transaction
(on its own connection, autocommit off) writes what that action wrote into
tables shaped like the real ones (``CREATE TABLE raw_x (LIKE x INCLUDING
ALL)``, as ``bench ledger`` does): it locks the table row, claims the
idempotency key, reads the hand row, the stream head and the seats dealt
in, appends the same events (the same data with their money legs, the same
metadata) hash-chained and MACed, applies the same ledger legs (balances by
conditional UPDATE, transfer rows, two statement lines each), updates the
projection rows (the hand, the seats whose stack moved, at a hand's end its
players and its deal key) and the table's phase, records the command's
result and commits, in the three round trips the service's lean path takes:
its reads in one pipeline (the ids of the rows it inserts drawn from their
sequences there too, and the accounts the legs move locked and read, so
the balances after each leg are known before writing), its writes and the
``COMMIT`` in another. (Until 2026-11-28 the floor took each statement's
round trip in turn, about twelve, while the service had come down to three:
the floor was slower than the service it was the floor of.) What each action wrote is read back from the ledger
after the service round (not timed), grouped by transaction. Service and
floor alternate in ``rounds`` rounds, so load from elsewhere on a shared
machine hits both alike; each figure is the mean per action over all rounds.

``poker_action_ratio`` = floor ms / service ms (issue target >= 0.4). Timing
runs with scheduling suppressed (``games.tables.pacing.suppress_scheduling``:
no Celery enqueue on commit), for the service and the floor alike.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
from django.contrib.auth import get_user_model
from django.db import connection

from casino.bench import BenchResult, Writer, benchmark
from games.cards.shuffle import SeededRandomSource
from games.poker import event_types as et
from games.poker import services
from games.poker.models import PokerHand, PokerTable
from games.tables import pacing
from ledger.canonical import GENESIS_HASH
from ledger.services import deposit, player_accounts

CURRENCY = "EUR"
BLINDS = (5, 10)
BUY_IN = 1_000_000  # deep: calling the big blind every hand never runs a stack dry
# The tables the floor writes, each shaped like the real one (``LIKE ... INCLUDING ALL``).
RAW_TABLES = {
    "raw_pokertable": "games_pokertable",
    "raw_pokerhand": "games_pokerhand",
    "raw_pokerseat": "games_pokerseat",
    "raw_pokerhandplayer": "games_pokerhandplayer",
    "raw_dealkey": "games_dealkey",
    "raw_idempotency": "ledger_idempotency",
    "raw_event": "ledger_event",
    "raw_account": "ledger_account",
    "raw_transfer": "ledger_transfer",
    "raw_statement_line": "ledger_statement_line",
}


@dataclass
class Ring:
    """The benchmark's table: its id, the players by seat and its own clock."""

    table_id: int
    players: dict[int, int]  # seat number -> player id
    now: datetime
    rng: SeededRandomSource
    hand_id: str = ""
    acted: int = 0  # actions taken in the current hand
    keys: int = 0


@dataclass
class ActionWrites:
    """What one service action wrote, read back from the ledger (the floor replays it)."""

    stream_id: str
    events: list[tuple[int, str, int, Any, Any]]  # (version, type, schema version, data, metadata)
    legs: list[tuple[int, int, int, str, int]]  # (debit, credit, amount, kind, index of its event)
    seats: list[int] = field(default_factory=list)  # seat rows whose stack moved
    ended: bool = False


# --- the table and the service calls --------------------------------------------------------------


def setup_ring(*, players: int, seed: int = 2026) -> Ring:
    """A new open no-limit table with ``players`` funded players seated, its first hand dealt."""
    start = datetime.now(UTC).replace(microsecond=0)
    table = PokerTable.objects.create(
        code=f"BPA{PokerTable.objects.count() + 1}", name="bench poker action", variant="no_limit",
        max_seats=max(players, 2), currency=CURRENCY, small_blind=BLINDS[0], big_blind=BLINDS[1],
        buy_in_min=BLINDS[1] * 20, buy_in_max=BUY_IN, turn_seconds=30, time_bank_seconds=0,
        between_hands_seconds=2, reservation_seconds=300, is_open=True,
    )  # fmt: skip
    seated: dict[int, int] = {}
    for seat in range(1, players + 1):
        user = get_user_model().objects.create(username=f"bench-poker-{table.pk}-{seat}")
        wallet = player_accounts(player_id=user.pk, currency=CURRENCY).wallet
        deposit(wallet=wallet, amount=BUY_IN, currency=CURRENCY, external_reference=f"bpa-{user.pk}",
                idempotency_key=f"bpa-dep-{user.pk}", actor="bench")  # fmt: skip
        services.sit_down(table_id=table.pk, player_id=user.pk, seat_number=seat, buy_in=BUY_IN,
                          idempotency_key=f"bpa-sit-{user.pk}", now=start)  # fmt: skip
        seated[seat] = user.pk
    ring = Ring(table.pk, seated, start, SeededRandomSource(seed))
    deal(ring)
    return ring


def deal(ring: Ring) -> None:
    """The dealer's steps (at the table's deadlines) until a new hand is being played."""
    for _ in range(10):
        table = PokerTable.objects.get(pk=ring.table_id)
        if table.phase == services.HAND and table.current_hand_id != ring.hand_id:
            ring.hand_id, ring.acted = table.current_hand_id, 0
            return
        if table.deadline is None:
            raise RuntimeError(f"bench table waits in phase {table.phase!r}")
        ring.now = max(ring.now, table.deadline)
        services.advance_table(table_id=table.pk, expected_seq=table.phase_seq, now=ring.now, rng=ring.rng)
    raise RuntimeError("no hand dealt after ten dealer steps")


def play_actions(ring: Ring, count: int) -> tuple[float, int]:
    """``count`` service actions (dealing new hands between them, not timed):
    (seconds spent in ``act``, the id of the last ledger event before the first action)."""
    first_event = _last_event_id()
    players = len(ring.players)
    spent = 0.0
    actor = _actor(ring)
    for _ in range(count):
        # Preflop everyone calls the big blind (the big blind itself checks); later streets are checked.
        action = "call" if ring.acted < players - 1 else "check"
        ring.keys += 1
        ring.now += timedelta(seconds=1)
        started = time.perf_counter()
        result = services.act(table_id=ring.table_id, player_id=ring.players[actor], action=action,
                              idempotency_key=f"bpa-act-{ring.table_id}-{ring.keys}", now=ring.now)  # fmt: skip
        spent += time.perf_counter() - started
        ring.acted += 1
        if result.actor_seat is None:  # the hand is over: the dealer deals the next one
            deal(ring)
            actor = _actor(ring)
        else:
            actor = result.actor_seat
    return spent, first_event


def _actor(ring: Ring) -> int:
    """The seat to act in the ring's hand."""
    seat = PokerHand.objects.values_list("actor_seat", flat=True).get(hand_id=ring.hand_id)
    if seat is None:
        raise RuntimeError(f"nobody to act in {ring.hand_id}")
    return int(seat)


def _last_event_id() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT COALESCE(MAX(id), 0) FROM ledger_event")
        return int(cursor.fetchone()[0])


# --- what the actions wrote ---------------------------------------------------------------------


def action_writes(after_event: int) -> list[ActionWrites]:
    """The players' actions' writes since ``after_event``, one per transaction, in order
    (the dealer's steps between them left out)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, txid, stream_id, version, type, schema_version, data::text, metadata::text "
            "FROM ledger_event WHERE id > %s ORDER BY id",
            [after_event],
        )
        rows = cursor.fetchall()
        cursor.execute(
            "SELECT t.event_id, t.debit_account_id, t.credit_account_id, t.amount, t.kind, "
            "(SELECT kind FROM ledger_account WHERE id = t.credit_account_id), "
            "(SELECT kind FROM ledger_account WHERE id = t.debit_account_id) "
            "FROM ledger_transfer t WHERE t.event_id > %s ORDER BY t.id",
            [after_event],
        )
        transfers = cursor.fetchall()
        cursor.execute("SELECT id, table_id, player_id FROM games_pokerseat")
        seat_ids = {f"poker-table:{table}:player:{player}": pk for pk, table, player in cursor.fetchall()}
        cursor.execute("SELECT id, owner FROM ledger_account WHERE kind = 'poker_seat'")
        seat_of_account = {pk: seat_ids.get(owner) for pk, owner in cursor.fetchall()}
    groups: dict[int, ActionWrites] = {}
    index_of: dict[int, tuple[int, int]] = {}
    for event_id, txid, stream, version, kind, schema, data, metadata in rows:
        meta = json.loads(metadata)
        if not str(meta.get("actor", "")).startswith("user:"):
            continue
        group = groups.setdefault(txid, ActionWrites(stream, [], []))
        index_of[event_id] = (txid, len(group.events))
        group.events.append((version, kind, schema, json.loads(data), meta))
        group.ended = group.ended or kind == "poker.hand_ended"
    for event_id, debit, credit, amount, kind, _credit_kind, _debit_kind in transfers:
        if event_id not in index_of:
            continue
        txid, index = index_of[event_id]
        group = groups[txid]
        group.legs.append((debit, credit, amount, kind, index))
        for account in (debit, credit):
            seat = seat_of_account.get(account)
            if seat is not None and seat not in group.seats:
                group.seats.append(seat)
    return list(groups.values())


# --- the floor: a raw psycopg transaction per action -----------------------------------------------


def _dsn() -> str:
    db = connection.settings_dict
    parts = [f"dbname={db['NAME']}", f"host={db['HOST'] or '127.0.0.1'}", f"port={db['PORT'] or 5432}"]
    parts += [f"user={db['USER']}"] + ([f"password={db['PASSWORD']}"] if db["PASSWORD"] else [])
    return " ".join(parts)


def create_raw_tables() -> None:
    """The floor's tables, shaped like the real ones (no triggers: ``LIKE`` copies none)."""
    with connection.cursor() as cursor:
        for raw, real in RAW_TABLES.items():
            cursor.execute(f"CREATE TABLE IF NOT EXISTS {raw} (LIKE {real} INCLUDING ALL)")


def sync_raw_rows() -> None:
    """Copy the rows the floor reads and updates (table, hands, seats, hand players,
    accounts, deal keys) from the real tables: a new hand's rows appear in both."""
    with connection.cursor() as cursor:
        for raw, real in RAW_TABLES.items():
            if raw in ("raw_idempotency", "raw_event", "raw_transfer", "raw_statement_line"):
                continue
            key = "deal_id" if raw == "raw_dealkey" else "id"
            cursor.execute(f"INSERT INTO {raw} SELECT * FROM {real} ON CONFLICT ({key}) DO NOTHING")
        # The floor replays the players' actions only, not the dealer's blinds: its copies of the
        # accounts start deep enough that its guarded UPDATE (balance stays >= 0) always passes.
        cursor.execute("UPDATE raw_account SET balance = %s WHERE balance < %s", [10**12, 10**11])


_MAC_KEY = hashlib.sha256(b"bench floor mac key").digest()


def _chain(prev_hash: str, stream: str, version: int, kind: str, schema: int, data: str, meta: str,
           recorded: str) -> tuple[str, str]:  # fmt: skip
    body = json.dumps([stream, version, kind, schema, data, meta, recorded], separators=(",", ":")).encode()
    raw = hashlib.sha256(bytes.fromhex(prev_hash) + body).digest()
    return raw.hex(), hmac.digest(_MAC_KEY, raw, "sha256").hex()


def floor_action(conn: psycopg.Connection[Any], ring: Ring, writes: ActionWrites, key: str) -> None:
    """One action's reads and writes as one raw transaction (see the module docstring), in the
    three round trips of the service's lean path: the reads in one pipeline (the table row
    locked, the key claimed, the hand, the stream head, the seats, the accounts the legs move
    locked, and ids drawn for the rows to insert), the writes and ``COMMIT`` in another."""
    hand_id = writes.stream_id[len(et.hand_stream("")) :]
    at = datetime.now(UTC)
    request = json.dumps({"table": ring.table_id, "key": key}, sort_keys=True)
    accounts = sorted({account for debit, credit, *_ in writes.legs for account in (debit, credit)})
    with conn.pipeline():
        conn.execute("SELECT id, phase, phase_seq, current_hand_id FROM raw_pokertable WHERE id = %s FOR UPDATE",
                     [ring.table_id], prepare=True)  # fmt: skip
        claim = conn.execute(
            "INSERT INTO raw_idempotency (key, command, request_hash, result, created_at) "
            "VALUES (%s, 'poker.act', %s, NULL, %s) ON CONFLICT (key) DO NOTHING RETURNING key",
            [key, hashlib.sha256(request.encode()).hexdigest(), at], prepare=True,
        )  # fmt: skip
        hand = conn.execute("SELECT id, hand_number, stream_version, pot, phase, actor_seat FROM raw_pokerhand "
                            "WHERE hand_id = %s", [hand_id], prepare=True)  # fmt: skip
        head = conn.execute("SELECT version, hash FROM raw_event WHERE stream_id = %s ORDER BY version DESC LIMIT 1",
                            [writes.stream_id], prepare=True)  # fmt: skip
        seats = conn.execute(
            "SELECT id, seat_number, stack, hand_version FROM raw_pokerseat WHERE table_id = %s "
            "AND hand_number = (SELECT hand_number FROM raw_pokerhand WHERE hand_id = %s)",
            [ring.table_id, hand_id], prepare=True,
        )  # fmt: skip
        balances = conn.execute("SELECT id, balance, may_go_negative FROM raw_account WHERE id = ANY(%s) "
                                "ORDER BY id FOR UPDATE", [accounts], prepare=True)  # fmt: skip
        ids = conn.execute(
            "SELECT ARRAY(SELECT nextval(pg_get_serial_sequence('raw_event', 'id')) FROM generate_series(1, %s)), "
            "ARRAY(SELECT nextval(pg_get_serial_sequence('raw_transfer', 'id')) FROM generate_series(1, %s))",
            [len(writes.events), len(writes.legs)], prepare=True,
        )  # fmt: skip
        if claim.fetchone() is None:  # the pipeline's one round trip
            raise RuntimeError(f"floor: key {key} claimed twice")
        hand_row = hand.fetchone()
        top = head.fetchone()
        stacks = {row[0]: row[2] for row in seats.fetchall()}
        found = balances.fetchall()
        id_row = ids.fetchone()
    assert hand_row is not None, hand_id
    assert id_row is not None
    hand_pk, pot = hand_row[0], hand_row[3]
    event_ids, transfer_ids = id_row
    prev_hash = top[1] if top is not None else GENESIS_HASH
    running = {row[0]: row[1] for row in found}
    may_go_negative = {row[0] for row in found if row[2]}
    if len(running) != len(accounts):
        raise RuntimeError("floor: an account of the legs is missing")
    # The events, hash-chained and MACed.
    recorded = at.isoformat()
    values: list[Any] = []
    for event_id, (version, kind, schema, data, meta) in zip(event_ids, writes.events, strict=True):
        data_json, meta_json = json.dumps(data, sort_keys=True), json.dumps(meta, sort_keys=True)
        digest, mac = _chain(prev_hash, writes.stream_id, version, kind, schema, data_json, meta_json, recorded)
        values += [event_id, writes.stream_id, version, kind, schema, data_json, meta_json, at, prev_hash, digest, mac]
        prev_hash = digest
    # The legs: each balance after each leg, refused below zero (the accounts are locked above).
    lines: list[Any] = []
    legs: list[Any] = []
    for transfer, (debit, credit, amount, kind, i) in zip(transfer_ids, writes.legs, strict=True):
        running[debit] -= amount
        running[credit] += amount
        legs += [transfer, debit, credit, amount, CURRENCY, kind, event_ids[i], at]
        lines += [debit, transfer, event_ids[i], -amount, running[debit], at]
        lines += [credit, transfer, event_ids[i], amount, running[credit], at]
        pot += amount if kind == "bet" else 0
    if any(balance < 0 for account, balance in running.items() if account not in may_go_negative):
        raise RuntimeError("floor: a balance would go negative")
    last = writes.events[-1][0]
    with conn.pipeline():
        rows = ", ".join(["(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"] * len(writes.events))
        conn.execute("INSERT INTO raw_event (id, stream_id, version, type, schema_version, data, metadata, "
                     f"recorded_at, prev_hash, hash, mac) VALUES {rows}", values, prepare=True)  # fmt: skip
        if writes.legs:
            pairs = ", ".join(["(%s::bigint, %s::bigint)"] * len(running))
            conn.execute(f"UPDATE raw_account a SET balance = v.balance FROM (VALUES {pairs}) v(id, balance) "
                         "WHERE a.id = v.id", [v for pair in running.items() for v in pair], prepare=True)  # fmt: skip
            conn.execute(
                "INSERT INTO raw_transfer (id, debit_account_id, credit_account_id, amount, currency, kind, event_id, "
                f"created_at) VALUES {', '.join(['(%s, %s, %s, %s, %s, %s, %s, %s)'] * len(writes.legs))}",
                legs, prepare=True,
            )  # fmt: skip
            conn.execute(
                "INSERT INTO raw_statement_line (account_id, transfer_id, event_id, amount, balance_after, "
                f"created_at) VALUES {', '.join(['(%s, %s, %s, %s, %s, %s)'] * (len(lines) // 6))}",
                lines, prepare=True,
            )  # fmt: skip
        # The projections: the hand row, the seats whose stack moved, at a hand's end its players and deal key.
        conn.execute(
            "UPDATE raw_pokerhand SET stream_version = %s, pot = %s, phase = %s, actor_seat = %s, deadline = %s, "
            "status = %s, ended_at = %s WHERE id = %s",
            [last, pot, "complete" if writes.ended else "betting", None if writes.ended else 1,
             None if writes.ended else at + timedelta(seconds=30), "complete" if writes.ended else "playing",
             at if writes.ended else None, hand_pk], prepare=True,
        )  # fmt: skip
        if writes.seats:
            pairs = ", ".join(["(%s::bigint, %s::bigint)"] * len(writes.seats))
            conn.execute(
                f"UPDATE raw_pokerseat s SET stack = v.stack, hand_version = %s FROM (VALUES {pairs}) v(id, stack) "
                "WHERE s.id = v.id",
                [last, *[v for seat in writes.seats for v in (seat, stacks.get(seat, 0))]], prepare=True,
            )  # fmt: skip
        if writes.ended:
            conn.execute("UPDATE raw_pokerhandplayer SET stack_after = stack_before WHERE hand_id = %s", [hand_pk],
                         prepare=True)  # fmt: skip
            conn.execute("DELETE FROM raw_dealkey WHERE deal_id = %s", [f"poker-hand:{hand_id}"], prepare=True)
        conn.execute(
            "UPDATE raw_pokertable SET phase = %s, phase_seq = phase_seq + 1, deadline = %s WHERE id = %s",
            ["between" if writes.ended else "hand", at + timedelta(seconds=30), ring.table_id], prepare=True,
        )  # fmt: skip
        conn.execute("UPDATE raw_idempotency SET result = %s WHERE key = %s",
                     [json.dumps({"hand_id": hand_id, "phase": "betting", "stack": 0}), key],
                     prepare=True)  # fmt: skip
        conn.commit()


def floor_round(conn: psycopg.Connection[Any], ring: Ring, writes: Sequence[ActionWrites], tag: str) -> float:
    """Seconds for the floor transactions of ``writes``, one after the other."""
    sync_raw_rows()
    started = time.perf_counter()
    for n, action in enumerate(writes):
        floor_action(conn, ring, action, f"{tag}-{n}")
    return time.perf_counter() - started


# --- the measurement ----------------------------------------------------------------------------------


def measure_poker_action(*, out: Writer, actions: int, players: int = 6, rounds: int = 3,
                         warmup: int = 12) -> dict[str, float]:  # fmt: skip
    """Poker actions as service calls beside the raw floor (module docstring), inside
    an open ``scratch_database()``: ms per action of each, their ratio, the actions
    timed and ``verify_ledger``'s problems at the end."""
    from ledger.services.seals import seal_key
    from ledger.services.verify import verify_ledger

    with pacing.suppress_scheduling():
        ring = setup_ring(players=players)
        create_raw_tables()
        with psycopg.connect(_dsn()) as conn:
            spent, first = play_actions(ring, warmup)  # caches, prepared statements, the floor's too
            floor_round(conn, ring, action_writes(first), "warm")
            per_round = max(1, actions // rounds)
            service_s = floor_s = 0.0
            timed = floor_count = 0
            for round_no in range(rounds):
                count = per_round if round_no < rounds - 1 else actions - per_round * (rounds - 1)
                if count <= 0:
                    continue
                spent, first = play_actions(ring, count)
                writes = action_writes(first)
                if len(writes) != count:
                    raise RuntimeError(f"read back {len(writes)} actions' writes, not {count}")
                service_s += spent
                timed += count
                floor_s += floor_round(conn, ring, writes, f"r{round_no}")
                floor_count += len(writes)
                out.write(f"poker action round {round_no + 1}: service {1000 * spent / count:.2f} ms, "
                          f"floor {1000 * floor_s / floor_count:.2f} ms (mean so far)\n")  # fmt: skip
    problems = verify_ledger(key=seal_key())
    if problems:
        out.write(f"verify_ledger: {len(problems)} problems, the first: {problems[0]}\n")
    service_ms = 1000 * service_s / timed
    floor_ms = 1000 * floor_s / floor_count
    return {
        "poker_action_ms": round(service_ms, 3),
        "poker_action_floor_ms": round(floor_ms, 3),
        "poker_action_ratio": round(floor_ms / service_ms, 3),
        "poker_actions": timed,
        "poker_verify_ledger_problems": len(problems),
    }


@benchmark("poker_action")
def bench_poker_action(*, out: Writer, actions: int = 600, players: int = 6, rounds: int = 3,
                       **options: Any) -> BenchResult:  # fmt: skip
    """A poker action as a service call vs a raw psycopg transaction doing its writes (scratch database)."""
    if connection.vendor != "postgresql":
        note = "not run: bench poker_action compares against raw psycopg on PostgreSQL; set DATABASE_URL"
        return BenchResult("Poker action vs raw psycopg", ["case"], [], {"not_run": note}, notes=[note])
    from ledger.benchmarks import scratch_database

    with scratch_database():
        figures = measure_poker_action(out=out, actions=int(actions), players=int(players), rounds=int(rounds))
    rows = [["poker action (ms)", figures["poker_action_ms"], "raw psycopg transaction",
             figures["poker_action_floor_ms"], figures["poker_action_ratio"], 0.4]]  # fmt: skip
    return BenchResult(
        "Poker action: service call vs raw psycopg transaction (same writes, scratch database)",
        ["case", "service", "peer", "peer figure", "ratio", "target"],
        rows,
        figures,
        notes=[f"{figures['poker_actions']} actions at a {players}-handed table, {rounds} interleaved rounds"],
    )
