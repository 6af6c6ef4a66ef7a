"""``manage.py bench rounds``: one shared-hand UTH round with many players through the services.

Measures the player bet path (``place_chip``, sequential, one transaction each),
``make_decision``, the dealer's close-and-deal and the showdown (every player's
settlement in one ``settle_batch``), then ``verify_ledger`` (untimed; a problem fails
the run). Runs in a scratch PostgreSQL database. Option ``players`` (2,000)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection, transaction

from casino.bench import BenchResult, Writer, benchmark
from ledger.benchmarks import scratch_database


@benchmark("rounds")
def bench_rounds(*, out: Writer, players: int = 2000, **options: Any) -> BenchResult:
    """A round of ``players`` players: bets, decisions, deal and settlement timed."""
    if connection.vendor != "postgresql":
        raise RuntimeError("bench rounds needs PostgreSQL (set DATABASE_URL)")
    from games.house.models import HouseTable
    from games.house.services import advance_table, assign_seat, make_decision, place_chip, start_table
    from ledger.services import deposit, player_accounts

    with scratch_database():
        table = HouseTable.objects.create(
            code="BENCH1", name="bench", game="uth", hand_mode="shared", currency="EUR", is_open=True,
            limits={"ante": {"min": 100, "max": 100_000}, "best_five": {"min": 100, "max": 10_000}},
            pay_tables={"ante_plus": 1, "best_five": 1}, betting_seconds=3600, decision_seconds=3600,
        )  # fmt: skip
        users = get_user_model().objects.bulk_create([get_user_model()(username=f"bench-{i}") for i in range(players)])
        for user in users:
            accounts = player_accounts(player_id=user.pk, currency="EUR")
            deposit(wallet=accounts.wallet, amount=1_000_000, currency="EUR", external_reference=f"b{user.pk}",
                    idempotency_key=f"bench-dep-{user.pk}", actor="bench")  # fmt: skip
        with transaction.atomic():
            for user in users:  # seats are taken by events (their rows are projections)
                assign_seat(table_id=table.pk, player_id=user.pk)
        now = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
        tick = start_table(table_id=table.pk, now=now)
        bet_at = now + timedelta(seconds=1)
        started = time.perf_counter()
        for user in users:
            place_chip(table_id=table.pk, player_id=user.pk, spot="ante", amount=500,
                       idempotency_key=f"bench-bet-{user.pk}", now=bet_at)  # fmt: skip
        bets_seconds = time.perf_counter() - started
        out.write(f"{players} bets in {bets_seconds:.2f} s\n")
        assert tick.deadline is not None
        started = time.perf_counter()
        dealt = advance_table(table_id=table.pk, expected_seq=tick.phase_seq, now=tick.deadline)
        deal_seconds = time.perf_counter() - started
        assert dealt is not None
        assert dealt.deadline is not None
        decide_at = dealt.deadline - timedelta(seconds=1)
        started = time.perf_counter()
        for user in users:
            make_decision(table_id=table.pk, player_id=user.pk, option="call4x",
                          idempotency_key=f"bench-call-{user.pk}", now=decide_at)  # fmt: skip
        decisions_seconds = time.perf_counter() - started
        started = time.perf_counter()
        settled = advance_table(table_id=table.pk, expected_seq=dealt.phase_seq, now=decide_at)
        settle_seconds = time.perf_counter() - started
        assert settled is not None
        assert settled.phase == "between"
        # The round's money, chains, seals and read models, after the timing: a bench that
        # leaves a bad ledger fails rather than prints figures.
        from ledger.services.seals import seal_key
        from ledger.services.verify import verify_ledger

        problems = verify_ledger(key=seal_key())
        if problems:
            raise RuntimeError(f"the round left an inconsistent ledger: {problems[0]}")
    figures = {
        "players": players,
        "bets_per_second": round(players / bets_seconds, 1),
        "decisions_per_second": round(players / decisions_seconds, 1),
        "close_and_deal_seconds": round(deal_seconds, 3),
        "showdown_settle_seconds": round(settle_seconds, 3),
        "verify_ledger_problems": len(problems),
    }
    rows = [
        ["place_chip (sequential, 1 client)", f"{figures['bets_per_second']}/s"],
        ["make_decision (sequential, 1 client)", f"{figures['decisions_per_second']}/s"],
        ["close betting + deal", f"{deal_seconds:.3f} s"],
        [f"showdown: settle {players} players", f"{settle_seconds:.3f} s"],
    ]
    return BenchResult("House-banked round (UTH, shared hand)", ["step", "figure"], rows, figures)
