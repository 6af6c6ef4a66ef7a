"""Benchmarks: the responsible-gaming check on the bet path, and an audit export
with its offline verification (``manage.py bench rg_wager_check|audit_export``)."""

from __future__ import annotations

import statistics
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from casino import responsible_gaming as rg
from casino.bench import BenchResult, Writer, benchmark
from ledger.services import (
    NewEvent,
    StreamAppend,
    deposit,
    house_account,
    open_hold,
    player_accounts,
    post_hold,
)


def _player(name: str, funds: int) -> int:
    user, _ = get_user_model().objects.get_or_create(username=name)
    accounts = player_accounts(player_id=user.pk, currency="EUR")
    deposit(wallet=accounts.wallet, amount=funds, currency="EUR", external_reference=f"bench-{uuid.uuid4()}",
            idempotency_key=f"bench-{uuid.uuid4()}", actor="bench")  # fmt: skip
    return int(user.pk)


def _bets(player: int, count: int) -> None:
    accounts = player_accounts(player_id=player, currency="EUR")
    house = house_account(table_id="bench-rg", currency="EUR")
    for _ in range(count):
        stream = f"bench-{uuid.uuid4().hex}"
        hold = open_hold(
            source=accounts.wallet, escrow=accounts.held, destination=house, amount=10, currency="EUR",
            idempotency_key=f"bench-{uuid.uuid4()}", cause=StreamAppend(stream, 0, [NewEvent("bench.bet", {})], {}),
        )  # fmt: skip
        post_hold(hold_id=uuid.UUID(hold.hold_id), amount=10, idempotency_key=f"bench-{uuid.uuid4()}",
                  cause=StreamAppend(stream, 1, [NewEvent("bench.lost", {})], {}))  # fmt: skip


def _time(func: Any, repeat: int) -> tuple[float, float]:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        func()
        samples.append((time.perf_counter() - started) * 1e6)
    return statistics.median(samples), max(samples)


@benchmark("rg_wager_check")
def bench_rg_wager_check(*, out: Writer, repeat: int = 2000, bets: int = 500, **options: Any) -> BenchResult:
    """``assert_may_wager`` latency (µs) inside a transaction: no settings row,
    a row with exclusion/session settings only (one primary-key read), and a
    row with a daily loss limit over ``bets`` settled bets in the window."""
    suffix = uuid.uuid4().hex[:8]
    plain = _player(f"bench-rg-plain-{suffix}", 1_000_000)
    limited = _player(f"bench-rg-session-{suffix}", 1_000_000)
    lossy = _player(f"bench-rg-loss-{suffix}", 1_000_000)
    now = timezone.now()
    rg.set_session_limits(player_id=limited, currency="EUR", session_limit_minutes=600, reality_check_minutes=60)
    rg.note_wager(player_id=limited, currency="EUR", now=now)  # a play session runs
    rg.set_limit(player_id=lossy, kind="loss_day", amount=10**9, currency="EUR", now=now)
    out.write(f"placing {bets} settled bets for the loss-limit player\n")
    _bets(lossy, bets)
    rows: list[list[Any]] = []
    figures: dict[str, Any] = {}
    at = now + timedelta(seconds=1)
    for label, player in (("no_row", plain), ("session_limits", limited), (f"loss_limit_{bets}_bets", lossy)):
        with transaction.atomic():
            p50, worst = _time(
                lambda player=player: rg.assert_may_wager(player_id=player, amount=10, currency="EUR", now=at), repeat
            )
        rows.append([label, repeat, round(p50, 1), round(worst, 1)])
        figures[f"{label}_p50_us"] = round(p50, 1)
    return BenchResult("assert_may_wager latency (µs)", ["case", "calls", "p50_us", "max_us"], rows, figures)


@benchmark("audit_export")
def bench_audit_export(*, out: Writer, bets: int = 2000, **options: Any) -> BenchResult:
    """Export the last minutes (``bets`` settled bets: 2 events and 2 entries each,
    unfiltered JSONL) and verify it offline; events per second for each."""
    from compliance.exports import ExportFilters, export_audit, public_key_hex
    from tools.verify_export import verify_export

    start = timezone.now() - timedelta(seconds=1)
    player = _player(f"bench-export-{uuid.uuid4().hex[:8]}", 10**9)
    out.write(f"placing {bets} settled bets\n")
    _bets(player, bets)
    with tempfile.TemporaryDirectory() as tmp:
        began = time.perf_counter()
        result = export_audit(start=start, end=timezone.now() + timedelta(seconds=1), filters=ExportFilters(),
                              file_format="jsonl", out=Path(tmp) / "x")  # fmt: skip
        export_s = time.perf_counter() - began
        began = time.perf_counter()
        report = verify_export(Path(tmp) / "x", public_key=public_key_hex())
        verify_s = time.perf_counter() - began
    events = result.manifest["counts"]["events"]
    if report.problems:
        raise RuntimeError(f"the export did not verify: {report.problems[0]}")
    rows = [["export", events, round(export_s, 3), round(events / export_s)],
            ["verify", events, round(verify_s, 3), round(events / verify_s)]]  # fmt: skip
    figures = {"events": events, "export_events_per_s": rows[0][3], "verify_events_per_s": rows[1][3]}
    return BenchResult("Audit export and offline verification", ["step", "events", "seconds", "events_per_s"], rows,
                       figures)  # fmt: skip
