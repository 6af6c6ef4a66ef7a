"""Four eyes at the cashier (issue #20): an operator who also has a player
account cannot approve or reject that account's deposits and withdrawals, not
through the service and not through the admin actions; another operator can."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.utils import timezone

from casino.cashier import operator_decide, request_deposit, request_withdrawal
from casino.errors import DomainError
from casino.models import CashierTransaction
from compliance.roles import OPERATOR, setup_roles
from ledger.services import deposit, player_accounts
from tests.compliance.staff import staff
from tests.db import rows

pytestmark = pytest.mark.django_db
EUR = "EUR"
ADMIN = "/admin/casino/cashiertransaction/"


def everything() -> dict[str, Any]:
    return rows("ledger_event", "ledger_transfer", "ledger_hold", "ledger_account", "ledger_statement_line",
                CashierTransaction._meta.db_table)  # fmt: skip


@pytest.fixture
def own_requests() -> tuple[Any, Any, list[CashierTransaction]]:
    """An operator with a funded player account of their own and two requests on it."""
    setup_roles()
    operator, client = staff("op-player", OPERATOR)
    wallet = player_accounts(player_id=operator.pk, currency=EUR).wallet
    deposit(wallet=wallet, amount=5_000, currency=EUR, external_reference="own-1", idempotency_key="own-1",
            actor="test")  # fmt: skip
    now = timezone.now()
    withdrawal = request_withdrawal(player_id=operator.pk, amount=3_000, currency=EUR, request_key="w", now=now)
    top_up = request_deposit(player_id=operator.pk, amount=2_000, currency=EUR, request_key="d", now=now)
    return operator, client, [withdrawal, top_up]


@pytest.mark.parametrize("approve", [True, False], ids=["approve", "reject"])
def test_the_service_refuses_an_operators_own_transactions(own_requests, approve: bool) -> None:
    operator, _, transactions = own_requests
    for txn in transactions:
        before = everything()
        with pytest.raises(DomainError) as refused:
            operator_decide(transaction_id=txn.pk, approve=approve, operator=operator, reason="fine by me",
                            now=timezone.now())  # fmt: skip
        assert refused.value.code == "cashier_own_transaction"
        assert refused.value.http_status == 403
        assert everything() == before


def test_the_admin_actions_refuse_an_operators_own_transactions(own_requests) -> None:
    _, client, transactions = own_requests
    selected = [str(txn.pk) for txn in transactions]
    before = everything()
    approved = client.post(ADMIN, {"action": "approve", "_selected_action": selected}, follow=True)
    rejected = client.post(ADMIN, {"action": "reject", "_selected_action": selected, "apply": "1",
                                   "reason": "changed my mind"}, follow=True)  # fmt: skip
    for response in (approved, rejected):
        shown = [str(m) for m in get_messages(response.wsgi_request)]
        assert sum(": cashier_own_transaction: " in m for m in shown) == 2, shown
        assert any(m.endswith(" 0 transaction(s)") for m in shown), shown
    assert everything() == before
    assert {txn.state for txn in CashierTransaction.objects.all()} == {"requested"}


def test_another_operator_decides_them(own_requests) -> None:
    _, _, (withdrawal, top_up) = own_requests
    colleague, client = staff("colleague", OPERATOR)
    client.post(ADMIN, {"action": "approve", "_selected_action": [str(withdrawal.pk)]})
    client.post(ADMIN, {"action": "reject", "_selected_action": [str(top_up.pk)], "apply": "1", "reason": "KYC"})
    withdrawal.refresh_from_db()
    top_up.refresh_from_db()
    assert (withdrawal.state, withdrawal.decided_by) == ("approved", f"user:{colleague.pk}")
    assert (top_up.state, top_up.decided_by) == ("rejected", f"user:{colleague.pk}")


def test_a_superuser_is_held_to_four_eyes_too() -> None:
    boss, client = staff("boss", superuser=True)
    txn = request_deposit(player_id=boss.pk, amount=1_000, currency=EUR, request_key="d", now=timezone.now())
    before = everything()
    response = client.post(ADMIN, {"action": "approve", "_selected_action": [str(txn.pk)]}, follow=True)
    assert any(": cashier_own_transaction: " in str(m) for m in get_messages(response.wsgi_request))
    assert everything() == before
