"""Issue #23: the ``tournaments`` report (docs/compliance.md, "Reports") from the
ledger: entries, the prize pool collected, the overlay, fees net of refunds,
payouts (sum and by place), cancellations with their policy and refunds; and
tournament chips (XXX) never appear as money in the money reports."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from django.utils import timezone

from compliance.exports import ExportFilters, export_audit, public_key_hex
from compliance.reports import REPORTS, house_days, player_account_summary, table_performance, tournaments
from compliance.roles import COMPLIANCE, setup_roles
from games.poker.models import PokerHand
from games.poker.tournament import services as tournament_services
from games.poker.tournament.driver import TournamentDriver
from games.poker.tournament.models import Tournament, TournamentEntry
from ledger.currencies import CHIPS
from tests.poker.tables import BUY_IN, FEE, key, make_player, make_tournament
from tools.verify_export import verify_export

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def _register(tournament: Tournament, player: int) -> None:
    tournament_services.register(
        tournament_id=tournament.pk, player_id=player, idempotency_key=key("reg"), now=timezone.now()
    )


def played_sit_and_go(*, guarantee: int = 0, seed: int = 3) -> Tournament:
    """A 6-player Sit & Go (two tables of three) with one unregistration (who comes back), played to the end."""
    tournament = make_tournament(max_players=6, table_seats=3, guarantee=guarantee)
    players = [make_player() for _ in range(6)]
    for player in players[:5]:
        _register(tournament, player)
    tournament_services.unregister(tournament_id=tournament.pk, player_id=players[0], idempotency_key=key("unreg"),
                        now=timezone.now())  # fmt: skip
    _register(tournament, players[0])
    _register(tournament, players[5])
    tournament.refresh_from_db()
    assert tournament.state == "running"
    report = TournamentDriver(tournament.pk, start=timezone.now(), seed=seed).run(max_rounds=5000)
    assert report.finished, report
    tournament.refresh_from_db()
    return tournament


def period() -> dict[str, Any]:
    # Hands carry the driver's clock; the ledger records transfers at the real time.
    return {"start": timezone.now() - timedelta(hours=1), "end": timezone.now() + timedelta(days=2)}


def row_of(tournament: Tournament, **filters: Any) -> dict[str, Any]:
    [row] = [r for r in tournaments(**period(), **filters).rows if r["tournament"] == tournament.pk]
    return row


def test_a_finished_tournament_reconciles_with_its_money() -> None:
    tournament = played_sit_and_go(guarantee=8_000)
    row = row_of(tournament)
    entries = TournamentEntry.objects.filter(tournament=tournament)
    kept = entries.exclude(state="unregistered")
    assert (row["registrations"], row["unregistrations"]) == (7, 1)
    assert (row["buy_ins"], row["buy_ins_refunded"]) == (7 * BUY_IN, BUY_IN)
    collected = row["buy_ins"] - row["buy_ins_refunded"]
    assert collected == 6 * BUY_IN
    assert row["overlay"] == 8_000 - collected  # the guarantee's overlay from the house
    # The pool collected - refunds + overlay = payouts, and the pool ends at zero.
    assert row["buy_ins"] - row["buy_ins_refunded"] + row["overlay"] == row["payouts"] == 8_000
    assert (row["pool_opening"], row["pool_closing"], row["reconciled"]) == (0, 0, True)
    assert sum(e.prize or 0 for e in entries) == row["payouts"]
    # Fees net of refunds = the fees of the entries not refunded.
    assert (row["fees"], row["fees_refunded"]) == (7 * FEE, FEE)
    assert row["net_fees"] == sum(e.fee for e in kept) == 6 * FEE
    # By place, from the payout event: the places' prizes sum to the payouts.
    places = dict(part.split("=") for part in row["payouts_by_place"].split(";"))
    assert sum(int(v) for v in places.values()) == row["payouts"]
    for place, amount in places.items():
        assert int(amount) == sum(e.prize or 0 for e in kept.filter(place=int(place)))
    assert (row["state"], row["currency"], row["cancelled_at"], row["cancel_policy"]) == ("finished", "EUR", "", "")
    assert row["hands"] == PokerHand.objects.filter(table__tournament=tournament).count() > 0
    # The currency filter; the CSV carries the row.
    assert row_of(tournament, currency="EUR") == row
    assert tournaments(**period(), currency="USD").rows == []
    assert f"{tournament.pk},{tournament.name}" in tournaments(**period()).as_csv()


def test_tournament_chips_never_appear_as_money() -> None:
    """The money reports leave the tournament's chips out (its hands are played
    for XXX); the buy-ins, fees and prizes are the players' stakes and returns."""
    tournament = played_sit_and_go()
    assert PokerHand.objects.filter(table__tournament=tournament, currency=CHIPS).exists()
    start, end = period()["start"], period()["end"]
    arguments: dict[str, dict[str, Any]] = {
        "player-account-summary": {"day": timezone.now().date()},
        "house-days": {"start": start.date(), "days": 3},
    }
    for name, report in REPORTS.items():
        rows = report(**arguments.get(name, {"start": start, "end": end})).rows
        assert all(row.get("currency") != CHIPS for row in rows), name
    assert table_performance(start=start, end=end, currency=CHIPS).rows == []
    assert house_days(start=start.date(), days=3, currency=CHIPS).rows == []
    # The players' wallets: buy-in + fee are stakes, prizes returns.
    winner = TournamentEntry.objects.get(tournament=tournament, state="winner")
    entered = TournamentEntry.objects.filter(player_id=winner.player_id).count()  # 2: unregistered and came back
    refunded = (entered - 1) * (BUY_IN + FEE)
    [summary] = player_account_summary(day=timezone.now().date(), player=str(winner.player_id)).rows
    assert (summary["currency"], summary["stakes"]) == ("EUR", entered * (BUY_IN + FEE))
    assert summary["returns"] == (winner.prize or 0) + refunded
    assert summary["reconciled"]


def test_a_cancelled_tournament_shows_its_refunds() -> None:
    tournament = make_tournament()
    players = [make_player() for _ in range(3)]
    for player in players:
        _register(tournament, player)
    operator = get_user_model().objects.create(username=key("op"), is_staff=True)
    tournament_services.cancel_tournament(
        tournament_id=tournament.pk, operator=operator, reason="fault", now=timezone.now()
    )
    row = row_of(tournament)
    assert (row["state"], row["cancel_policy"], row["registrations"], row["unregistrations"]) == (
        "cancelled", "refund", 3, 0)  # fmt: skip
    assert row["cancelled_at"]
    assert (row["buy_ins"], row["buy_ins_refunded"], row["fees"], row["fees_refunded"]) == (
        3 * BUY_IN, 3 * BUY_IN, 3 * FEE, 3 * FEE)  # fmt: skip
    assert (row["cancel_refunded"], row["cancel_paid"], row["payouts"], row["net_fees"]) == (
        3 * (BUY_IN + FEE),
        0,
        0,
        0,
    )
    assert (row["pool_closing"], row["reconciled"], row["hands"]) == (0, True, 0)


def test_a_tournament_cancelled_with_nobody_registered_is_listed() -> None:
    tournament = make_tournament()
    operator = get_user_model().objects.create(username=key("op"), is_staff=True)
    tournament_services.cancel_tournament(
        tournament_id=tournament.pk, operator=operator, reason="no interest", now=timezone.now()
    )
    row = row_of(tournament)
    assert (row["cancel_policy"], row["cancel_refunded"], row["registrations"], row["reconciled"]) == (
        "refund", 0, 0, True)  # fmt: skip


def test_a_running_tournament_cancelled_by_chip_count_pays_the_pool() -> None:
    tournament = make_tournament(max_players=3, table_seats=3, cancel_policy="chip_count")
    for player in [make_player() for _ in range(3)]:
        _register(tournament, player)
    # Bots that never raise: a few hands, nobody can bust (only the blinds are bet).
    TournamentDriver(tournament.pk, start=timezone.now(), seed=5, aggression=0.0).run(max_rounds=20)
    tournament.refresh_from_db()
    assert tournament.state == "running"
    operator = get_user_model().objects.create(username=key("op"), is_staff=True)
    tournament_services.cancel_tournament(
        tournament_id=tournament.pk, operator=operator, reason="fault", now=timezone.now()
    )
    row = row_of(tournament)
    assert (row["state"], row["cancel_policy"], row["cancel_refunded"]) == ("cancelled", "chip_count", 0)
    assert row["cancel_paid"] == row["payouts"] == 3 * BUY_IN
    assert row["net_fees"] == 3 * FEE  # fees are kept under chip_count
    assert (row["pool_closing"], row["reconciled"]) == (0, True)


def test_the_compliance_role_reads_the_report_over_the_api() -> None:
    tournament = make_tournament()
    players = [make_player() for _ in range(2)]
    for player in players:
        _register(tournament, player)
    setup_roles()
    user = get_user_model().objects.create_user(key("cat"), password="pw-cat-1", is_staff=True)
    user.groups.add(Group.objects.get(name=COMPLIANCE))
    client = Client()
    client.force_login(user)
    start, end = (moment.isoformat().replace("+00:00", "Z") for moment in period().values())
    body = client.get("/api/compliance/reports/tournaments/", {"from": start, "to": end}).json()
    assert body["title"] == "Poker tournaments"
    [row] = [r for r in body["rows"] if r["tournament"] == tournament.pk]
    assert (row["registrations"], row["buy_ins"], row["net_fees"]) == (2, 2 * BUY_IN, 2 * FEE)
    csv = client.get("/api/compliance/reports/tournaments/", {"from": start, "to": end, "output": "csv"})
    assert csv["Content-Type"] == "text/csv"
    outsider = Client()
    outsider.force_login(get_user_model().objects.get(pk=players[0]))
    assert outsider.get("/api/compliance/reports/tournaments/", {"from": start, "to": end}).status_code == 403


@pytest.mark.django_db(transaction=True)  # committed: the export seals what has committed
def test_an_audit_export_over_a_tournament_verifies_and_keeps_chips_apart(tmp_path: Path) -> None:
    """The audit export has no report sections: its entries and totals are the
    ledger's per unit, so a tournament's chips are the ``XXX`` key, its money
    under EUR; the export verifies offline (``tools/verify_export.py``)."""
    start = timezone.now() - timedelta(seconds=1)
    tournament = played_sit_and_go(guarantee=8_000)
    out = tmp_path / "export"
    end = timezone.now() + timedelta(seconds=1)
    export_audit(start=start, end=end, filters=ExportFilters(), file_format="jsonl", out=out)
    assert verify_export(out, public_key=public_key_hex()).problems == []
    totals = json.loads((out / "manifest.json").read_text())["totals"]
    [row] = [r for r in tournaments(start=start, end=end).rows if r["tournament"] == tournament.pk]
    money = totals["EUR"]["by_kind"]
    assert (money["tourney_buy_in"], money["tourney_fee"], money["tourney_prize"]) == (
        row["buy_ins"], row["fees"], row["payouts"])  # fmt: skip
    assert money["tourney_overlay"] == row["overlay"]
    assert not {"tourney_buy_in", "tourney_prize"} & set(totals["XXX"]["by_kind"])
    assert "tourney_chips" in totals["XXX"]["by_kind"]
