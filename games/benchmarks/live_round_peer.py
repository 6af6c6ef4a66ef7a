"""``bench live_round``'s round and its bare peer (issue 39).

``play_round`` plays one shared-hand UTH round with the players it is given
(chips through ``place_chip``, decisions through ``make_decision``, the dealer's
steps through ``advance_table``) and times each dealer step; the last one is the
settlement (showdown, settlement, balances, in one transaction).

``settlement_census`` counts, in the scratch database, what that settlement
wrote: the rows it inserted (events, transfers, statement lines) and the rows it
updated (player projections, holds, balances, the round and table rows), and
``copy_peer`` times a raw psycopg 3 ``COPY`` of the same inserted rows and of
the projection rows (their values as the settlement left them) into
same-shaped empty tables (``LIKE ... INCLUDING ALL``), in one transaction: the
peer of ``ledger.benchmarks``' settlement (which models no UPDATE of holds or
balances either). The rows are read before the clock starts; the peer's time
is the COPY's alone, Python's adaptation of each row included, as there.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import psycopg
from django.db import connection
from django.utils import timezone

from casino.bench import Writer
from games.cards.shuffle import SeededRandomSource
from games.house.models import HouseTable
from games.house.services import advance_table, make_decision, place_chip, start_table

# Append-only tables a settlement inserts into, each copied by the peer.
INSERTED = ("ledger_event", "ledger_transfer", "ledger_statement_line")
PROJECTION = "games_playerround"


@dataclass
class RoundRun:
    """One played round: its timings and the marks taken before its settlement."""

    round_id: str
    players: int
    decided: int
    bet_seconds: float = 0.0
    decisions: int = 0
    decide_seconds: float = 0.0
    steps: list[tuple[str, float]] = field(default_factory=list)
    marks: dict[str, int] = field(default_factory=dict)  # each INSERTED table's max id before the settlement

    @property
    def settle_seconds(self) -> float:
        """The last dealer step: the advance that settled the round."""
        return self.steps[-1][1]


def _marks() -> dict[str, int]:
    with connection.cursor() as cursor:
        found = {}
        for table in INSERTED:
            cursor.execute(f"SELECT COALESCE(MAX(id), 0) FROM {table}")
            found[table] = int(cursor.fetchone()[0])
        return found


def play_round(out: Writer, table: HouseTable, ids: list[int], decided: int, *, seed: str) -> RoundRun:
    """Play one round at ``table`` (open, idle, its players seated and funded):
    every player places an Ante (+ automatic Ante Plus) and a Best Five; the
    first ``decided`` decide (even ones call 4x preflop, odd ones check and
    call 2x on the flop), the rest take the timeout defaults. Every dealer step
    is timed; the round ends settled. ``seed`` shuffles the round's deck
    (``SeededRandomSource``): rounds played with one seed deal the same cards, so
    their players win and lose alike and a settlement of N players writes N
    times the rows of one (what ``settle_growth`` compares)."""
    tick = start_table(table_id=table.pk, now=timezone.now(), rng=SeededRandomSource(seed))
    assert tick.deadline is not None
    run = RoundRun(round_id=tick.round_id, players=len(ids), decided=decided)
    at = tick.deadline - timedelta(seconds=1)
    started = time.perf_counter()
    for pid in ids:
        for spot in ("ante", "best_five"):
            place_chip(table_id=table.pk, player_id=pid, spot=spot, amount=100, idempotency_key=f"b-{pid}-{spot}",
                       now=at)  # fmt: skip
    run.bet_seconds = time.perf_counter() - started
    out.write(f"{2 * len(ids)} chips in {run.bet_seconds:.1f} s ({2 * len(ids) / run.bet_seconds:.0f}/s, in process)\n")
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
    for street, choices in plan:
        assert tick.phase == street, (tick.phase, street)
        assert tick.deadline is not None
        decide_at = tick.deadline - timedelta(seconds=1)
        started = time.perf_counter()
        result = None
        for pid, option in choices:
            result = make_decision(table_id=table.pk, player_id=pid, option=option,
                                   idempotency_key=f"d-{street}-{pid}", now=decide_at)  # fmt: skip
        run.decide_seconds += time.perf_counter() - started
        run.decisions += len(choices)
        if result is not None and decided == len(ids):
            assert result.all_decided, f"the last {street} decision must report everyone decided"
        tick = _advance(run, street, tick.phase_seq, tick.deadline, table.pk)
    while tick.phase not in ("between", "idle"):
        assert tick.deadline is not None
        tick = _advance(run, tick.phase, tick.phase_seq, tick.deadline, table.pk)
    rate = run.decisions / run.decide_seconds if run.decide_seconds else 0.0
    out.write(f"{run.decisions} decisions in {run.decide_seconds:.1f} s ({rate:.0f}/s, in process)\n")
    return run


def _advance(run: RoundRun, phase: str, seq: int, deadline: Any, table_id: int) -> Any:
    """One timed dealer step; the marks are taken before it (untimed), so the
    last step's are the settlement's."""
    run.marks = _marks()
    started = time.perf_counter()
    nxt = advance_table(table_id=table_id, expected_seq=seq, now=deadline)
    run.steps.append((phase, time.perf_counter() - started))
    assert nxt is not None
    return nxt


def settlement_census(run: RoundRun) -> dict[str, int]:
    """What the round's settlement wrote, counted in the database: rows inserted
    per table (``ledger_event`` ...), and rows updated: ``games_playerround``
    (the round's player rows, all settled), ``ledger_hold`` (resolved by its
    events), ``ledger_account`` (balances: the accounts of its statement lines)
    and the round and table rows."""
    census: dict[str, int] = {}
    with connection.cursor() as cursor:
        for table, mark in run.marks.items():
            cursor.execute(f"SELECT count(*) FROM {table} WHERE id > %s", [mark])
            census[table] = int(cursor.fetchone()[0])
        cursor.execute(
            "SELECT count(*) FROM games_playerround p JOIN games_houseround r ON r.id = p.round_id "
            "WHERE r.round_id = %s AND p.status = 'settled'",
            [run.round_id],
        )
        census["games_playerround (updated)"] = int(cursor.fetchone()[0])
        cursor.execute("SELECT count(*) FROM ledger_hold WHERE resolved_event_id > %s", [run.marks["ledger_event"]])
        census["ledger_hold (updated)"] = int(cursor.fetchone()[0])
        cursor.execute(
            "SELECT count(DISTINCT account_id) FROM ledger_statement_line WHERE id > %s",
            [run.marks["ledger_statement_line"]],
        )
        census["ledger_account (updated)"] = int(cursor.fetchone()[0])
    census["games_houseround, games_housetable (updated)"] = 2
    if census["games_playerround (updated)"] != run.players:
        raise RuntimeError(f"{census['games_playerround (updated)']} of {run.players} player rounds settled")
    return census


def _peer_tables(cursor: Any) -> None:
    for table in (*INSERTED, PROJECTION):
        cursor.execute(f"CREATE TABLE IF NOT EXISTS raw_{table} (LIKE {table} INCLUDING ALL)")


def copy_peer(dsn: str, run: RoundRun) -> float:
    """Seconds to COPY the rows the settlement inserted, and its player rows,
    into empty same-shaped tables in one transaction (psycopg 3, ``write_row``);
    the rows are read before the clock starts and the tables emptied after."""
    with psycopg.connect(dsn) as conn:
        # JSON columns come and go as their text, as a raw copier would hand them on.
        conn.adapters.register_loader("jsonb", psycopg.types.string.TextLoader)
        conn.adapters.register_loader("json", psycopg.types.string.TextLoader)
        cur = conn.cursor()
        _peer_tables(cur)
        conn.commit()
        batches: list[tuple[str, list[str], list[tuple[Any, ...]]]] = []
        for table, mark in run.marks.items():
            cur.execute(f"SELECT * FROM {table} WHERE id > %s ORDER BY id", [mark])
            batches.append((table, [d.name for d in cur.description or ()], cur.fetchall()))
        cur.execute(
            "SELECT p.* FROM games_playerround p JOIN games_houseround r ON r.id = p.round_id "
            "WHERE r.round_id = %s ORDER BY p.id",
            [run.round_id],
        )
        batches.append((PROJECTION, [d.name for d in cur.description or ()], cur.fetchall()))
        conn.commit()
        started = time.perf_counter()
        for table, columns, rows in batches:
            with cur.copy(f"COPY raw_{table} ({', '.join(columns)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        conn.commit()
        seconds = time.perf_counter() - started
        for table, _, _ in batches:
            cur.execute(f"TRUNCATE raw_{table}")
        conn.commit()
        return seconds
