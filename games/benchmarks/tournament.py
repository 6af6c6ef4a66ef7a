"""``manage.py bench tournament``: a multi-table tournament played to the end by
bots through the real services, on PostgreSQL (issue #23).

``players`` (default 1000) funded players register for a scheduled
tournament through ``register`` (buy-in and fee through the ledger); it starts
through the scheduled start (``start_or_cancel_scheduled``: the random draw,
every starting stack issued from the chip bank) and the deterministic driver
(``games.poker.tournament.driver``) plays it: the dealer's steps, the bots'
actions (``act``, all-in with ``aggression``), and the tournament's step
between hands (busts, the level clock, balancing moves, breaking tables,
hand-for-hand, the final table, the payouts), with its own clock instead of
wall-clock waits and Celery. Timed: from the start to the finish.

Printed: ``players``, ``hands``, ``hands_per_s`` and ``seconds`` (the issue's
target: 50 hands/s or more), and the checks the run ends with:
``verify_ledger`` clean, the prize pool and the chip bank at zero, the payouts
equal to the pool. The issue names no peer program for this one.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection

from casino.bench import BenchResult, Writer, benchmark
from games.cards.shuffle import SeededRandomSource
from games.poker.models import PokerHand
from games.poker.tournament import services as tournament_services
from games.poker.tournament.driver import TournamentDriver
from games.poker.tournament.models import Tournament, TournamentEntry
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


@benchmark("tournament")
def bench_tournament(
    *, out: Writer, players: int = 1000, seed: int = 2026, aggression: float = 0.25, **options: Any
) -> BenchResult:
    """A ``players``-player multi-table tournament played to the end by bots (hands/s)."""
    if connection.vendor != "postgresql":
        raise RuntimeError("bench tournament needs PostgreSQL (set DATABASE_URL)")
    from ledger.services.seals import seal_key
    from ledger.services.verify import verify_ledger

    with scratch_database():
        start = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
        tournament = Tournament(
            kind="scheduled", name=f"Bench {players}", currency="EUR", buy_in=1_000, fee=100,
            starting_chips=10_000, max_players=players, table_seats=9, start_at=start, levels=LEVELS,
            payouts=PAYOUTS, turn_seconds=20, time_bank_seconds=0, between_hands_seconds=2,
        )  # fmt: skip
        tournament.full_clean()
        tournament.save()
        users = get_user_model().objects.bulk_create([get_user_model()(username=f"bench-{i}") for i in range(players)])
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
        rng = SeededRandomSource(seed)
        started = time.perf_counter()
        tournament_services.start_or_cancel_scheduled(tournament_id=tournament.pk, now=start)
        driver = TournamentDriver(tournament.pk, start=start, seed=seed, aggression=aggression, rng_source=rng)

        def progress(report: Any) -> None:
            if report.rounds % 200 == 0:
                left = Tournament.objects.filter(pk=tournament.pk).values_list("players_left", flat=True).get()
                out.write(f"  round {report.rounds}: {report.hands} hands, {left} players left, "
                          f"{time.perf_counter() - started:.1f} s\n")  # fmt: skip

        report = driver.run(on_round=progress)
        seconds = time.perf_counter() - started
        tournament.refresh_from_db()
        pool = balance_of(account_id=tournament_services.pool_account(tournament_id=tournament.pk, currency="EUR"))
        bank = balance_of(account_id=tournament_services.chip_bank(tournament_id=tournament.pk))
        prizes = sum(
            p or 0 for p in TournamentEntry.objects.filter(tournament=tournament).values_list("prize", flat=True)
        )
        hands = PokerHand.objects.filter(table__tournament=tournament).count()
        problems = verify_ledger(key=seal_key())
    if problems:
        out.write(f"verify_ledger: {len(problems)} problems, the first: {problems[0]}\n")
    figures = {
        "players": players,
        "hands": hands,
        "hands_per_s": round(hands / seconds, 1) if seconds else None,
        "seconds": round(seconds, 1),
        "actions": report.actions,
        "tournament_steps": report.steps,
        "finished": report.finished,
        "levels_reached": tournament.current_level,
        "prize_pool_after": pool,
        "chip_bank_after": bank,
        "payouts": prizes,
        "payouts_equal_pool": prizes == players * 1_000,
        "verify_ledger_problems": len(problems),
        "target_hands_per_s": 50,
    }
    rows = [[name, value] for name, value in figures.items()]
    return BenchResult(f"Tournament: {players} players to the end by bots (PostgreSQL)", ["figure", "value"], rows,
                       figures)  # fmt: skip
