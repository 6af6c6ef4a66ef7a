"""The cashier transactions are a projection of the ``cashier.*`` events (issue
#24): rebuilt from the log they equal the live rows, a changed or lost row is
named by ``rebuild_projections --check`` and ``verify_ledger``, and a rebuild
repairs it."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.db import connection, transaction

from casino import cashier
from casino.models import CashierTransaction
from casino.projectors import CashierTransactionProjector, cashier_stream
from ledger.errors import StaleStreamVersion
from ledger.services.events import read_stream
from ledger.services.projectors import check_projections, rebuild
from ledger.services.verify import verify_ledger

pytestmark = pytest.mark.django_db
EUR = "EUR"
T0 = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)
TABLE = CashierTransaction._meta.db_table


@pytest.fixture
def people():
    from compliance.roles import OPERATOR, setup_roles

    setup_roles()
    player = get_user_model().objects.create_user("pat", password="pw-pat-123")
    operator = get_user_model().objects.create_user("op", password="pw-op-123", is_staff=True)
    operator.groups.add(Group.objects.get(name=OPERATOR))
    return player, operator


def paid_deposit(player, amount: int = 5000, key: str = "d1") -> CashierTransaction:
    txn = cashier.request_deposit(player_id=player.pk, amount=amount, currency=EUR, request_key=key, now=T0)
    return cashier.provider_callback(
        external_reference=txn.external_reference, status="paid", amount=amount, currency=EUR, provider="psp",
        now=T0 + timedelta(minutes=1),
    )  # fmt: skip


def test_every_flow_is_written_from_its_events_and_rebuilds_to_the_same_rows(people) -> None:
    player, operator = people
    paid = paid_deposit(player)
    paid_out = cashier.request_withdrawal(player_id=player.pk, amount=1000, currency=EUR, request_key="w1", now=T0)
    cashier.operator_decide(transaction_id=paid_out.pk, approve=True, operator=operator, reason="", now=T0)
    cashier.provider_callback(
        external_reference=paid_out.external_reference, status="paid", amount=1000, currency=EUR, provider="psp",
        now=T0 + timedelta(minutes=5),
    )  # fmt: skip
    refused = cashier.request_withdrawal(player_id=player.pk, amount=700, currency=EUR, request_key="w2", now=T0)
    cashier.operator_decide(transaction_id=refused.pk, approve=False, operator=operator, reason="KYC", now=T0)

    rows = {txn.kind + ":" + txn.state: txn for txn in CashierTransaction.objects.all()}
    assert set(rows) == {"deposit:paid", "withdrawal:paid", "withdrawal:rejected"}
    # The live rows hold what the events say.
    assert (rows["deposit:paid"].created_at, rows["deposit:paid"].updated_at) == (T0, T0 + timedelta(minutes=1))
    assert rows["deposit:paid"].hold_id is None
    assert rows["withdrawal:paid"].hold_id == paid_out.pk  # the hold opened under the transaction's id
    # The approval decided it; the provider's ``paid`` is not a decision.
    assert rows["withdrawal:paid"].decided_by == f"user:{operator.pk}"
    rejected = rows["withdrawal:rejected"]
    assert (rejected.decided_by, rejected.reason) == (f"user:{operator.pk}", "KYC")
    assert rows["withdrawal:paid"].stream_version == 3
    assert paid.stream_version == 2
    assert check_projections(["cashier_transaction"]) == []
    assert rebuild(check=True, only=["cashier_transaction"]).rows["cashier_transaction"] == 3


def test_applying_the_events_again_changes_nothing(people) -> None:
    player, _ = people
    paid = paid_deposit(player)
    before = CashierTransaction.objects.values().get(pk=paid.pk)
    events = read_stream(stream_id=cashier_stream(paid.pk))
    assert [e.type for e in events] == ["cashier.requested", "cashier.paid"]
    CashierTransactionProjector().apply_many(events)
    CashierTransactionProjector().apply_many(events[:1])
    assert CashierTransaction.objects.values().get(pk=paid.pk) == before


def test_a_changed_row_is_named_and_a_rebuild_repairs_it(people, capsys: pytest.CaptureFixture[str]) -> None:
    player, _ = people
    paid = paid_deposit(player)
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {TABLE} SET amount = 9999999, state = 'requested'")
    named = {str(d) for d in check_projections()}
    where = f"{TABLE} [cashier_transaction] row id={uuid.UUID(str(paid.pk))!r}"
    assert named == {f"{where}: amount live 9999999, rebuilt 5000", f"{where}: state live 'requested', rebuilt 'paid'"}
    with pytest.raises(CommandError, match="projections differ"):
        call_command("rebuild_projections", "--check", "--only", "cashier_transaction")
    assert CashierTransaction.objects.get().amount == 9999999  # --check writes nothing
    problems = verify_ledger(key=settings.CASINO_SEAL_KEY.encode())
    assert [p.check for p in problems] == ["projection", "projection"]
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode(), projections=False) == []
    call_command("rebuild_projections", "--only", "cashier_transaction")
    assert "2 differences repaired" in capsys.readouterr().out
    assert (CashierTransaction.objects.get().amount, CashierTransaction.objects.get().state) == (5000, "paid")
    assert check_projections() == []


def test_a_lost_row_is_restored_and_play_goes_on(people) -> None:
    player, operator = people
    paid = paid_deposit(player)
    pending = cashier.request_withdrawal(player_id=player.pk, amount=300, currency=EUR, request_key="w", now=T0)
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {TABLE} WHERE id = %s", [pending.pk])
    assert CashierTransaction.objects.filter(pk=paid.pk).exists()
    assert [str(d) for d in check_projections()] == [
        f"{TABLE} [cashier_transaction] row id={uuid.UUID(str(pending.pk))!r}: missing (the log has it)"
    ]
    rebuild(check=False)
    restored = CashierTransaction.objects.get(pk=pending.pk)
    assert (restored.state, restored.amount, restored.hold_id) == ("requested", 300, pending.pk)
    assert restored.created_at == T0
    # The restored row carries on: its next event follows the stream's version.
    cashier.operator_decide(transaction_id=pending.pk, approve=False, operator=operator, reason="fraud", now=T0)
    assert [e.type for e in read_stream(stream_id=cashier_stream(pending.pk))][-1] == "cashier.rejected"
    assert check_projections() == []


def test_a_stale_row_cannot_write_over_a_newer_event(people) -> None:
    """Two operators deciding at once: the second, holding an older version,
    is refused by the stream's version and changes nothing."""
    player, operator = people
    paid_deposit(player)
    pending = cashier.request_withdrawal(player_id=player.pk, amount=300, currency=EUR, request_key="w", now=T0)
    stale = CashierTransaction.objects.get(pk=pending.pk)
    cashier.operator_decide(transaction_id=pending.pk, approve=True, operator=operator, reason="", now=T0)
    with pytest.raises(StaleStreamVersion), transaction.atomic():
        cashier._transition(stale, cashier.Decision("rejected", "user:x", "late"), T0)
    assert CashierTransaction.objects.get(pk=pending.pk).state == "approved"
