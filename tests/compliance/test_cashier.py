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


def wallet(user) -> int:
    return balance_of(account_id=player_accounts(player_id=user.pk, currency=EUR).wallet)


def held(user) -> int:
    return balance_of(account_id=player_accounts(player_id=user.pk, currency=EUR).held)


def deposit_paid(client, user, amount: int, key: str) -> dict:
    txn = client.post("/api/cashier/deposits/", {"amount": amount, "currency": EUR, "request_key": key}).json()
    body = {"external_reference": txn["external_reference"], "status": "paid", "amount": amount, "currency": EUR,
            "provider": "acme"}  # fmt: skip
    assert callback(body).status_code == 200
    return txn


def test_deposit_is_requested_then_paid_by_a_signed_callback_once(player):
    user, client = player
    response = client.post("/api/cashier/deposits/", {"amount": 2_500, "currency": EUR, "request_key": "d1"})
    assert response.status_code == 201, response.content
    txn = response.json()
    assert txn["state"] == "requested"
    assert wallet(user) == 0
    body = {"external_reference": txn["external_reference"], "status": "paid", "amount": 2_500, "currency": EUR,
            "provider": "acme"}  # fmt: skip
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
    body = {"external_reference": txn["external_reference"], "status": "paid", "amount": 100, "currency": EUR,
            "provider": "acme"}  # fmt: skip
    assert callback(body, sign=False).status_code == 401
    forged = callback(body, key_body=b"something else")
    assert forged.status_code == 401
    assert forged.json()["error"]["code"] == "bad_signature"
    assert wallet(user) == 0


def test_a_callback_with_another_amount_is_refused(player):
    user, client = player
    txn = client.post("/api/cashier/deposits/", {"amount": 100, "currency": EUR, "request_key": "x"}).json()
    body = {"external_reference": txn["external_reference"], "status": "paid", "amount": 1000, "currency": EUR,
            "provider": "acme"}  # fmt: skip
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
    body = {"external_reference": txn["external_reference"], "status": "paid", "amount": 3_000, "currency": EUR,
            "provider": "acme"}  # fmt: skip
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
