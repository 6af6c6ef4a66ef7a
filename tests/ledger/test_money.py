"""Double-entry transfers, two-phase holds, cashier, idempotency, refusals."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.db import connection, transaction

from ledger.errors import (
    CurrencyMismatch,
    HoldAlreadyResolved,
    IdempotencyKeyReused,
    InsufficientFunds,
    InvalidAmount,
    InvalidTransferKind,
    PostExceedsHold,
    SameAccount,
    StaleStreamVersion,
    UnknownAccount,
    UnknownCurrency,
    UnknownHold,
)
from ledger.event_types import DEPOSITED, WITHDRAWN
from ledger.models import AccountKind
from ledger.services import (
    NewEvent,
    append_events,
    deposit,
    ensure_account,
    open_hold,
    player_accounts,
    post_hold,
    read_stream,
    transfer,
    void_hold,
    withdraw,
)
from ledger.services.projections import rebuild_projections
from tests.db import ledger_sums

from .conftest import CURRENCY, World, balances, bet_event, key, snapshot

pytestmark = pytest.mark.django_db


def hold(world: World, amount: int, **overrides):
    args: dict[str, Any] = {
        "source": world.alice.wallet,
        "escrow": world.alice.held,
        "destination": world.house,
        "amount": amount,
        "currency": CURRENCY,
        "idempotency_key": key("hold"),
        "cause": bet_event(f"bet-{key()}", amount),
    }
    return open_hold(**(args | overrides))


def pay(world: World, amount: int, **overrides):
    """A transfer from Bob's wallet to Alice's (``overrides``: any other argument)."""
    args: dict[str, Any] = {
        "debit_account": world.bob.wallet,
        "credit_account": world.alice.wallet,
        "amount": amount,
        "currency": CURRENCY,
        "idempotency_key": key(),
        "cause": bet_event(key(), 1),
    }
    return transfer(**(args | overrides))


def test_deposit_credits_the_wallet_from_the_cashier_with_its_own_event(world: World):
    assert balances(world.alice.wallet, world.cashier) == [10_000, -15_000]
    result = deposit(
        wallet=world.alice.wallet,
        amount=2_500,
        currency=CURRENCY,
        external_reference="psp-77",
        idempotency_key="dep-77",
        actor="operator:1",
    )
    assert result.balance == 12_500
    events = read_stream(stream_id=f"account-{world.alice.wallet}")
    assert [e.type for e in events] == [DEPOSITED, DEPOSITED]
    assert events[-1].data == {
        "account_id": world.alice.wallet,
        "amount": 2_500,
        "currency": CURRENCY,
        "external_reference": "psp-77",
        "actor": "operator:1",
        "legs": [["deposit", world.cashier, world.alice.wallet, 2_500, CURRENCY]],
    }
    assert events[-1].position == result.event_id
    assert ledger_sums() == {CURRENCY: 0}


def test_withdrawal_debits_the_wallet_and_cannot_overdraw(world: World):
    result = withdraw(
        wallet=world.bob.wallet,
        amount=1_000,
        currency=CURRENCY,
        external_reference="bank-1",
        idempotency_key="wd-1",
        actor="player:bob",
    )
    assert result.balance == 4_000
    assert read_stream(stream_id=f"account-{world.bob.wallet}")[-1].type == WITHDRAWN
    before = snapshot()
    with pytest.raises(InsufficientFunds) as caught, transaction.atomic():
        withdraw(
            wallet=world.bob.wallet,
            amount=4_001,
            currency=CURRENCY,
            external_reference="bank-2",
            idempotency_key="wd-2",
            actor="player:bob",
        )
    assert caught.value.code == "insufficient_funds"
    assert snapshot() == before


def test_transfer_moves_money_and_names_its_event(world: World):
    result = transfer(
        debit_account=world.alice.wallet,
        credit_account=world.bob.wallet,
        amount=300,
        currency=CURRENCY,
        idempotency_key="t-1",
        cause=bet_event("gift", 300),
    )
    assert (result.debit_balance, result.credit_balance) == (9_700, 5_300)
    assert balances(world.alice.wallet, world.bob.wallet) == [9_700, 5_300]
    assert read_stream(stream_id="gift")[0].position == result.event_id
    with connection.cursor() as cursor:
        cursor.execute("SELECT event_id, amount FROM ledger_transfer WHERE id = %s", [result.transfer_id])
        assert cursor.fetchone() == (result.event_id, 300)
        cursor.execute(
            "SELECT account_id, amount, balance_after FROM ledger_statement_line "
            "WHERE transfer_id = %s ORDER BY amount",
            [result.transfer_id],
        )
        assert cursor.fetchall() == [(world.alice.wallet, -300, 9_700), (world.bob.wallet, 300, 5_300)]
    assert ledger_sums() == {CURRENCY: 0}


def test_hold_then_full_post_moves_the_stake_to_the_house(world: World):
    opened = hold(world, 1_000)
    assert opened.status == "pending"
    assert balances(world.alice.wallet, world.alice.held, world.house) == [9_000, 1_000, 0]
    posted = post_hold(
        hold_id=uuid.UUID(opened.hold_id), amount=1_000, idempotency_key="p-1", cause=bet_event("settle-1", 0)
    )
    assert (posted.status, posted.posted_amount) == ("posted", 1_000)
    assert balances(world.alice.wallet, world.alice.held, world.house) == [9_000, 0, 1_000]
    assert ledger_sums() == {CURRENCY: 0}


def test_partial_post_releases_the_rest_to_the_source(world: World):
    opened = hold(world, 1_000)
    post_hold(hold_id=uuid.UUID(opened.hold_id), amount=600, idempotency_key="p-2", cause=bet_event("s2", 0))
    assert balances(world.alice.wallet, world.alice.held, world.house) == [9_400, 0, 600]
    with connection.cursor() as cursor:
        cursor.execute("SELECT kind, amount FROM ledger_transfer WHERE hold_id IS NOT NULL ORDER BY id")
        assert cursor.fetchall() == [("hold", 1_000), ("post", 600), ("release", 400)]


def test_void_returns_everything(world: World):
    opened = hold(world, 1_000)
    void_hold(hold_id=uuid.UUID(opened.hold_id), idempotency_key="v-1", cause=bet_event("void-1", 0))
    assert balances(world.alice.wallet, world.alice.held, world.house) == [10_000, 0, 0]


@pytest.mark.parametrize("second", ["post", "void"])
@pytest.mark.parametrize("first", ["post", "void"])
def test_a_hold_resolves_at_most_once(world: World, first: str, second: str):
    opened = hold(world, 1_000)
    hold_id = uuid.UUID(opened.hold_id)

    def resolve(how: str):
        if how == "post":
            return post_hold(hold_id=hold_id, amount=1_000, idempotency_key=key(), cause=bet_event(key(), 0))
        return void_hold(hold_id=hold_id, idempotency_key=key(), cause=bet_event(key(), 0))

    resolve(first)
    before = snapshot()
    with pytest.raises(HoldAlreadyResolved) as caught, transaction.atomic():
        resolve(second)
    assert caught.value.code == "hold_already_resolved"
    assert snapshot() == before


def test_post_beyond_the_hold_and_unknown_holds_are_refused(world: World):
    opened = hold(world, 1_000)
    before = snapshot()
    with pytest.raises(PostExceedsHold) as caught, transaction.atomic():
        post_hold(hold_id=uuid.UUID(opened.hold_id), amount=1_001, idempotency_key=key(), cause=bet_event(key(), 0))
    assert caught.value.code == "post_exceeds_hold"
    with pytest.raises(UnknownHold) as unknown, transaction.atomic():
        void_hold(hold_id=uuid.uuid4(), idempotency_key=key(), cause=bet_event(key(), 0))
    assert unknown.value.code == "unknown_hold"
    assert snapshot() == before


@pytest.mark.parametrize(
    ("make_call", "error", "code"),
    [
        (lambda w: hold(w, 10_001), InsufficientFunds, "insufficient_funds"),
        (lambda w: hold(w, 0), InvalidAmount, "invalid_amount"),
        (lambda w: hold(w, -5), InvalidAmount, "invalid_amount"),
        (lambda w: hold(w, 10, source=987654), UnknownAccount, "unknown_account"),
        (lambda w: hold(w, 10, destination=987654), UnknownAccount, "unknown_account"),
        (lambda w: hold(w, 10, escrow=w.alice.wallet), SameAccount, "same_account"),
        (lambda w: hold(w, 10, currency="USD"), CurrencyMismatch, "currency_mismatch"),
        (lambda w: hold(w, 10, currency="XXX"), UnknownCurrency, "unknown_currency"),
        (
            lambda w: hold(w, 10, destination=ensure_account(kind=AccountKind.HOUSE, owner="t9", currency="USD")),
            CurrencyMismatch,
            "currency_mismatch",
        ),
        (lambda w: pay(w, 5_001), InsufficientFunds, "insufficient_funds"),
        (lambda w: pay(w, 1, credit_account=424242), UnknownAccount, "unknown_account"),
        (lambda w: pay(w, 1.5), InvalidAmount, "invalid_amount"),  # type: ignore[arg-type]
        (lambda w: pay(w, 1, kind="a-kind-longer-than-sixteen"), InvalidTransferKind, "invalid_transfer_kind"),
        (
            lambda w: deposit(
                wallet=w.alice.wallet,
                amount=100,
                currency="USD",
                external_reference="r",
                idempotency_key=key(),
                actor="op",
            ),
            CurrencyMismatch,
            "currency_mismatch",
        ),
    ],
)
def test_bad_input_gets_a_specific_error_and_changes_nothing(world: World, make_call, error, code):
    # Accounts the cases need exist before the snapshot; the refusal changes nothing else.
    ensure_account(kind=AccountKind.HOUSE, owner="t9", currency="USD")
    ensure_account(kind=AccountKind.CASHIER, owner="external", currency="USD")
    before = snapshot()
    with pytest.raises(error) as caught, transaction.atomic():
        make_call(world)
    assert caught.value.code == code
    assert snapshot() == before


def test_same_key_same_request_returns_the_first_result(world: World):
    cause = bet_event("idem-stream", 250)
    first = hold(world, 250, idempotency_key="bet-1", cause=cause, hold_id=uuid.UUID(int=1))
    before = snapshot()
    again = hold(world, 250, idempotency_key="bet-1", cause=cause, hold_id=uuid.UUID(int=1))
    assert again == first
    assert snapshot() == before
    assert balances(world.alice.wallet) == [9_750]


def test_same_key_other_request_is_refused(world: World):
    hold(world, 250, idempotency_key="bet-2", cause=bet_event("s-bet-2", 250), hold_id=uuid.UUID(int=2))
    before = snapshot()
    with pytest.raises(IdempotencyKeyReused) as caught, transaction.atomic():
        hold(world, 260, idempotency_key="bet-2", cause=bet_event("s-bet-2", 260), hold_id=uuid.UUID(int=2))
    assert caught.value.code == "idempotency_key_reused"
    with pytest.raises(IdempotencyKeyReused), transaction.atomic():
        transfer(
            debit_account=world.alice.wallet,
            credit_account=world.bob.wallet,
            amount=1,
            currency=CURRENCY,
            idempotency_key="bet-2",
            cause=bet_event("x", 1),
        )
    assert snapshot() == before


def test_the_wallet_check_is_in_the_database_not_only_in_python(world: World):
    """Even a raw UPDATE that skips the services cannot drive a wallet negative."""
    from django.db import IntegrityError

    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE ledger_account SET balance = -1 WHERE id = %s", [world.alice.wallet])
    with transaction.atomic(), connection.cursor() as cursor:  # the house may go negative
        cursor.execute("UPDATE ledger_account SET balance = balance - 1 WHERE id = %s", [world.house])
        cursor.execute("UPDATE ledger_account SET balance = balance + 1 WHERE id = %s", [world.house])


def test_rebuilt_projections_equal_the_live_ones(world: World):
    carol = player_accounts(player_id="carol", currency=CURRENCY)
    for n in range(6):
        opened = hold(world, 100 + n)
        hold_id = uuid.UUID(opened.hold_id)
        if n % 3 == 0:
            void_hold(hold_id=hold_id, idempotency_key=key(), cause=bet_event(key(), 0))
        elif n % 3 == 1:
            post_hold(hold_id=hold_id, amount=50, idempotency_key=key(), cause=bet_event(key(), 0))
    transfer(
        debit_account=world.house,
        credit_account=carol.wallet,
        amount=777,
        currency=CURRENCY,
        idempotency_key=key(),
        cause=bet_event(key(), 0),
    )

    def projections():
        with connection.cursor() as cursor:
            cursor.execute("SELECT id, balance FROM ledger_account ORDER BY id")
            accounts = cursor.fetchall()
            cursor.execute(
                "SELECT account_id, transfer_id, event_id, amount, balance_after FROM ledger_statement_line "
                "ORDER BY transfer_id, amount"
            )
            return accounts, cursor.fetchall()

    live = projections()
    with connection.cursor() as cursor:  # wreck the projections first, so the rebuild has work to do
        cursor.execute("DELETE FROM ledger_statement_line")
        cursor.execute("UPDATE ledger_account SET balance = 0 WHERE kind = 'house'")
    assert projections() != live
    written = rebuild_projections()
    assert projections() == live
    assert written == len(live[1])


def test_a_cause_is_a_new_event_never_the_position_of_one_already_appended(world: World):
    """The legs go into the causing event's data, which a written event can no
    longer take (its hash is fixed): a position is refused, nothing written."""
    [placed] = append_events(stream_id="r8-alice", expected_version=0, events=[NewEvent("test.bet_placed", {"n": 1})])
    before = snapshot()
    for command in (
        lambda: hold(world, 100, cause=placed.position),
        lambda: transfer(
            debit_account=world.bob.wallet,
            credit_account=world.alice.wallet,
            amount=1,
            currency=CURRENCY,
            idempotency_key=key(),
            cause=placed.position,  # type: ignore[arg-type]
        ),
        lambda: void_hold(hold_id=uuid.uuid4(), idempotency_key=key(), cause=placed.position),  # type: ignore[arg-type]
    ):
        with pytest.raises(TypeError), transaction.atomic():
            command()
    assert snapshot() == before


def test_a_hold_can_extend_a_stream(world: World):
    [placed] = append_events(stream_id="r9-alice", expected_version=0, events=[NewEvent("test.bet_placed", {"n": 1})])
    first = hold(world, 100, cause=bet_event("r9-alice", 100, expected_version=1))
    assert first.event_id == placed.position + 1
    second = hold(world, 200, cause=bet_event("r9-alice", 200, expected_version=2))
    events = read_stream(stream_id="r9-alice")
    assert [e.version for e in events] == [1, 2, 3]
    assert events[2].prev_hash == events[1].hash
    assert second.event_id == events[2].position
    before = snapshot()
    with pytest.raises(StaleStreamVersion), transaction.atomic():
        hold(world, 300, cause=bet_event("r9-alice", 300, expected_version=2))
    assert snapshot() == before
    assert balances(world.alice.wallet, world.alice.held) == [9_700, 300]
