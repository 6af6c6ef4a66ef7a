"""The poker table's admin page: pause, resume and void the hand in play with a
reason (void confirmed), recorded as ``operator.action`` with the operator's
identity; the compliance role may look but not act (RULES.md, "Malfunction
voids all pays and play")."""

from __future__ import annotations

import pytest

from compliance.roles import COMPLIANCE, OPERATOR, setup_roles
from games.poker import event_types as et
from games.poker.models import PokerHand, PokerSeat
from ledger.models import Event
from ledger.services import read_stream
from tests.compliance.staff import staff
from tests.db import ledger_sums
from tests.poker.tables import act, advance, snapshot
from tests.poker.test_tables import AA_VS_KK, three_handed

pytestmark = pytest.mark.django_db
ADMIN = "/admin/games/pokertable/"


def test_operator_pauses_resumes_and_voids_the_hand_from_the_table_page() -> None:
    setup_roles()
    table, (p1, p2, p3) = three_handed()
    table = advance(table, cards=AA_VS_KK)
    hand_id = table.current_hand_id
    act(table, p1, "raise", 30)
    operator, client = staff("poker-op", OPERATOR)
    page = client.get(f"{ADMIN}{table.pk}/change/").content.decode()
    assert 'id="hand-pause"' in page
    assert 'id="hand-void"' in page

    assert client.get(f"{ADMIN}{table.pk}/hand/pause/").status_code == 200
    before = snapshot()
    assert client.post(f"{ADMIN}{table.pk}/hand/pause/", {"reason": ""}).status_code == 200  # reason required
    assert snapshot() == before
    assert client.post(f"{ADMIN}{table.pk}/hand/pause/", {"reason": "table camera down"}).status_code == 302
    table.refresh_from_db()
    assert table.phase == "paused"
    [paused] = [e for e in read_stream(stream_id=et.hand_stream(hand_id)) if e.type == et.PAUSED]
    assert (paused.data["actor"], paused.data["reason"]) == (f"user:{operator.pk}", "table camera down")
    assert 'id="hand-resume"' in client.get(f"{ADMIN}{table.pk}/change/").content.decode()

    assert client.post(f"{ADMIN}{table.pk}/hand/resume/").status_code == 302
    table.refresh_from_db()
    assert table.phase == "hand"

    unconfirmed = client.post(f"{ADMIN}{table.pk}/hand/void/", {"reason": "card misdealt"})
    assert unconfirmed.status_code == 200
    assert b"confirmation" in unconfirmed.content
    assert PokerHand.objects.get(hand_id=hand_id).status == "playing"
    done = client.post(f"{ADMIN}{table.pk}/hand/void/", {"reason": "card misdealt", "confirm": "on"})
    assert done.status_code == 302
    assert PokerHand.objects.get(hand_id=hand_id).status == "voided"
    assert [PokerSeat.objects.get(table=table, player_id=p).stack for p in (p1, p2, p3)] == [1000, 1000, 1000]
    assert ledger_sums() == {"EUR": 0}
    actions = Event.objects.filter(type="operator.action", stream_id=f"operator-{operator.pk}").order_by("id")
    assert [(e.data["action"], e.data["reason"]) for e in actions] == [
        ("hand.pause", "table camera down"), ("hand.resume", ""), ("hand.void", "card misdealt")
    ]  # fmt: skip
    assert all(e.data["target"] == f"poker-hand:{hand_id}" for e in actions)

    # Once voided, another void is refused with its code and changes nothing.
    before = snapshot()
    refused = client.post(f"{ADMIN}{table.pk}/hand/void/", {"reason": "again", "confirm": "on"}, follow=True)
    assert any(str(m).startswith("poker_hand_voided:") for m in refused.context["messages"])
    assert snapshot() == before


def test_compliance_may_not_pause_resume_or_void() -> None:
    setup_roles()
    table, _ = three_handed()
    table = advance(table, cards=AA_VS_KK)
    _, viewer = staff("poker-cat", COMPLIANCE)
    before = snapshot()
    for action in ("pause", "resume", "void"):
        assert viewer.get(f"{ADMIN}{table.pk}/hand/{action}/").status_code == 403
        assert viewer.post(f"{ADMIN}{table.pk}/hand/{action}/", {"reason": "x", "confirm": "on"}).status_code == 403
    assert snapshot() == before
