"""Roles with least privilege and the admin, through Django's test client
(issue 8): ledger rows read-only for everyone, operator and compliance
scopes, admin changes recorded as events with the operator's identity."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from django.utils import timezone

from casino.cashier import request_withdrawal
from casino.models import CashierTransaction
from compliance.roles import COMPLIANCE, OPERATOR, setup_roles
from ledger.models import Account, Event, Hold, Seal, StatementLine, Transfer
from ledger.services import deposit, player_accounts
from ledger.services.seals import seal
from tests.compliance.staff import staff

pytestmark = pytest.mark.django_db
EUR = "EUR"
LEDGER_MODELS: dict[str, Any] = {"event": Event, "transfer": Transfer, "hold": Hold, "account": Account,
                 "statementline": StatementLine, "seal": Seal}  # fmt: skip


@pytest.fixture
def roles():
    setup_roles()


@pytest.fixture
def funded_player():
    player = get_user_model().objects.create_user("pia", password="pw-pia-123")
    accounts = player_accounts(player_id=player.pk, currency=EUR)
    deposit(wallet=accounts.wallet, amount=5_000, currency=EUR, external_reference="r1", idempotency_key="d1",
            actor="test")  # fmt: skip
    return player, accounts


def test_setup_roles_is_idempotent(roles):
    first = {g.name: set(g.permissions.values_list("codename", flat=True)) for g in Group.objects.all()}
    setup_roles()
    again = {g.name: set(g.permissions.values_list("codename", flat=True)) for g in Group.objects.all()}
    assert first == again
    assert "export_audit" in first[COMPLIANCE]
    assert not any(c.startswith(("add_", "change_", "delete_")) for c in first[COMPLIANCE])
    assert not any(c.startswith("delete_") for c in first[OPERATOR])
    assert "decide_cashiertransaction" in first[OPERATOR]
    assert "view_token" not in first[COMPLIANCE]  # API tokens would let a reviewer act as anyone
    assert "export_audit" not in first[OPERATOR]


@pytest.mark.django_db(transaction=True)  # committed events, so a seal covers them
@pytest.mark.parametrize("who", ["superuser", OPERATOR, COMPLIANCE])
def test_ledger_rows_are_read_only_for_everyone(roles, funded_player, who):
    player, _ = funded_player
    request_withdrawal(player_id=player.pk, amount=10, currency=EUR, request_key="w", now=timezone.now())
    assert seal() is not None
    events = Event.objects.count()
    _, client = staff("boss", superuser=True) if who == "superuser" else staff(f"u-{who}", who)
    for name, model in LEDGER_MODELS.items():
        row = model.objects.first()
        assert row is not None, name
        base = f"/admin/ledger/{name}/"
        assert client.get(base).status_code == 200, name
        assert client.get(f"{base}?q=EUR").status_code == 200, name
        assert client.get(f"{base}{row.pk}/change/").status_code == 200, name
        assert client.get(f"{base}add/").status_code == 403, name
        assert client.post(f"{base}{row.pk}/delete/", {"post": "yes"}).status_code == 403, name
        assert client.post(f"{base}{row.pk}/change/", {}).status_code == 403, name
    assert Event.objects.count() == events


def test_a_wallet_page_shows_its_statement_and_holds(roles, funded_player):
    player, accounts = funded_player
    request_withdrawal(player_id=player.pk, amount=1_200, currency=EUR, request_key="w", now=timezone.now())
    _, client = staff("o1", OPERATOR)
    page = client.get(f"/admin/ledger/account/{accounts.wallet}/change/").content.decode()
    # Money with its currency and decimals (display_money), never a bare figure.
    assert "+50.00 EUR" in page  # the deposit
    assert "-12.00 EUR" in page  # the withdrawal's hold
    assert "12.00 EUR → " in page  # the pending hold
    assert "38.00 EUR" in page  # the balance after it


def test_compliance_sees_everything_and_changes_nothing(roles, funded_player):
    player, _ = funded_player
    request_withdrawal(player_id=player.pk, amount=100, currency=EUR, request_key="w", now=timezone.now())
    _, client = staff("c1", COMPLIANCE)
    assert client.get("/admin/casino/cashiertransaction/").status_code == 200
    assert client.get("/admin/games/housetable/").status_code == 200
    assert client.get("/admin/games/housetable/add/").status_code == 403
    assert client.get("/admin/compliance/complianceaccess/").status_code == 200
    txn = CashierTransaction.objects.get()
    response = client.post("/admin/casino/cashiertransaction/",
                           {"action": "approve", "_selected_action": [str(txn.pk)]})  # fmt: skip
    txn.refresh_from_db()
    assert txn.state == "requested"
    assert response.status_code in (200, 302)
    assert not Event.objects.filter(type="operator.action").exists()


def test_operator_cannot_export_or_see_reports(roles):
    _, client = staff("o2", OPERATOR)
    assert client.get("/admin/compliance/complianceaccess/").status_code == 403
    assert client.get("/api/compliance/export-key/").status_code == 403
    assert client.get("/api/compliance/reports/progressive-pools/?from=2026-01-01&to=2026-01-02").status_code == 403
    assert client.get("/admin/games/housetable/add/").status_code == 200


def test_a_non_staff_player_gets_no_admin(roles):
    player = get_user_model().objects.create_user("plain", password="pw-plain-1")
    client = Client()
    client.force_login(player)
    assert client.get("/admin/ledger/event/").status_code == 302  # to the login page


def test_operator_rejects_a_withdrawal_in_the_admin_with_a_reason_recorded_as_event(roles, funded_player):
    player, _accounts = funded_player
    request_withdrawal(player_id=player.pk, amount=2_000, currency=EUR, request_key="w", now=timezone.now())
    operator, client = staff("o3", OPERATOR)
    txn = CashierTransaction.objects.get()
    ask = client.post("/admin/casino/cashiertransaction/", {"action": "reject", "_selected_action": [str(txn.pk)]})
    assert ask.status_code == 200
    assert b"reason" in ask.content
    done = client.post("/admin/casino/cashiertransaction/",
                       {"action": "reject", "_selected_action": [str(txn.pk)], "apply": "1",
                        "reason": "duplicate request"})  # fmt: skip
    assert done.status_code == 302
    txn.refresh_from_db()
    assert (txn.state, txn.reason, txn.decided_by) == ("rejected", "duplicate request", f"user:{operator.pk}")
    action = Event.objects.get(type="operator.action")
    assert action.stream_id == f"operator-{operator.pk}"
    assert action.data["reason"] == "duplicate request"
    assert action.data["operator_username"] == "o3"
    rejected = Event.objects.get(type="cashier.rejected")
    assert rejected.metadata["actor"] == f"user:{operator.pk}"
    assert Hold.objects.get(pk=txn.pk).status == "voided"


def test_operator_approves_in_the_admin(roles, funded_player):
    player, _ = funded_player
    request_withdrawal(player_id=player.pk, amount=10, currency=EUR, request_key="w", now=timezone.now())
    _, client = staff("o4", OPERATOR)
    txn = CashierTransaction.objects.get()
    client.post("/admin/casino/cashiertransaction/", {"action": "approve", "_selected_action": [str(txn.pk)]})
    txn.refresh_from_db()
    assert txn.state == "approved"
    assert Event.objects.get(type="operator.action").data["action"] == "cashier.approve"


def test_an_admin_change_to_a_table_is_an_event_with_the_operators_identity(roles):
    from games.house.models import HouseTable

    table = HouseTable.objects.create(code="T9", name="nine", game="uth", hand_mode="shared", currency="EUR",
                                      limits={"ante": {"min": 100, "max": 1000}}, pay_tables={"ante_plus": 1},
                                      wheel={}, progressives={}, chips=[100, 500, 1_000])  # fmt: skip
    operator, client = staff("o5", OPERATOR)
    page = client.get(f"/admin/games/housetable/{table.pk}/change/")
    assert page.status_code == 200
    form = page.context["adminform"].form
    data = {name: form.initial.get(name, field.initial) for name, field in form.fields.items()}
    data = {k: ("" if v is None else v) for k, v in data.items()}
    for name in ("limits", "pay_tables", "wheel", "progressives", "rules"):
        if name in data and not isinstance(data[name], str):
            data[name] = json.dumps(data[name])
    data["name"] = "renamed"
    data = {k: v for k, v in data.items() if v is not False}
    response = client.post(f"/admin/games/housetable/{table.pk}/change/", data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    # One event, from the table service (a new configuration version), not a second generic one.
    action = Event.objects.get(type="operator.action")
    assert action.data["action"] == "table.configure"
    assert action.data["target"] == "table:T9"
    assert action.metadata["actor"] == f"user:{operator.pk}"
    assert action.data["details"]["changes"] == {"name": {"from": "nine", "to": "renamed"}}
    assert action.data["details"]["version"] == 2


def test_any_other_admin_change_is_a_generic_event_with_the_operators_identity(roles, funded_player):
    from casino.models import PlayerProfile

    player, _ = funded_player
    profile, _ = PlayerProfile.objects.get_or_create(user=player)
    operator, client = staff("o6", OPERATOR)
    page = client.get(f"/admin/casino/playerprofile/{profile.pk}/change/")
    assert page.status_code == 200
    form = page.context["adminform"].form
    data = {name: form.initial.get(name, field.initial) for name, field in form.fields.items()}
    data = {k: v for k, v in data.items() if v not in (False, None)}
    data["hide_chat"] = "on"
    assert client.post(f"/admin/casino/playerprofile/{profile.pk}/change/", data).status_code == 302
    action = Event.objects.get(type="operator.action")
    assert action.data["action"] == "admin.change"
    assert action.data["target"] == f"casino.playerprofile:{profile.pk}"
    assert action.metadata["actor"] == f"user:{operator.pk}"
    assert "hide" in json.dumps(action.data["details"]["change"]).lower()


def test_the_table_chat_is_not_the_operators_to_edit_and_compliance_reads_it(roles) -> None:
    """The chat (``games.ChatMessage``, once the ``live`` app's) is the players' words
    as written: the operator role gets none of its permissions, compliance may view it."""
    operator = set(Group.objects.get(name=OPERATOR).permissions.values_list("codename", flat=True))
    compliance = set(Group.objects.get(name=COMPLIANCE).permissions.values_list("codename", flat=True))
    assert not {codename for codename in operator if codename.endswith("_chatmessage")}
    assert "change_housetable" in operator  # the operator role is there at all
    assert "view_chatmessage" in compliance
    assert not {codename for codename in compliance if codename.endswith("_chatmessage")} - {"view_chatmessage"}
