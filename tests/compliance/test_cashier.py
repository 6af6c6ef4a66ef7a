"""Cashier flows (issue 8): states requested/approved/paid/rejected, idempotent
signed provider callbacks by external reference, withdrawals hold the funds."""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from casino.cashier_views import SIGNATURE_HEADER, callback_signature
from casino.models import CashierTransaction
from ledger.models import Event, Hold
from ledger.services import balance_of, player_accounts
from ledger.services.verify import verify_ledger

pytestmark = pytest.mark.django_db
EUR = "EUR"


@pytest.fixture
def player():
    user = get_user_model().objects.create_user("pat", password="pw-pat-123")
    client = APIClient()
    client.force_authenticate(user)
    return user, client


@pytest.fixture
def operator():
    from compliance.roles import OPERATOR, setup_roles

    setup_roles()
    user = get_user_model().objects.create_user("op", password="pw-op-123", is_staff=True)
    user.groups.add(Group.objects.get(name=OPERATOR))
    return user


def callback(body: dict, *, sign: bool = True, key_body: bytes | None = None):
    raw = json.dumps(body).encode()
    headers = {SIGNATURE_HEADER: callback_signature(key_body or raw)} if sign else {}
    return Client().post("/api/cashier/callback/", raw, content_type="application/json", headers=headers)


def paid_callback(txn: dict, amount: int) -> dict:
    """The provider's callback body: the transaction ``txn`` paid ``amount``."""
    return {"external_reference": txn["external_reference"], "status": "paid", "amount": amount, "currency": EUR,
            "provider": "acme"}  # fmt: skip


def wallet(user) -> int:
    return balance_of(account_id=player_accounts(player_id=user.pk, currency=EUR).wallet)


def held(user) -> int:
    return balance_of(account_id=player_accounts(player_id=user.pk, currency=EUR).held)


def deposit_paid(client, user, amount: int, key: str) -> dict:
    txn = client.post("/api/cashier/deposits/", {"amount": amount, "currency": EUR, "request_key": key}).json()
    body = paid_callback(txn, amount)
    assert callback(body).status_code == 200
    return txn


def test_deposit_is_requested_then_paid_by_a_signed_callback_once(player):
    user, client = player
    response = client.post("/api/cashier/deposits/", {"amount": 2_500, "currency": EUR, "request_key": "d1"})
    assert response.status_code == 201, response.content
    txn = response.json()
    assert txn["state"] == "requested"
    assert wallet(user) == 0
    body = paid_callback(txn, 2_500)
    first = callback(body)
    assert first.status_code == 200, first.content
    assert first.json()["state"] == "paid"
    assert wallet(user) == 2_500
    # The provider retries: nothing moves twice.
    assert callback(body).json()["state"] == "paid"
    assert wallet(user) == 2_500
    assert Event.objects.filter(type="cashier.deposited").count() == 1
    types = list(
        Event.objects.filter(stream_id=f"cashier-{txn['id']}").order_by("version").values_list("type", flat=True)
    )
    assert types == ["cashier.requested", "cashier.paid"]
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []


def test_a_repeated_player_request_returns_the_same_transaction(player):
    _, client = player
    one = client.post("/api/cashier/deposits/", {"amount": 100, "currency": EUR, "request_key": "same"}).json()
    two = client.post("/api/cashier/deposits/", {"amount": 100, "currency": EUR, "request_key": "same"}).json()
    assert one["id"] == two["id"]
    assert CashierTransaction.objects.count() == 1
    other = client.post("/api/cashier/deposits/", {"amount": 999, "currency": EUR, "request_key": "same"})
    assert other.status_code == 400
    assert other.json()["error"]["code"] == "invalid_cashier_request"


def test_callbacks_without_a_valid_signature_are_refused(player):
    user, client = player
    txn = client.post("/api/cashier/deposits/", {"amount": 100, "currency": EUR, "request_key": "x"}).json()
    body = paid_callback(txn, 100)
    assert callback(body, sign=False).status_code == 401
    forged = callback(body, key_body=b"something else")
    assert forged.status_code == 401
    assert forged.json()["error"]["code"] == "bad_signature"
    assert wallet(user) == 0


def test_a_callback_with_another_amount_is_refused(player):
    user, client = player
    txn = client.post("/api/cashier/deposits/", {"amount": 100, "currency": EUR, "request_key": "x"}).json()
    body = paid_callback(txn, 1000)
    response = callback(body)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "callback_mismatch"
    assert wallet(user) == 0


def test_withdrawal_holds_funds_until_paid_after_operator_approval(player, operator):
    from casino.cashier import operator_decide

    user, client = player
    deposit_paid(client, user, 5_000, "d")
    response = client.post("/api/cashier/withdrawals/", {"amount": 3_000, "currency": EUR, "request_key": "w"})
    assert response.status_code == 201, response.content
    txn = response.json()
    assert (wallet(user), held(user)) == (2_000, 3_000)
    assert Hold.objects.get(pk=txn["id"]).status == "pending"
    body = paid_callback(txn, 3_000)
    early = callback(body)
    assert early.status_code == 409  # not approved yet
    assert early.json()["error"]["code"] == "cashier_state_conflict"
    operator_decide(transaction_id=txn["id"], approve=True, operator=operator, reason="", now=timezone.now())
    action = Event.objects.get(type="operator.action")
    assert action.data["action"] == "cashier.approve"
    assert action.metadata["actor"] == f"user:{operator.pk}"
    assert callback(body).json()["state"] == "paid"
    assert (wallet(user), held(user)) == (2_000, 0)
    assert Hold.objects.get(pk=txn["id"]).status == "posted"
    assert callback(body).json()["state"] == "paid"  # retried: no second payment
    assert Hold.objects.get(pk=txn["id"]).posted_amount == 3_000


def test_rejected_withdrawal_returns_the_held_funds(player, operator):
    from casino.cashier import operator_decide

    user, client = player
    deposit_paid(client, user, 1_000, "d")
    txn = client.post("/api/cashier/withdrawals/", {"amount": 700, "currency": EUR, "request_key": "w"}).json()
    assert (wallet(user), held(user)) == (300, 700)
    operator_decide(transaction_id=txn["id"], approve=False, operator=operator, reason="KYC documents missing",
                    now=timezone.now())  # fmt: skip
    assert (wallet(user), held(user)) == (1_000, 0)
    listed = client.get("/api/cashier/transactions/").json()
    assert [(t["kind"], t["state"]) for t in listed] == [("withdrawal", "rejected"), ("deposit", "paid")]
    assert listed[0]["reason"] == "KYC documents missing"


def test_withdrawal_beyond_the_balance_is_refused(player):
    user, client = player
    deposit_paid(client, user, 100, "d")
    response = client.post("/api/cashier/withdrawals/", {"amount": 101, "currency": EUR, "request_key": "w"})
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "insufficient_funds"
    assert wallet(user) == 100
    assert not CashierTransaction.objects.filter(kind="withdrawal").exists()


# --- refund_due: a paid deposit that cannot be credited (issue 22) -----------------------------------------


def suspense(user) -> int:
    from ledger.services import suspense_account

    return balance_of(account_id=suspense_account(player_id=user.pk, currency=EUR))


def cashier_balance() -> int:
    from ledger.services import cashier_account

    return balance_of(account_id=cashier_account(currency=EUR))


def sums_per_currency() -> dict[str, int]:
    from django.db.models import Sum

    from ledger.models import Account

    return {row["currency"]: row["total"] for row in Account.objects.values("currency").annotate(total=Sum("balance"))}


def staff_client(name: str, group: str):
    from compliance.roles import setup_roles

    setup_roles()
    user = get_user_model().objects.create_user(name, password=f"pw-{name}-123", is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    client = APIClient()
    client.force_login(user)
    return user, client


def summary_row(client, user) -> dict:
    today = timezone.now().date().isoformat()
    response = client.get(f"/api/compliance/reports/player-account-summary/?day={today}&player={user.pk}")
    assert response.status_code == 200, response.content
    [row] = response.json()["rows"]
    return row


def test_a_paid_deposit_for_a_player_excluded_since_goes_to_suspense_until_an_operator_refunds_it(player, operator):
    from compliance.roles import COMPLIANCE

    user, client = player
    txn = client.post("/api/cashier/deposits/", {"amount": 4_000, "currency": EUR, "request_key": "d"}).json()
    assert txn["state"] == "requested"
    excluded = client.post("/api/me/exclusion/", {"kind": "self_exclusion", "days": 180}, format="json")
    assert excluded.status_code == 200, excluded.content
    body = paid_callback(txn, 4_000)
    # The provider holds the money: the callback is answered 200 (no retry loop) with the new state.
    paid = callback(body)
    assert paid.status_code == 200, paid.content
    assert paid.json()["state"] == "refund_due"
    assert wallet(user) == 0
    assert (suspense(user), cashier_balance()) == (4_000, -4_000)
    assert sums_per_currency() == {EUR: 0}
    # A retry answers the same and moves nothing.
    again = callback(body)
    assert (again.status_code, again.json()["state"]) == (200, "refund_due")
    assert suspense(user) == 4_000
    assert Event.objects.filter(stream_id=f"cashier-{txn['id']}", type="cashier.refund_due").count() == 1
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []
    # Listed for operators: the admin's state filter, and the daily report.
    admin = Client()
    admin.force_login(operator)
    listed = admin.get("/admin/casino/cashiertransaction/?state__exact=refund_due")
    assert listed.status_code == 200
    assert txn["external_reference"] in listed.content.decode()
    paid_only = admin.get("/admin/casino/cashiertransaction/?state__exact=paid").content.decode()
    assert txn["external_reference"] not in paid_only
    _, compliance = staff_client("cat", COMPLIANCE)
    row = summary_row(compliance, user)
    assert (row["deposits"], row["closing_balance"]) == (0, 0)
    assert (row["refund_due"], row["refunded"], row["suspense_balance"]) == (4_000, 0, 4_000)
    # Only an operator with the cashier permission records the refund, and with the provider's reference.
    refund_url = f"/api/cashier/transactions/{txn['id']}/refund/"
    assert client.post(refund_url, {"reason": "psp-r-1"}, format="json").status_code == 403
    ops = APIClient()
    ops.force_login(operator)
    no_reason = ops.post(refund_url, {"reason": ""}, format="json")
    assert no_reason.status_code == 400
    refunded = ops.post(refund_url, {"reason": "psp refund r-1"}, format="json")
    assert refunded.status_code == 200, refunded.content
    assert refunded.json()["state"] == "refunded"
    assert (wallet(user), suspense(user), cashier_balance()) == (0, 0, 0)
    assert ops.post(refund_url, {"reason": "psp refund r-1"}, format="json").json()["state"] == "refunded"
    assert cashier_balance() == 0  # refunded once
    [action] = [e for e in Event.objects.filter(type="operator.action") if e.data["action"] == "cashier.refund"]
    assert action.metadata["actor"] == f"user:{operator.pk}"
    types = list(
        Event.objects.filter(stream_id=f"cashier-{txn['id']}").order_by("version").values_list("type", flat=True)
    )
    assert types == ["cashier.requested", "cashier.refund_due", "cashier.refunded"]
    row = summary_row(compliance, user)
    assert (row["refund_due"], row["refunded"], row["suspense_balance"]) == (4_000, 4_000, 0)
    # A later paid callback for it changes nothing.
    assert callback(body).json()["state"] == "refunded"
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []


def test_the_admin_refunds_a_refund_due_deposit_with_four_eyes(player, operator):
    user, client = player
    txn = client.post("/api/cashier/deposits/", {"amount": 900, "currency": EUR, "request_key": "d"}).json()
    client.post("/api/me/exclusion/", {"kind": "cool_off", "days": 2}, format="json")
    body = paid_callback(txn, 900)
    assert callback(body).json()["state"] == "refund_due"
    # The player's own account is theirs to refund by nobody who owns it: an operator who is the player is refused.
    user.is_staff = True
    user.save()
    user.groups.add(operator.groups.get())
    own = Client()
    own.force_login(user)
    own.post("/admin/casino/cashiertransaction/",
             {"action": "refund", "_selected_action": [txn["id"]], "apply": "1", "reason": "r-own"})  # fmt: skip
    assert CashierTransaction.objects.get(pk=txn["id"]).state == "refund_due"
    assert suspense(user) == 900
    admin = Client()
    admin.force_login(operator)
    ask = admin.post("/admin/casino/cashiertransaction/", {"action": "refund", "_selected_action": [txn["id"]]})
    assert ask.status_code == 200
    assert b"reason" in ask.content
    apply = {"action": "refund", "_selected_action": [txn["id"]], "apply": "1", "reason": "psp r-9"}
    done = admin.post("/admin/casino/cashiertransaction/", apply)
    assert done.status_code == 302
    refunded = CashierTransaction.objects.get(pk=txn["id"])
    assert (refunded.state, refunded.reason, refunded.decided_by) == ("refunded", "psp r-9", f"user:{operator.pk}")
    assert (suspense(user), cashier_balance(), wallet(user)) == (0, 0, 0)


def test_only_a_refund_due_deposit_can_be_refunded(player, operator):
    user, client = player
    txn = deposit_paid(client, user, 500, "d")
    ops = APIClient()
    ops.force_login(operator)
    response = ops.post(f"/api/cashier/transactions/{txn['id']}/refund/", {"reason": "r"}, format="json")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "cashier_state_conflict"
    assert (wallet(user), suspense(user)) == (500, 0)


# --- unhandled input (issue 22) -------------------------------------------------------------------------------


def test_a_non_ascii_signature_header_is_a_bad_signature(player):
    user, client = player
    txn = client.post("/api/cashier/deposits/", {"amount": 100, "currency": EUR, "request_key": "x"}).json()
    raw = json.dumps({"external_reference": txn["external_reference"], "status": "paid", "amount": 100,
                      "currency": EUR, "provider": "acme"}).encode()  # fmt: skip
    response = Client().post("/api/cashier/callback/", raw, content_type="application/json",
                             headers={SIGNATURE_HEADER: "\xe9\xff" * 32})  # fmt: skip
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "bad_signature"
    assert wallet(user) == 0


@pytest.mark.parametrize("raw", [b"{not json", b"\xff\xfe", b"[" * 100_000])
def test_a_validly_signed_callback_that_is_not_json_is_a_400(player, raw):
    response = Client().post("/api/cashier/callback/", raw, content_type="application/json",
                             headers={SIGNATURE_HEADER: callback_signature(raw)})  # fmt: skip
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_callback_body"


@pytest.mark.parametrize("path", ["/api/cashier/withdrawals/", "/api/cashier/deposits/"])
def test_an_amount_beyond_bigint_is_a_400(player, path):
    _, client = player
    raw = b'{"amount": 28189888232175730688, "currency": "EUR", "request_key": "big"}'
    response = client.post(path, raw, content_type="application/json")
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "invalid_request"
    assert "amount" in response.json()["error"]["details"]
    assert not CashierTransaction.objects.exists()


def test_a_callback_amount_beyond_bigint_is_a_400(player):
    raw = b'{"external_reference": "dep-x", "status": "paid", "amount": 28189888232175730688, "currency": "EUR", ' \
          b'"provider": "acme"}'  # fmt: skip
    response = Client().post("/api/cashier/callback/", raw, content_type="application/json",
                             headers={SIGNATURE_HEADER: callback_signature(raw)})  # fmt: skip
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_request"
