"""``manage.py bench tournament``: a multi-table tournament played to the end by
bots through the real services, on PostgreSQL (issues #23, #39), by one
process and by two.

``players`` (default 1000) funded players register for a scheduled
tournament through ``register`` (buy-in and fee through the ledger); it starts
through the scheduled start (``start_or_cancel_scheduled``: the random draw,
every starting stack issued from the chip bank) and worker processes
(``games.poker.tournament.workers``, forked, each with its own connections)
play it: the dealer's steps, the bots' actions (``act``, all-in with
``aggression``), and the tournament's step between hands (busts, the level
clock, balancing moves, breaking tables, hand-for-hand, the final table, the
payouts), on a clock shared through Redis instead of wall-clock waits and
Celery. Timed: from the start to the finish.

The same tournament (same size and seed, new players) is played twice in the
run, one after the other in one scratch database: by one worker process (the peer), then by ``workers``
(default 2) that share its tables, nothing shared but PostgreSQL and Redis.
Printed for each (``one_*``, ``two_*``): ``hands``, ``seconds``,
``hands_per_s`` and the checks the run ends with: ``verify_ledger`` clean, the
prize pool and the chip bank at zero, the payouts equal to the pool; and
``process_scaling`` = ``two_hands_per_s`` / ``one_hands_per_s`` (issue #39's
target: 1.5 or more, on a machine whose cores are free). Beside each play,
where the CPU went (``cpu_split``): the worker processes', their PostgreSQL
backends', and the whole machine's busy and idle seconds over the play, so a
reader can tell what the two cores allowed.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection

from casino.bench import BenchResult, Writer, benchmark
from games.poker.models import PokerHand
from games.poker.tournament import services as tournament_services
from games.poker.tournament.models import Tournament, TournamentEntry, TournamentState
from games.poker.tournament.workers import machine_cpu_seconds, play_in_processes
from ledger.benchmarks import scratch_database
from ledger.services import balance_of, deposit, player_accounts

LEVELS = [
    {"small_blind": sb, "big_blind": 2 * sb, "ante": sb // 5, "duration_seconds": 300}
    for sb in (25, 50, 75, 100, 150, 200, 300, 400, 600, 800, 1000, 1500, 2000, 3000, 4000, 6000, 8000, 10000)
]
PAYOUTS = [
    {"max_entrants": 10, "shares_bp": [6500, 3500]},
    {"max_entrants": None, "shares_bp": [3000, 2000, 1200, 900, 700, 600, 500, 400, 300, 200, 200]},
]


def money_ok(figures: dict[str, Any]) -> bool:
    """Every money check of one play passed (finished, ledger clean, pool and bank at zero, payouts = pool)."""
    return (
        figures["finished"] is True
        and figures["verify_ledger_problems"] == 0
        and figures["prize_pool_after"] == 0
        and figures["chip_bank_after"] == 0
        and figures["payouts_equal_pool"] is True
    )


def play_tournament(*, out: Writer, players: int, seed: int, aggression: float, workers: int) -> dict[str, Any]:
    """One tournament of ``players`` (new players) played to the end by ``workers``
    processes: its figures and money checks (``verify_ledger`` checks the whole database)."""
    from ledger.services.seals import seal_key
    from ledger.services.verify import verify_ledger

    start = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
    tournament = Tournament(
        kind="scheduled", name=f"Bench {players}", currency="EUR", buy_in=1_000, fee=100,
        starting_chips=10_000, max_players=players, table_seats=9, start_at=start, levels=LEVELS,
        payouts=PAYOUTS, turn_seconds=20, time_bank_seconds=0, between_hands_seconds=2,
    )  # fmt: skip
    tournament.full_clean()
    tournament.save()
    users = get_user_model().objects.bulk_create(
        [get_user_model()(username=f"bench-{workers}-{i}") for i in range(players)]
    )
    setup = time.perf_counter()
    for user in users:
        wallet = player_accounts(player_id=user.pk, currency="EUR").wallet
        deposit(wallet=wallet, amount=10_000, currency="EUR", external_reference=f"b{user.pk}",
                idempotency_key=f"bench-dep-{user.pk}", actor="bench")  # fmt: skip
        tournament_services.register(
            tournament_id=tournament.pk,
            player_id=user.pk,
            idempotency_key=f"bench-reg-{user.pk}",
            now=start - timedelta(minutes=1),
        )
    out.write(f"{players} players registered in {time.perf_counter() - setup:.1f} s\n")
    started, machine, load = time.perf_counter(), machine_cpu_seconds(), os.getloadavg()[0]
    tournament_services.start_or_cancel_scheduled(tournament_id=tournament.pk, now=start)
    reports = play_in_processes(tournament.pk, workers=workers, start=start, seed=seed, aggression=aggression)
    seconds = time.perf_counter() - started
    machine_after = machine_cpu_seconds()
    errors = [error for report in reports for error in report.get("errors", [])]
    for error in errors:
        out.write(f"worker error: {error}\n")
    tournament.refresh_from_db()
    pool = balance_of(account_id=tournament_services.pool_account(tournament_id=tournament.pk, currency="EUR"))
    bank = balance_of(account_id=tournament_services.chip_bank(tournament_id=tournament.pk))
    prizes = sum(p or 0 for p in TournamentEntry.objects.filter(tournament=tournament).values_list("prize", flat=True))
    hands = PokerHand.objects.filter(table__tournament=tournament).count()
    problems = verify_ledger(key=seal_key())
    if problems:
        out.write(f"verify_ledger: {len(problems)} problems, the first: {problems[0]}\n")
    figures = {
        "processes": workers,
        "hands": hands,
        "seconds": round(seconds, 2),
        "hands_per_s": round(hands / seconds, 2) if seconds else None,
        "actions": sum(report.get("actions", 0) for report in reports),
        "actions_by_process": [report.get("actions", 0) for report in reports],
        "table_steps_by_process": [report.get("table_steps", 0) for report in reports],
        "tournament_steps": sum(report.get("steps", 0) for report in reports),
        "worker_errors": len(errors),
        "steps_retried": sum(report.get("retried", 0) for report in reports),
        "leases_claimed": sum(report.get("leases_claimed", 0) for report in reports),
        "leases_released": sum(report.get("leases_released", 0) for report in reports),
        "workers_evicted": sum(report.get("workers_evicted", 0) for report in reports),
        "sessions_lost": sum(report.get("sessions_lost", 0) for report in reports),
        **cpu_split(reports, seconds, machine, machine_after),
        "load_average_at_start": round(load, 2),
        "finished": tournament.state == TournamentState.FINISHED and not errors,
        "levels_reached": tournament.current_level,
        "prize_pool_after": pool,
        "chip_bank_after": bank,
        "payouts": prizes,
        "payouts_equal_pool": prizes == players * 1_000,
        "verify_ledger_problems": len(problems),
    }
    out.write(f"  {workers} process(es): {hands} hands in {seconds:.1f} s, money checks "
              f"{'pass' if money_ok(figures) else 'FAIL'}\n")  # fmt: skip
    return figures


def _total(values: list[Any]) -> float | None:
    return None if not values or any(v is None for v in values) else round(sum(values), 2)


def cpu_split(reports: list[dict[str, Any]], seconds: float, before: tuple[float, float] | None,
              after: tuple[float, float] | None) -> dict[str, Any]:  # fmt: skip
    """Where the play's CPU went, in CPU seconds over its ``seconds`` of wall time:
    the worker processes (``worker_cpu_s``), their PostgreSQL backends
    (``postgres_cpu_s``), every process of the machine (``machine_busy_s``, which
    counts the others' load too) and its idle time (``machine_idle_s``);
    ``cores`` times ``seconds`` is what the machine had."""
    busy = idle = None
    if before is not None and after is not None:
        busy, idle = round(after[0] - before[0], 2), round(after[1] - before[1], 2)
    return {
        "worker_cpu_s": _total([report.get("cpu_s") for report in reports]),
        "worker_cpu_by_process": [report.get("cpu_s") for report in reports],
        "postgres_cpu_s": _total([report.get("postgres_cpu_s") for report in reports]),
        "machine_busy_s": busy,
        "machine_idle_s": idle,
        "cores": os.cpu_count(),
    }


@benchmark("tournament")
def bench_tournament(
    *, out: Writer, players: int = 1000, seed: int = 2026, aggression: float = 0.25, workers: int = 2,
    **options: Any,
) -> BenchResult:  # fmt: skip
    """A ``players``-player multi-table tournament played to the end by bots, by one
    process and by ``workers`` (hands/s, ``process_scaling``)."""
    if connection.vendor != "postgresql":
        raise RuntimeError("bench tournament needs PostgreSQL (set DATABASE_URL)")
    players, seed, workers, aggression = int(players), int(seed), int(workers), float(aggression)
    with scratch_database():  # both tournaments in it, one after the other
        one = play_tournament(out=out, players=players, seed=seed, aggression=aggression, workers=1)
        two = play_tournament(out=out, players=players, seed=seed, aggression=aggression, workers=workers)
    played = one["finished"] and two["finished"] and one["hands_per_s"] and two["hands_per_s"]
    scaling = round(two["hands_per_s"] / one["hands_per_s"], 3) if played else None  # none from an unfinished play
    figures: dict[str, Any] = {
        "players": players,
        "workers": workers,
        "process_scaling": scaling,
        "two_hands_per_s": two["hands_per_s"],
        "one_hands_per_s": one["hands_per_s"],
        "target_process_scaling": 1.5,
        **{f"one_{name}": value for name, value in one.items()},
        **{f"two_{name}": value for name, value in two.items()},
        "one_money_ok": money_ok(one),
        "two_money_ok": money_ok(two),
    }
    rows = [[name, one[name], two[name]] for name in one]
    rows.append(["process_scaling", None, scaling])
    return BenchResult(
        f"Tournament: {players} players to the end by bots, 1 process and {workers} (PostgreSQL)",
        ["figure", "1 process", f"{workers} processes"], rows, figures,
    )  # fmt: skip
