"""Cashier: deposits and withdrawals through a payment provider, on the
ledger's cashier account (docs/cashier-and-responsible-gaming.md).

States: requested -> approved -> paid; requested/approved -> rejected; a
deposit the provider paid that cannot be credited (the player self-excluded
or cooled off since asking) -> refund_due -> refunded.
Every state change is an event in the stream ``cashier-<transaction id>``
(``cashier.requested|approved|paid|rejected|refund_due|refunded``) with its actor. A withdrawal
holds the player's funds from its request (ledger hold: wallet -> held,
destination the cashier account) until it is paid (the hold is posted) or
rejected (voided). A deposit is checked against the deposit limits once, when
it is requested, under the player's lock (``lock_settings``: concurrent
requests of one player are counted one after the other), and keeps the room it
took: a deposit that fitted is credited when paid. When paid it is checked
again only for an exclusion (``assert_not_excluded``); refused then, the money
goes to the player's suspense account (cashier -> suspense) until an operator
refunds it through the provider (suspense -> cashier). Provider callbacks are
idempotent by external reference.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction

from casino.audit import record_operator_action
from casino.errors import Conflict, DomainError, Forbidden, NotFound
from casino.models import CashierKind, CashierState, CashierTransaction
from casino.projectors import CashierTransactionProjector, cashier_stream
from casino.responsible_gaming import (
    ResponsibleGamingRefusal,
    assert_may_deposit,
    assert_not_excluded,
    lock_settings,
)
from ledger.currencies import check_currency
from ledger.services import (
    NewEvent,
    StreamAppend,
    append_events,
    cashier_account,
    deposit,
    open_hold,
    player_accounts,
    post_hold,
    suspense_account,
    transfer,
    void_hold,
)
from ledger.services.projectors import events_of
from ledger.upcasting import register_event_type

EVENT_TYPES = {state: f"cashier.{state}" for state in CashierState.values}
for _type in EVENT_TYPES.values():
    register_event_type(_type, 1)

# Which state may follow which; a repeat of the current state is a no-op.
TRANSITIONS: dict[str, set[str]] = {
    CashierState.REQUESTED: {CashierState.APPROVED, CashierState.PAID, CashierState.REJECTED, CashierState.REFUND_DUE},
    CashierState.APPROVED: {CashierState.PAID, CashierState.REJECTED, CashierState.REFUND_DUE},
    CashierState.PAID: set(),
    CashierState.REJECTED: set(),
    CashierState.REFUND_DUE: {CashierState.REFUNDED},
    CashierState.REFUNDED: set(),
}
# The provider's ``paid`` for a deposit that went to suspense: already answered.
_PAID_OUTCOMES = frozenset({CashierState.PAID, CashierState.REFUND_DUE, CashierState.REFUNDED})
_NAMESPACE = uuid.UUID("7f0c5a8e-6b1d-4c53-9a52-0d7d3a3c4a11")


class CashierStateConflict(Conflict, code="cashier_state_conflict"):
    """The transaction is not in a state that allows this."""


class CallbackMismatch(DomainError, code="callback_mismatch", http_status=400):
    """The callback's amount or currency differs from the transaction's."""


class InvalidCashierRequest(DomainError, code="invalid_cashier_request", http_status=400):
    """The cashier request is invalid."""


class OwnCashierTransaction(Forbidden, code="cashier_own_transaction"):
    """Four eyes: an operator cannot approve or reject a cashier transaction of their own player account."""


@dataclass(frozen=True)
class Decision:
    state: str
    actor: str
    reason: str = ""


def _event(txn: CashierTransaction, state: str, actor: str, reason: str, now: datetime) -> StreamAppend:
    """``txn`` moving to ``state``: the next event of its stream (``now``: its ``at``)."""
    data = {
        "transaction_id": str(txn.id), "kind": txn.kind, "player_id": txn.player_id, "amount": txn.amount,
        "currency": txn.currency, "external_reference": txn.external_reference, "state": state, "actor": actor,
        "reason": reason, "at": now.isoformat(),
    }  # fmt: skip
    return StreamAppend(
        cashier_stream(txn.id),
        txn.stream_version,
        [NewEvent(EVENT_TYPES[state], data)],
        {"actor": actor, "correlation_id": cashier_stream(txn.id), "player_id": txn.player_id},
    )


def _project(txn: CashierTransaction, append: StreamAppend, now: datetime) -> None:
    """Write ``txn``'s row from ``append`` (appended just now, in this transaction)."""
    assert append.expected_version is not None
    first = append.expected_version + 1
    events = events_of(
        stream_id=append.stream_id, first_version=first, events=append.events, metadata=append.metadata, at=now
    )
    CashierTransactionProjector(row=txn).apply_many(events)


def _request(
    *, player_id: int, kind: str, amount: int, currency: str, request_key: str, now: datetime
) -> tuple[CashierTransaction, bool]:
    if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
        raise InvalidCashierRequest("the amount is a positive integer in minor units", amount=amount)
    check_currency(currency)
    if not request_key or len(request_key) > 100:
        raise InvalidCashierRequest("a request key of 1 to 100 characters is required")
    txn_id = uuid.uuid5(_NAMESPACE, f"{player_id}:{kind}:{request_key}")
    existing = CashierTransaction.objects.filter(pk=txn_id).first()
    if existing is not None:
        if (existing.amount, existing.currency) != (amount, currency):
            raise InvalidCashierRequest("the request key was used for another request", request_key=request_key)
        return existing, False
    prefix = "dep" if kind == CashierKind.DEPOSIT else "wdr"
    txn = CashierTransaction(  # unsaved: its projector writes it from the request's event
        id=txn_id, player_id=player_id, kind=kind, amount=amount, currency=currency,
        external_reference=f"{prefix}-{txn_id.hex}", stream_version=0,
    )  # fmt: skip
    return txn, True


@transaction.atomic
def request_deposit(
    *, player_id: int, amount: int, currency: str, request_key: str, now: datetime
) -> CashierTransaction:
    """A player asks to deposit; refused by self-exclusion, cool-off or a deposit
    limit (``deposit_limit_exceeded``: nothing is stored). The same
    ``request_key`` returns the same transaction, not checked again. The
    player's settings row is locked first (``lock_settings``), so concurrent
    requests are checked one after the other, each counting those before it."""
    settings = lock_settings(player_id=player_id)
    txn, created = _request(
        player_id=player_id, kind=CashierKind.DEPOSIT, amount=amount, currency=currency,
        request_key=request_key, now=now,
    )  # fmt: skip
    if created:
        assert_may_deposit(player_id=player_id, amount=amount, currency=currency, now=now, settings=settings)
        append = _event(txn, CashierState.REQUESTED, f"user:{player_id}", "", now)
        append_events(**_append_kwargs(append))
        _project(txn, append, now)
    return txn


def _append_kwargs(append: StreamAppend) -> dict[str, Any]:
    return {
        "stream_id": append.stream_id,
        "expected_version": append.expected_version,
        "events": append.events,
        "metadata": append.metadata,
    }


@transaction.atomic
def request_withdrawal(
    *, player_id: int, amount: int, currency: str, request_key: str, now: datetime
) -> CashierTransaction:
    """A player asks to withdraw: the amount is held at once (``insufficient_funds``
    if the wallet lacks it) until the withdrawal is paid or rejected."""
    txn, created = _request(
        player_id=player_id, kind=CashierKind.WITHDRAWAL, amount=amount, currency=currency,
        request_key=request_key, now=now,
    )  # fmt: skip
    if created:
        accounts = player_accounts(player_id=player_id, currency=currency)
        append = _event(txn, CashierState.REQUESTED, f"user:{player_id}", "", now)
        open_hold(  # under the transaction's id: the projector's hold_id
            source=accounts.wallet, escrow=accounts.held, destination=cashier_account(currency=currency),
            amount=amount, currency=currency, idempotency_key=f"cashier:{txn.id}:hold", hold_id=txn.id,
            cause=append,
        )  # fmt: skip
        _project(txn, append, now)
    return txn


def _transition(txn: CashierTransaction, decision: Decision, now: datetime) -> CashierTransaction:
    """Move ``txn`` (locked) to ``decision.state`` with its money and event."""
    if txn.state == decision.state:
        return txn  # a retried callback or a double click: nothing more to do
    if decision.state not in TRANSITIONS[txn.state]:
        raise CashierStateConflict(
            f"a {txn.state} {txn.kind} cannot become {decision.state}", state=txn.state, wanted=decision.state
        )
    if decision.state == CashierState.PAID and txn.kind == CashierKind.WITHDRAWAL and txn.state != "approved":
        raise CashierStateConflict("a withdrawal is paid only after an operator approved it", state=txn.state)
    if decision.state in (CashierState.REFUND_DUE, CashierState.REFUNDED) and txn.kind != CashierKind.DEPOSIT:
        raise CashierStateConflict("only a deposit can be refunded", state=txn.state, wanted=decision.state)
    state = decision.state
    append = _event(txn, state, decision.actor, decision.reason, now)
    key = f"cashier:{txn.id}:{state}"
    if state in (CashierState.REFUND_DUE, CashierState.REFUNDED):
        # Received but not the player's: the provider's money waits in the
        # player's suspense account, then goes back the way it came.
        player_accounts(player_id=txn.player_id, currency=txn.currency)  # the daily report's row is the wallet's
        suspense = suspense_account(player_id=txn.player_id, currency=txn.currency)
        cashier = cashier_account(currency=txn.currency)
        debit, credit = (cashier, suspense) if state == CashierState.REFUND_DUE else (suspense, cashier)
        transfer(
            debit_account=debit, credit_account=credit, amount=txn.amount, currency=txn.currency,
            idempotency_key=key, cause=append, kind="refund_due" if state == CashierState.REFUND_DUE else "refund",
        )  # fmt: skip
    elif txn.kind == CashierKind.WITHDRAWAL and txn.hold_id is not None and state == CashierState.PAID:
        post_hold(hold_id=txn.hold_id, amount=txn.amount, idempotency_key=key, cause=append)
    elif txn.kind == CashierKind.WITHDRAWAL and txn.hold_id is not None and state == CashierState.REJECTED:
        void_hold(hold_id=txn.hold_id, idempotency_key=key, cause=append)
    else:
        append_events(**_append_kwargs(append))
        if txn.kind == CashierKind.DEPOSIT and state == CashierState.PAID:
            accounts = player_accounts(player_id=txn.player_id, currency=txn.currency)
            deposit(
                wallet=accounts.wallet, amount=txn.amount, currency=txn.currency,
                external_reference=txn.external_reference, idempotency_key=key, actor=decision.actor,
            )  # fmt: skip
    _project(txn, append, now)
    return txn


def _locked(**lookup: Any) -> CashierTransaction:
    txn = CashierTransaction.objects.select_for_update().filter(**lookup).first()
    if txn is None:
        raise NotFound("no such cashier transaction", **{k: str(v) for k, v in lookup.items()})
    return txn


@transaction.atomic
def provider_callback(
    *, external_reference: str, status: str, amount: int, currency: str, provider: str, now: datetime
) -> CashierTransaction:
    """The payment provider's word on a transaction (``approved``, ``paid`` or
    ``rejected``). Idempotent: a retried callback changes nothing more."""
    if status not in (CashierState.APPROVED, CashierState.PAID, CashierState.REJECTED):
        raise InvalidCashierRequest(f"unknown status {status!r}", status=status)
    txn = _locked(external_reference=external_reference)
    if (txn.amount, txn.currency) != (amount, currency):
        raise CallbackMismatch(
            "the callback's amount or currency differs from the transaction's",
            expected={"amount": txn.amount, "currency": txn.currency}, got={"amount": amount, "currency": currency},
        )  # fmt: skip
    if status == CashierState.APPROVED and txn.kind == CashierKind.WITHDRAWAL:
        raise CashierStateConflict("withdrawals are approved by an operator, not by the provider")
    actor = f"psp:{provider}"
    if status == CashierState.PAID and txn.kind == CashierKind.DEPOSIT:
        if txn.state in _PAID_OUTCOMES:
            return txn  # a retried ``paid``: answered already (credited, or in suspense)
        refusal = deposit_refusal(txn=txn, now=now)
        if refusal is not None and CashierState.REFUND_DUE in TRANSITIONS[txn.state]:
            return _transition(txn, Decision(CashierState.REFUND_DUE, actor, refusal.code), now)
    return _transition(txn, Decision(status, actor), now)


def deposit_refusal(*, txn: CashierTransaction, now: datetime) -> ResponsibleGamingRefusal | None:
    """Why the player may not be credited with this deposit now (a self-exclusion
    or cool-off in force), or ``None``. The deposit limits are not checked again:
    the request took its room under them when it was accepted (``request_deposit``),
    so a deposit that fitted is never refunded for them. Reads only (in a
    savepoint, so a refusal leaves nothing behind)."""
    try:
        with transaction.atomic():
            assert_not_excluded(player_id=txn.player_id, now=now)
    except ResponsibleGamingRefusal as refusal:
        return refusal
    return None


def check_four_eyes(*, txn: CashierTransaction, operator: AbstractBaseUser | AnonymousUser) -> None:
    """Refuse (``cashier_own_transaction``) an operator deciding on their own
    player account's deposit or withdrawal: someone else must review it."""
    if operator.pk is not None and operator.pk == txn.player_id:
        raise OwnCashierTransaction(transaction_id=str(txn.pk))


@transaction.atomic
def operator_refund(
    *, transaction_id: uuid.UUID, operator: AbstractBaseUser | AnonymousUser, reason: str, now: datetime
) -> CashierTransaction:
    """An operator records that a ``refund_due`` deposit was refunded through the
    provider (``reason``: e.g. the provider's refund reference, required): its
    money leaves the player's suspense account for the cashier account and the
    transaction is ``refunded``; ``operator.action`` ``cashier.refund`` records
    who did it. A repeat on a refunded transaction changes nothing.
    Refusals (nothing changes): ``invalid_cashier_request`` (no reason),
    ``cashier_own_transaction`` (``check_four_eyes``), ``cashier_state_conflict``
    (not ``refund_due``), ``not_found``."""
    if not reason.strip() or len(reason) > 200:
        raise InvalidCashierRequest("a refund needs a reason of 1 to 200 characters (e.g. the provider's reference)")
    txn = _locked(pk=transaction_id)
    check_four_eyes(txn=txn, operator=operator)
    if txn.state == CashierState.REFUNDED:
        return txn
    if txn.state != CashierState.REFUND_DUE:
        raise CashierStateConflict(
            f"only a refund_due deposit can be refunded, not a {txn.state} {txn.kind}", state=txn.state
        )
    txn = _transition(txn, Decision(CashierState.REFUNDED, f"user:{operator.pk}", reason.strip()), now)
    record_operator_action(
        operator=operator, action="cashier.refund", target=f"cashier:{txn.id}", reason=reason.strip(),
        details={"kind": txn.kind, "amount": txn.amount, "currency": txn.currency},
    )  # fmt: skip
    return txn


@transaction.atomic
def operator_decide(
    *,
    transaction_id: uuid.UUID,
    approve: bool,
    operator: AbstractBaseUser | AnonymousUser,
    reason: str,
    now: datetime,
) -> CashierTransaction:
    """An operator approves or rejects a requested (or approved) transaction;
    the decision is recorded as an ``operator.action`` event with their identity.
    Refusals: ``invalid_cashier_request`` (a rejection without a reason),
    ``cashier_own_transaction`` (``check_four_eyes``), ``cashier_state_conflict``."""
    if not approve and not reason.strip():
        raise InvalidCashierRequest("a rejection needs a reason")
    txn = _locked(pk=transaction_id)
    check_four_eyes(txn=txn, operator=operator)
    state = CashierState.APPROVED if approve else CashierState.REJECTED
    before = txn.state
    txn = _transition(txn, Decision(state, f"user:{operator.pk}", reason), now)
    if before != txn.state:
        record_operator_action(
            operator=operator, action=f"cashier.{'approve' if approve else 'reject'}", target=f"cashier:{txn.id}",
            reason=reason, details={"kind": txn.kind, "amount": txn.amount, "currency": txn.currency},
        )  # fmt: skip
    return txn
