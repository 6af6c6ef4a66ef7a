"""Round-dependent compliance (issue 8): table/game performance and voided
rounds reports, operator pause/resume/void in the admin (recorded with the
operator's identity, void confirmed), game recall, and a day with a void and
a progressive hit exported and verified by the standalone script."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from compliance.exports import ExportFilters, export_audit, public_key_hex
from compliance.reports import progressive_pool_report, table_performance, voided_rounds
from compliance.roles import COMPLIANCE, OPERATOR, setup_roles
from games.house.models import HouseRound
from games.house.services import make_decision, place_chip
from ledger.models import Event
from tests.compliance.staff import staff
from tests.conftest import ROOT
from tests.house.services.conftest import T0, key, later, make_player, make_table, open_round, shoe, step, wallet

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


def settled_uth_round():
    table = make_table("uth", code="UTH1")
    alice = make_player(table)
    tick = open_round(table, shoe_cards=shoe("As Kd", dealer="2c 3c", board="Ah 7d 9s Jc 4h"))
    place_chip(table_id=table.pk, player_id=alice, spot="ante", amount=100, idempotency_key=key(), now=later(tick))
    tick = step(table, tick)
    make_decision(table_id=table.pk, player_id=alice, option="call4x", idempotency_key=key(), now=later(tick))
    tick = step(table, tick)
    assert tick.phase == "between"
    return table, alice, tick


def test_operator_voids_a_round_in_the_admin_and_reports_show_it(tmp_path: Path):
    setup_roles()
    table, alice, tick = settled_uth_round()
    settled = HouseRound.objects.get(status="settled")
    tick = step(table, tick)  # the next round opens
    assert tick.phase == "betting"
    place_chip(table_id=table.pk, player_id=alice, spot="ante", amount=200, idempotency_key=key(), now=later(tick))
    assert wallet(alice) == 100_000 + 400 - 400
    current = HouseRound.objects.get(status="open")
    operator, client = staff("op", OPERATOR)
    page = client.get(f"/admin/games/houseround/{current.pk}/change/").content.decode()
    assert "house_round.opened" in page
    assert "round-timeline" in page
    control = f"/admin/games/houseround/{current.pk}/control/void/"
    unconfirmed = client.post(control, {"reason": "card misdealt"})
    assert unconfirmed.status_code == 200
    assert b"confirmation" in unconfirmed.content
    assert HouseRound.objects.get(pk=current.pk).status == "open"
    done = client.post(control, {"reason": "card misdealt", "confirm": "on"})
    assert done.status_code == 302
    assert HouseRound.objects.get(pk=current.pk).status == "voided"
    assert wallet(alice) == 100_000 + 400  # the stake came back
    action = Event.objects.get(type="operator.action")
    assert (action.data["action"], action.data["reason"]) == ("round.void", "card misdealt")
    voided_event = Event.objects.get(type="house_round.voided")
    assert voided_event.data["actor"] == f"user:{operator.pk}"
    # Compliance may look but not act.
    _, viewer = staff("cat", COMPLIANCE)
    assert viewer.get(f"/admin/games/houseround/{current.pk}/change/").status_code == 200
    assert viewer.post(f"/admin/games/houseround/{settled.pk}/control/pause/", {"reason": "x"}).status_code == 403

    # Rounds opened at the table's clock (T0); the ledger moved the money at the real time.
    start, end = T0 - timedelta(hours=1), timezone.now() + timedelta(hours=1)
    [row] = table_performance(start=start, end=end).rows
    assert row == {"table": "UTH1", "game": "uth", "currency": "EUR", "rounds": 2, "handle": settled.staked,
                   "payouts": settled.returned, "hold": settled.staked - settled.returned,
                   "hold_pct": f"{100 * (settled.staked - settled.returned) / settled.staked:.2f}", "voids": 1,
                   "rake": 0, "progressive_seeding": 0, "progressive_contributions": 0, "pool_hits": 0,
                   "tournament_fees": 0, "prize_pool_overlay": 0, "other": 0}  # fmt: skip
    [void] = voided_rounds(start=timezone.now() - timedelta(hours=1), end=timezone.now() + timedelta(hours=1)).rows
    assert (void["game_number"], void["reason"], void["refunded"], void["players"]) == (
        current.game_number, "card misdealt", 400, 1)  # ante 200 and its automatic ante_plus 200  # fmt: skip
    assert void["actor"] == f"user:{operator.pk}"

    # Game recall: as alice saw the settled round, plus the dealt cards.
    recall = client.get(f"/api/compliance/game-recall/{settled.game_number}/?player={alice}").json()
    assert recall["as_seen"]["player"]["player_id"] == alice
    assert recall["dealt"] is not None

    # A STAX progressive hit the same day (a royal flush on the Star pool).
    xtreme = make_table(
        "xtreme", code="XTR1", progressives={"reset": {"star": 100_000}, "contribution_bp": {"star": 0}}
    )
    bob = make_player(xtreme)
    tick = open_round(xtreme, shoe_cards=shoe("Ad Kd", dealer="2c 3s", board="Qd Jd Td 5c 8h"))
    for spot in ("ante", "stax"):
        place_chip(table_id=xtreme.pk, player_id=bob, spot=spot, amount=100, idempotency_key=key(), now=later(tick))
    tick = step(xtreme, tick)
    while tick.phase != "between":
        tick = step(xtreme, tick)
    assert Event.objects.filter(type="house_round.progressive_hit").exists()
    pools = progressive_pool_report(start=timezone.now() - timedelta(hours=1), end=timezone.now() + timedelta(hours=1))
    star = next(r for r in pools.rows if r["pool"] == f"table:{xtreme.pk}:stax:star")
    # Seeded at opening and reset after the hit by the house: seeding, not contributions (0 bp).
    assert (star["contributions"], star["seeding"], star["payouts"], star["closing_balance"]) == (
        0, 200_000, 100_000, 100_000)  # fmt: skip

    # The day's export (with the void and the hit) verifies with the standalone script.
    out = tmp_path / "day"
    export_audit(start=timezone.now() - timedelta(hours=1), end=timezone.now() + timedelta(seconds=1),
                 filters=ExportFilters(), file_format="jsonl", out=out)  # fmt: skip
    script = str(ROOT / "tools" / "verify_export.py")
    run = subprocess.run([sys.executable, "-I", script, str(out), "--public-key", public_key_hex()],
                         capture_output=True, text=True, cwd="/", env={})  # fmt: skip
    assert run.returncode == 0, run.stdout
    exported = (out / "events.jsonl").read_text()
    assert "house_round.voided" in exported
    assert "house_round.progressive_hit" in exported
    table_only = tmp_path / "table"
    export_audit(start=timezone.now() - timedelta(hours=1), end=timezone.now() + timedelta(seconds=1),
                 filters=ExportFilters(table=str(table.pk)), file_format="csv", out=table_only)  # fmt: skip
    run = subprocess.run([sys.executable, "-I", str(ROOT / "tools" / "verify_export.py"), str(table_only)],
                         capture_output=True, text=True, cwd="/", env={})  # fmt: skip
    assert run.returncode == 0, run.stdout
