"""Issue 36, part 1: every line of every report against the ledger, to the cent,
and the same figures on SQLite and PostgreSQL.

The scenario (``tests/compliance/report_scenario.py``) plays a STAX round (the
demo's pools seeded from the house, the Star pool hit), a round the house pays,
a voided round, a raked poker hand, a guaranteed Sit & Go played out and a
cancelled one. The expected figures are summed here from the ledger's transfer
rows by their ``kind`` (docs/ledger.md, docs/compliance.md "Handle, payouts and
hold"): stakes posted to a house are the handle, the house's ``payout`` transfers
the payouts, and seeding (``pool_seed``, ``pool_reset``), contributions, pool hits
(``jackpot``), rake, tournament fees and the overlay each their own line, never a
payout. The regulators' rule (hold = stakes - winnings paid) and the scenario's
own numbers (the demo's 1,425,000 of seeding, seed 001's 5 of rake, the
guarantee's overlay) are checked as well.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest

from compliance.reports import REPORTS
from games.house.demo import DEMO_TABLES
from games.house.models import HouseRound
from ledger.models import Account, Transfer
from tests.compliance.report_scenario import (
    GUARANTEE,
    STAX_STAKE,
    normalised_reports,
    play,
    report_arguments,
)
from tests.poker.tables import BUY_IN, FEE

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]
ROOT = Path(__file__).resolve().parents[2]
SEEDING, HITS = ("pool_seed", "pool_reset"), ("jackpot",)


def rows_of(name: str) -> list[dict[str, Any]]:
    return REPORTS[name](**report_arguments(name)).rows


def ledger() -> list[Transfer]:
    return list(Transfer.objects.select_related("debit_account", "credit_account").order_by("id"))


def by_kind(transfers: list[Transfer], *kinds: str) -> int:
    return sum(t.amount for t in transfers if t.kind in kinds)


def house_lines(transfers: list[Transfer]) -> dict[str, int]:
    """The house's lines summed from transfer rows by kind (the rules, not the report's code)."""
    fees_in = sum(t.amount for t in transfers if t.kind == "tourney_fee" and t.credit_account.kind == "rake")
    fees_back = sum(t.amount for t in transfers if t.kind == "tourney_refund" and t.debit_account.kind == "rake")
    handle = sum(t.amount for t in transfers if t.kind == "post" and t.credit_account.kind == "house")
    payouts = by_kind(transfers, "payout")
    return {
        "handle": handle, "payouts": payouts, "hold": handle - payouts,
        "progressive_seeding": by_kind(transfers, *SEEDING),
        "progressive_contributions": by_kind(transfers, "contribution"), "pool_hits": by_kind(transfers, *HITS),
        "rake": by_kind(transfers, "rake"), "tournament_fees": fees_in - fees_back,
        "prize_pool_overlay": by_kind(transfers, "tourney_overlay"), "other": 0,
    }  # fmt: skip


def of_table(transfers: list[Transfer], table_id: int) -> list[Transfer]:
    """The transfers on the table's house or progressive pool accounts."""
    table = f"table:{table_id}"
    return [
        t for t in transfers
        if any(":".join(a.owner.split(":")[:2]) == table and a.kind in ("house", "pool")
               for a in (t.debit_account, t.credit_account))
    ]  # fmt: skip


def pct(hold: int, handle: int) -> str:
    return f"{100 * hold / handle:.2f}" if handle else ""


def test_every_line_of_every_report_matches_the_ledger_to_the_cent() -> None:
    played = play()
    transfers = ledger()
    money = [t for t in transfers if t.currency == "EUR"]

    # house-days: one row per UTC day of the transfers, each line summed by kind.
    days: dict[str, list[Transfer]] = defaultdict(list)
    for t in money:
        if {t.debit_account.kind, t.credit_account.kind} & {"house", "pool", "rake"}:
            days[t.created_at.astimezone(UTC).date().isoformat()].append(t)
    house_days = rows_of("house-days")
    assert [row["day"] for row in house_days] == sorted(days)
    for row in house_days:
        expected = house_lines(days[row["day"]])
        assert {k: row[k] for k in expected} == expected, row["day"]
        assert row["hold_pct"] == pct(row["hold"], row["handle"])
    total = {line: sum(row[line] for row in house_days) for line in house_lines([])}
    # The scenario: the demo's STAX pools seeded from the house (1,425,000) and
    # the Star pool reset after its hit are seeding, never payouts; hold = stakes - payouts.
    resets = next(t["progressives"] for t in DEMO_TABLES if t["code"] == "XTR1")["reset"]
    assert total["progressive_seeding"] == sum(resets.values()) + resets["star"] == 2_425_000
    assert total["payouts"] == by_kind(money, "payout") < total["progressive_seeding"]
    assert total["hold"] == total["handle"] - total["payouts"]
    assert total["rake"] == 5  # seed 001: 2.5 % of the 210 pot
    assert total["prize_pool_overlay"] == GUARANTEE - 3 * BUY_IN
    assert total["tournament_fees"] == 3 * FEE  # the played Sit & Go's; the cancelled one's were refunded
    assert min(total["pool_hits"], total["progressive_contributions"]) > 0
    # The house accounts' own change is exactly what these lines say it is.
    house_net = sum(t.amount for t in money if t.credit_account.kind == "house")
    house_net -= sum(t.amount for t in money if t.debit_account.kind == "house")
    assert house_net == (total["hold"] - total["progressive_seeding"] - total["progressive_contributions"]
                         - total["prize_pool_overlay"])  # fmt: skip

    # table-performance: a row per table, its money summed from its accounts' transfers by kind.
    performance = {row["table"].removesuffix(played.tag): row for row in rows_of("table-performance")}
    assert set(performance) == {*played.tables, "NL-R"}
    for code, table_id in played.tables.items():
        row = performance[code]
        expected = house_lines(of_table(money, table_id))
        assert {k: row[k] for k in expected} == expected, code
        assert row["hold_pct"] == pct(row["hold"], row["handle"])
        rounds = HouseRound.objects.filter(table_id=table_id)
        assert (row["rounds"], row["voids"]) == (rounds.count(), rounds.filter(status="voided").count())
    assert performance["XTR-R"]["progressive_seeding"] == 2_425_000
    assert performance["XTR-R"]["payouts"] == 0  # the ante lost; the STAX win came from the pool
    assert performance["XTR-R"]["pool_hits"] == by_kind(money, "jackpot")
    assert (performance["UTH-V"]["voids"], performance["UTH-V"]["handle"]) == (1, 0)
    poker = performance["NL-R"]
    pots = [t for t in money if t.credit_account.kind == "poker_pot" or t.debit_account.kind == "poker_pot"]
    pot_in = sum(t.amount for t in pots if t.kind == "bet")
    assert (poker["handle"], poker["payouts"]) == (pot_in, by_kind(pots, "pot", "uncalled")) == (210, 205)
    assert (poker["hold"], poker["rake"], poker["hold_pct"]) == (5, 5, pct(5, 210))

    # progressive-pools: per pool account, by kind, and its balance.
    pools = {row["pool"]: row for row in rows_of("progressive-pools")}
    accounts = Account.objects.filter(kind="pool")
    assert set(pools) == {a.owner for a in accounts}
    for account in accounts:
        mine = [t for t in money if account.pk in (t.debit_account_id, t.credit_account_id)]
        assert pools[account.owner] == {
            "pool": account.owner, "currency": "EUR", "opening_balance": 0,
            "contributions": by_kind(mine, "contribution"), "seeding": by_kind(mine, *SEEDING),
            "payouts": by_kind(mine, *HITS), "closing_balance": account.balance,
        }  # fmt: skip
    star = pools[f"table:{played.tables['XTR-R']}:stax:star"]
    assert star["contributions"] == STAX_STAKE * 200 // 10_000  # the demo's Star: 2 % of the STAX stake

    # player-account-summary: per wallet, that day's deposits from the cashier, stakes and returns the rest.
    day = report_arguments("player-account-summary")["day"]
    summary = {row["player"]: row for row in rows_of("player-account-summary")}
    for player in played.players.values():
        wallet = Account.objects.get(kind="wallet", owner=f"player:{player}")
        mine = [t for t in money if wallet.pk in (t.debit_account_id, t.credit_account_id)]
        before = sum(t.amount if t.credit_account_id == wallet.pk else -t.amount for t in mine
                     if t.created_at.astimezone(UTC).date() < day)  # fmt: skip
        that_day = [t for t in mine if t.created_at.astimezone(UTC).date() == day]
        if not that_day:  # the scenario ran across midnight: this wallet moved only the day before
            assert str(player) not in summary
            continue
        out = [t for t in that_day if t.debit_account_id == wallet.pk]
        into = [t for t in that_day if t.credit_account_id == wallet.pk]
        cashier = {"cashier"}
        assert summary[str(player)] == {
            "player": str(player), "currency": "EUR", "opening_balance": before,
            "deposits": sum(t.amount for t in into if t.debit_account.kind in cashier),
            "withdrawals": sum(t.amount for t in out if t.credit_account.kind in cashier),
            "stakes": sum(t.amount for t in out if t.credit_account.kind not in cashier),
            "returns": sum(t.amount for t in into if t.debit_account.kind not in cashier), "adjustments": 0,
            "closing_balance": wallet.balance, "refund_due": 0, "refunded": 0, "suspense_balance": 0,
            "reconciled": True,
        }  # fmt: skip
    assert set(summary) <= {str(pk) for pk in played.players.values()}

    # voided-rounds: the voided round, its stakes refunded (the holds' ``void`` transfers).
    [void] = rows_of("voided-rounds")
    refunded = [t for t in money if t.kind == "void" and t.debit_account.kind == "held"]
    assert (void["table"], void["reason"], void["players"]) == ("UTH-V" + played.tag, "shuffler fault", 1)
    assert void["refunded"] == by_kind(refunded, "void") > 0

    # tournaments: each tournament's pool and fee accounts, by kind.
    tournaments = {row["tournament"]: row for row in rows_of("tournaments")}
    assert set(tournaments) == set(played.tournaments.values())
    for tournament_id in played.tournaments.values():
        owner = f"poker-tournament:{tournament_id}"
        pool = [t for t in money if owner in (t.debit_account.owner, t.credit_account.owner)
                and "tournament_pool" in (t.debit_account.kind, t.credit_account.kind)]  # fmt: skip
        fees = [t for t in money if (t.credit_account.owner, t.credit_account.kind) == (owner, "rake")
                or (t.debit_account.owner, t.debit_account.kind) == (owner, "rake")]  # fmt: skip
        row = tournaments[tournament_id]
        expected = {
            "buy_ins": by_kind(pool, "tourney_buy_in"), "buy_ins_refunded": by_kind(pool, "tourney_refund"),
            "overlay": by_kind(pool, "tourney_overlay"), "payouts": by_kind(pool, "tourney_prize"),
            "fees": by_kind(fees, "tourney_fee"), "fees_refunded": by_kind(fees, "tourney_refund"),
            "net_fees": by_kind(fees, "tourney_fee") - by_kind(fees, "tourney_refund"),
            "pool_opening": 0, "pool_closing": 0, "reconciled": True,
        }  # fmt: skip
        assert {k: row[k] for k in expected} == expected, tournament_id
    played_row = tournaments[played.tournaments["Report SNG"]]
    assert (played_row["overlay"], played_row["payouts"], played_row["net_fees"]) == (
        GUARANTEE - 3 * BUY_IN, GUARANTEE, 3 * FEE)  # fmt: skip
    cancelled = tournaments[played.tournaments["Report SNG cancelled"]]
    assert (cancelled["cancel_refunded"], cancelled["net_fees"]) == (2 * (BUY_IN + FEE), 0)


def sqlite_run(directory: Path) -> subprocess.Popen[str]:
    """The scenario on a fresh SQLite file, as ``make run``'s embedded default runs
    (no Redis: the filesystem broker, ``var/`` in ``directory``). A program, not the
    pytest suite (tests/services.py refuses SQLite for the suite under CI)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "REDIS_", "CELERY_"))}
    env |= {"DATABASE_URL": f"sqlite:///{directory / 'reports.sqlite3'}", "CASINO_VAR_DIR": str(directory / "var")}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.compliance.report_scenario"], cwd=ROOT, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


def test_sqlite_and_postgresql_give_the_same_figures(tmp_path: Path) -> None:
    from django.db import connection

    other = sqlite_run(tmp_path)  # meanwhile, the same play here (the suite's database)
    here = normalised_reports(play())
    stdout, stderr = other.communicate(timeout=300)
    assert other.returncode == 0, stderr[-3000:]
    there = json.loads(stdout)
    assert (connection.vendor, there["vendor"]) == ("postgresql", "sqlite")
    for name in REPORTS:
        assert here[name], name  # every report has rows: nothing compared vacuously
        assert there["reports"][name] == here[name], name
