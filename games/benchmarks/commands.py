"""``manage.py bench commands``: one player command as a service call beside a
raw psycopg transaction doing the same reads and writes (its floor,
``games.benchmarks.commands_floor``), in process, on a scratch database.

- a house chip (``games.house.services.place_chip``, an Ante then a Best Five
  per player, round robin over the players) beside the floor's chip:
  ``chip_ratio``;
- a house decision (``make_decision``, every player calling 4x preflop: a
  staking decision, its hold and legs) beside the floor's decision:
  ``decision_ratio``;
- a poker action (``games.benchmarks.commands_poker.measure_poker_action``,
  when that module exists): ``poker_action_ratio``;
- ``bet_size_ratio``: a chip's p50 at a table where ``crowd`` players are
  seated, each with an Ante placed, over its p50 at a table with one player
  (the same player's chips on both, interleaved).

Every ratio is the floor's p50 milliseconds per command over the service's
p50 (target >= 0.4; ``bet_size_ratio`` <= 1.3), with both absolute p50s
beside it. Service and floor run in interleaved blocks (``rounds``), so load
from elsewhere on a shared machine hits both alike. The run ends with
``verify_ledger`` on the scratch database (``verify_ledger_problems``: 0).

Options: ``-o chips=2000 -o decisions=1000 -o rounds=10 -o crowd=1000
-o crowd_chips=200 -o poker_actions=N`` (default: ``chips``; 0 skips it).
"""

from __future__ import annotations

import importlib
import importlib.util
import statistics
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.utils import timezone

from casino.bench import BenchResult, Writer, benchmark
from games.benchmarks.commands_floor import Floor, setup_floor
from games.benchmarks.live import _players, _table
from games.house.services import advance_table, make_decision, place_chip, start_table
from ledger.benchmarks import _dsn, scratch_database

POKER_MODULE = "games.benchmarks.commands_poker"
CHIP = 100
#: The decision every player takes: a staking one (a hold and its legs, as a chip).
DECISION, DECISION_MULTIPLE = "call4x", 4


def _spot(nth: int) -> str:
    """A player's ``nth`` chip (from 0): an Ante first, then a Best Five, alternately."""
    return "ante" if nth % 2 == 0 else "best_five"


def _p50_ms(seconds: Sequence[float]) -> float:
    return statistics.median(seconds) * 1000 if seconds else float("nan")


def _interleaved(
    count: int, rounds: int, service: Callable[[int], None], floor: Callable[[int], None]
) -> tuple[list[float], list[float]]:
    """Seconds per call of ``service(i)`` and ``floor(i)`` for i < ``count``, in
    ``rounds`` blocks each way, alternately first (so drift and load from
    elsewhere hit both alike)."""
    timings: tuple[list[float], list[float]] = ([], [])
    block = max(1, -(-count // max(1, rounds)))
    for number, start in enumerate(range(0, count, block)):
        order = [(service, timings[0]), (floor, timings[1])]
        for call, times in order if number % 2 == 0 else order[::-1]:
            for i in range(start, min(count, start + block)):
                began = time.perf_counter()
                call(i)
                times.append(time.perf_counter() - began)
    return timings


def _chips_and_decisions(out: Writer, dsn: str, chips: int, decisions: int, rounds: int) -> dict[str, list[float]]:
    """Chips, then decisions, as service calls and floor transactions (seconds per call)."""
    count = max(decisions, -(-chips // 2), 1)
    table = _table("CMD1", betting_seconds=3600)
    *ids, warm = _players(table, count + 1)
    setup_floor(dsn)
    tick = start_table(table_id=table.pk, now=timezone.now())
    assert tick.deadline is not None
    at = tick.deadline - timedelta(seconds=1)
    floor = Floor(dsn, _mac_key())
    try:
        # Untimed: the first command of each kind prepares the statements and opens the house account.
        place_chip(table_id=table.pk, player_id=warm, spot="ante", amount=CHIP, idempotency_key="warm-chip", now=at)
        floor.copy_accounts()
        floor.chip(table_id=table.pk, player_id=warm, spot="ante", amount=CHIP, key="warm-chip", at=at)
        antes = dict.fromkeys(ids, 0)
        plan = []
        for i in range(chips):
            player, spot = ids[i % count], _spot(i // count)
            plan.append((player, spot))
            antes[player] += CHIP if spot == "ante" else 0
        for player in [p for p in ids[:decisions] if not antes[p]]:  # decisions need an Ante (untimed)
            plan.append((player, "ante"))
            antes[player] = CHIP

        def service_chip(i: int) -> None:
            player, spot = plan[i]
            place_chip(table_id=table.pk, player_id=player, spot=spot, amount=CHIP, idempotency_key=f"c{i}", now=at)

        def floor_chip(i: int) -> None:
            player, spot = plan[i]
            floor.chip(table_id=table.pk, player_id=player, spot=spot, amount=CHIP, key=f"c{i}", at=at)

        out.write(f"chips: {chips} x service and floor, {count} players, {rounds} interleaved rounds\n")
        chip_service, chip_floor = _interleaved(chips, rounds, service_chip, floor_chip)
        for i in range(chips, len(plan)):
            service_chip(i)
            floor_chip(i)

        dealt = advance_table(table_id=table.pk, expected_seq=tick.phase_seq, now=tick.deadline)
        assert dealt is not None, "the round deals"
        assert dealt.phase == "preflop", dealt
        assert dealt.deadline is not None, dealt
        at = dealt.deadline - timedelta(seconds=1)
        make_decision(table_id=table.pk, player_id=warm, option=DECISION, idempotency_key="warm-d", now=at)
        floor.decision(table_id=table.pk, player_id=warm, option=DECISION, amount=DECISION_MULTIPLE * CHIP,
                       street="preflop", key="warm-d", at=at)  # fmt: skip
        deciders = ids[:decisions]

        def service_decision(i: int) -> None:
            make_decision(table_id=table.pk, player_id=deciders[i], option=DECISION, idempotency_key=f"d{i}", now=at)

        def floor_decision(i: int) -> None:
            player = deciders[i]
            floor.decision(table_id=table.pk, player_id=player, option=DECISION,
                           amount=DECISION_MULTIPLE * antes[player], street="preflop", key=f"d{i}", at=at)  # fmt: skip

        out.write(f"decisions: {decisions} x service and floor\n")
        decision_service, decision_floor = _interleaved(decisions, rounds, service_decision, floor_decision)
    finally:
        floor.close()
    return {"chip": chip_service, "chip_floor": chip_floor, "decision": decision_service,
            "decision_floor": decision_floor}  # fmt: skip


def _bet_size(out: Writer, crowd: int, chips: int, rounds: int) -> tuple[list[float], list[float]]:
    """Seconds per chip of one player at a table of ``crowd`` seated players
    (the others each with an Ante placed) and of one player alone at a table."""
    crowded, alone = _table("CMD2", betting_seconds=3600), _table("CMD3", betting_seconds=3600)
    measured, *others = _players(crowded, max(1, crowd))
    (lone,) = _players(alone, 1)
    now = timezone.now()
    ticks = [start_table(table_id=t.pk, now=now) for t in (crowded, alone)]
    deadlines = [t.deadline for t in ticks]
    assert all(deadlines)
    at: datetime = min(d for d in deadlines if d is not None) - timedelta(seconds=1)
    out.write(f"bet size: {len(others)} Antes placed at the crowded table (untimed)\n")
    for player in others:
        place_chip(table_id=crowded.pk, player_id=player, spot="ante", amount=CHIP, idempotency_key=f"x{player}",
                   now=at)  # fmt: skip

    def chip_at(table_id: int, player: int, tag: str) -> Callable[[int], None]:
        def call(i: int) -> None:
            place_chip(table_id=table_id, player_id=player, spot=_spot(i), amount=CHIP, idempotency_key=f"{tag}{i}",
                       now=at)  # fmt: skip

        return call

    out.write(f"bet size: {chips} chips x crowded and alone\n")
    return _interleaved(chips, rounds, chip_at(crowded.pk, measured, "crowd-"), chip_at(alone.pk, lone, "alone-"))


def _mac_key() -> bytes:
    from ledger.services.macs import event_mac_key

    return event_mac_key()


def _poker(out: Writer, actions: int) -> dict[str, float]:
    """The poker action's figures, when its module exists (``POKER_MODULE``), inside the scratch database."""
    if actions <= 0 or importlib.util.find_spec(POKER_MODULE) is None:
        return {}
    measure: Any = importlib.import_module(POKER_MODULE).measure_poker_action
    figures: dict[str, float] = measure(out=out, actions=actions)
    return figures


@benchmark("commands")
def bench_commands(
    *,
    out: Writer,
    chips: int = 2000,
    decisions: int = 1000,
    rounds: int = 10,
    crowd: int = 1000,
    crowd_chips: int = 200,
    poker_actions: int | None = None,
    **options: Any,
) -> BenchResult:
    """House chip and decision (and poker action) service calls vs raw psycopg transactions; bet size."""
    chips, decisions, rounds, crowd, crowd_chips = map(int, (chips, decisions, rounds, crowd, crowd_chips))
    poker_actions = chips if poker_actions is None else int(poker_actions)
    if connection.vendor != "postgresql":  # the floor is raw psycopg on PostgreSQL; `bench all` goes on
        note = "not run: bench commands compares against raw psycopg on PostgreSQL; set DATABASE_URL"
        return BenchResult("Commands vs raw psycopg", ["case"], [], {"not_run": note}, notes=[note])
    with scratch_database() as name:
        times = _chips_and_decisions(out, _dsn(name), chips, decisions, rounds)
        crowded, alone = _bet_size(out, crowd, crowd_chips, rounds)
        poker = _poker(out, poker_actions)

        from ledger.services.seals import seal_key
        from ledger.services.verify import verify_ledger

        problems = verify_ledger(key=seal_key())
        for problem in problems[:5]:
            out.write(f"verify_ledger: {problem}\n")

    ms = {name: round(_p50_ms(values), 3) for name, values in times.items()}
    figures: dict[str, Any] = {
        "chip_ms": ms["chip"],
        "chip_floor_ms": ms["chip_floor"],
        "chip_ratio": round(ms["chip_floor"] / ms["chip"], 3),
        "decision_ms": ms["decision"],
        "decision_floor_ms": ms["decision_floor"],
        "decision_ratio": round(ms["decision_floor"] / ms["decision"], 3),
        "bet_crowd_p50_ms": round(_p50_ms(crowded), 3),
        "bet_alone_p50_ms": round(_p50_ms(alone), 3),
        "bet_size_ratio": round(_p50_ms(crowded) / _p50_ms(alone), 3),
        **poker,
        "chips": chips,
        "decisions": decisions,
        "crowd": crowd,
        "verify_ledger_problems": len(problems),
    }
    rows = [
        ["house chip", ms["chip"], "raw psycopg transaction", ms["chip_floor"], figures["chip_ratio"], ">= 0.4"],
        ["house decision", ms["decision"], "raw psycopg transaction", ms["decision_floor"], figures["decision_ratio"],
         ">= 0.4"],
    ]  # fmt: skip
    if "poker_action_ratio" in poker:
        rows.append(["poker action", poker.get("poker_action_ms"), "raw psycopg transaction",
                     poker.get("poker_action_floor_ms"), poker["poker_action_ratio"], ">= 0.4"])  # fmt: skip
    rows.append([f"chip, {crowd:,} seated", figures["bet_crowd_p50_ms"], "chip, 1 seated", figures["bet_alone_p50_ms"],
                 figures["bet_size_ratio"], "<= 1.3"])  # fmt: skip
    return BenchResult(
        "Commands: service calls vs raw psycopg transactions (p50 ms per command, scratch database)",
        ["case", "service ms", "peer", "peer ms", "ratio", "target"],
        rows,
        figures,
        notes=[
            "ratio = peer p50 / service p50 per command (bet size: crowded p50 / alone p50)",
            f"service and peer in {rounds} interleaved rounds, in process, sequential calls",
            f"verify_ledger on the scratch database: {len(problems)} problems",
        ],
    )
