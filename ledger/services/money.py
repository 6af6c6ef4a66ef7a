"""Money commands: accounts, transfers, two-phase holds, cashier deposits and
withdrawals. Keyword-only, typed, run inside the caller's transaction.

Every command carries an idempotency key (same key + same request: the first
result; another request: ``IdempotencyKeyReused``) and its causing event as a
``StreamAppend`` the command appends first: the command writes its money legs
into the data of that append's last event (``ledger.legs``), so the event's
hash covers them, and its transfer rows name that event. A ``DomainError``
from a command marks the transaction for rollback, so nothing of it can commit.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any, TypeVar
from uuid import UUID

import psycopg
from django.db import DEFAULT_DB_ALIAS, IntegrityError, connection, connections, transaction

from casino.errors import DomainError
from ledger import event_types
from ledger.currencies import CHIPS, check_currency, check_unit
from ledger.errors import (
    CurrencyMismatch,
    HoldAlreadyResolved,
    InsufficientFunds,
    InvalidAmount,
    InvalidEvent,
    PostExceedsHold,
    SameAccount,
    StaleStreamVersion,
    UnknownAccount,
    UnknownCurrency,
    UnknownHold,
)
from ledger.legs import ReservedKey, hold_open_leg, resolution_leg, transfer_leg, with_legs
from ledger.models import CHIP_ACCOUNT_KINDS, MAY_GO_NEGATIVE, Account, AccountKind, StatementLine
from ledger.services.events import NewEvent, StreamAppend, now, prepare_append
from ledger.services.postings import (
    Leg,
    allow_explicit_prepare,
    apply_deltas,
    bulk_cursor,
    cause_event,
    check_amount,
    check_kind,
    claim,
    diagnose_refusal,
    insert_legs,
    net_deltas,
    record_result,
    request_hash,
    uuid_param,
)
from ledger.triggers import BET_REFUSED_SQLSTATE
from ledger.upcasting import CURRENT_VERSIONS

Cause = StreamAppend


def with_cause_legs(cause: Cause, legs: list[list[Any]]) -> StreamAppend:
    """``cause`` with ``legs`` written into its last event's data (the event the
    transfer rows name). A position of an event appended earlier cannot be
    given: its data, and so its hash, can no longer take the legs."""
    if not isinstance(cause, StreamAppend):
        raise TypeError("cause is a StreamAppend: the money legs are written into its last event")
    if not cause.events:
        raise InvalidEvent("nothing to append", stream_id=cause.stream_id)
    *rest, last = cause.events
    try:
        data = with_legs(last.data, legs)
    except ReservedKey as exc:
        raise InvalidEvent(f"{last.type}: {exc}", event_type=last.type) from exc
    return replace(cause, events=[*rest, NewEvent(last.type, data, last.schema_version)])


# --- accounts -------------------------------------------------------------------


def account_key(kind: str, owner: str, currency: str) -> str:
    return f"{kind}:{owner}:{currency}"


def ensure_account(*, kind: AccountKind | str, owner: str, currency: str) -> int:
    """The id of the (kind, owner, currency) account, opened at zero if new."""
    kind = AccountKind(kind)
    check_unit(currency)
    if currency == CHIPS and kind not in CHIP_ACCOUNT_KINDS:  # chips never reach a wallet or the house
        raise UnknownCurrency(f"{kind.value} accounts hold money, not tournament chips", currency=currency)
    key = account_key(kind.value, owner, currency)
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        # Nearly every call finds the account: one round trip then.
        cursor.execute("SELECT id FROM ledger_account WHERE key = %s", [key])
        found = cursor.fetchone()
        if found is not None:
            return int(found[0])
        cursor.execute(
            "INSERT INTO ledger_account (key, kind, owner, currency, may_go_negative, balance, created_at) "
            "VALUES (%s, %s, %s, %s, %s, 0, %s) ON CONFLICT (key) DO NOTHING",
            [
                key,
                kind.value,
                owner,
                currency,
                kind in MAY_GO_NEGATIVE,
                connection.ops.adapt_datetimefield_value(now()),
            ],
        )
        cursor.execute("SELECT id FROM ledger_account WHERE key = %s", [key])
        return int(cursor.fetchone()[0])


@dataclass(frozen=True)
class PlayerAccounts:
    wallet: int
    held: int


def player_accounts(*, player_id: int | str, currency: str) -> PlayerAccounts:
    """The player's wallet and stakes-in-play (escrow) accounts in ``currency``."""
    owner = f"player:{player_id}"
    return PlayerAccounts(
        wallet=ensure_account(kind=AccountKind.WALLET, owner=owner, currency=currency),
        held=ensure_account(kind=AccountKind.HELD, owner=owner, currency=currency),
    )


def player_balances(*, player_id: int | str, currency: str) -> tuple[int, int]:
    """The player's (wallet, stakes in play) balances in ``currency``, for read
    paths: an account never opened reads as 0 and nothing is created (a read
    never writes; ``player_accounts`` opens them)."""
    owner = f"player:{player_id}"
    keys = [account_key(kind.value, owner, currency) for kind in (AccountKind.WALLET, AccountKind.HELD)]
    with connection.cursor() as cursor:
        cursor.execute("SELECT key, balance FROM ledger_account WHERE key IN (%s, %s)", keys)
        found = {key: int(balance) for key, balance in cursor.fetchall()}
    return found.get(keys[0], 0), found.get(keys[1], 0)


def wallet_statement(
    *, player_id: int | str, currency: str, limit: int, offset: int
) -> tuple[int, list[dict[str, Any]]]:
    """The player's wallet statement in ``currency``, newest first: (every line's
    count, the page ``OFFSET offset LIMIT limit``), each line ``{id, at, kind,
    amount, balance_after, event_type, stream_id}`` (``amount`` signed: money in is
    positive; ``kind`` the transfer's: deposit, hold, release, payout...). A read
    creates nothing: a player who never had the wallet reads no line."""
    wallet = Account.objects.filter(key=account_key(AccountKind.WALLET.value, f"player:{player_id}", currency)).first()
    if wallet is None:
        return 0, []
    lines = StatementLine.objects.filter(account_id=wallet.pk)
    page = lines.select_related("transfer", "event").order_by("-id")[offset : offset + limit]
    return lines.count(), [
        {
            "id": line.pk,
            "at": line.created_at.isoformat(),
            "kind": line.transfer.kind,
            "amount": line.amount,
            "balance_after": line.balance_after,
            "event_type": line.event.type,
            "stream_id": line.event.stream_id,
        }
        for line in page
    ]


def house_account(*, table_id: int | str, currency: str) -> int:
    return ensure_account(kind=AccountKind.HOUSE, owner=f"table:{table_id}", currency=currency)


def cashier_account(*, currency: str) -> int:
    return ensure_account(kind=AccountKind.CASHIER, owner="external", currency=currency)


def suspense_account(*, player_id: int | str, currency: str) -> int:
    """Money the payment provider paid in for the player that could not be
    credited to their wallet (a deposit in ``refund_due``): it stays here
    until it is refunded to the provider (cashier account). Never negative."""
    return ensure_account(kind=AccountKind.SUSPENSE, owner=f"player:{player_id}", currency=currency)


def balance_of(*, account_id: int) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT balance FROM ledger_account WHERE id = %s", [account_id])
        row = cursor.fetchone()
    if row is None:
        raise UnknownAccount(f"no account {account_id}", account_id=account_id)
    return int(row[0])


def _cause_request(cause: Cause) -> Any:
    if isinstance(cause, StreamAppend):
        return {
            "stream_id": cause.stream_id,
            "expected_version": cause.expected_version,
            "events": [[e.type, e.schema_version, dict(e.data)] for e in cause.events],
            "metadata": dict(cause.metadata),
        }
    return cause


# --- transfers --------------------------------------------------------------------


@dataclass(frozen=True)
class TransferResult:
    transfer_id: int
    event_id: int
    debit_balance: int
    credit_balance: int


def transfer(
    *,
    debit_account: int,
    credit_account: int,
    amount: int,
    currency: str,
    idempotency_key: str,
    cause: Cause,
    kind: str = "transfer",
) -> TransferResult:
    """Move ``amount`` from ``debit_account`` to ``credit_account`` now (money,
    or tournament chips between the accounts that hold them)."""
    check_amount(amount)
    check_unit(currency)
    check_kind(kind)
    if debit_account == credit_account:
        raise SameAccount("a transfer needs two different accounts", account_id=debit_account)
    request: dict[str, Any] = {"debit": debit_account, "credit": credit_account, "amount": amount, "currency": currency}
    request |= {"kind": kind, "cause": _cause_request(cause)}
    return _moves(
        command="transfer", request=request, idempotency_key=idempotency_key, cause=cause,
        moves=[Move(debit_account, credit_account, amount, kind)], currency=currency, result_type=TransferResult,
        result=lambda event_id, _, transfer_ids, balances: TransferResult(
            transfer_ids[0], event_id, balances[debit_account], balances[credit_account]
        ),
    )  # fmt: skip


@dataclass(frozen=True)
class Move:
    """One transfer of ``transfer_many``."""

    debit: int
    credit: int
    amount: int
    kind: str = "transfer"


@dataclass(frozen=True)
class TransfersResult:
    transfer_ids: list[int]
    event_id: int
    balances: dict[str, int]  # account id (as text: the result is stored as JSON) -> balance after


def transfer_many(*, moves: Sequence[Move], currency: str, idempotency_key: str, cause: Cause) -> TransfersResult:
    """Several transfers caused by one event (a tournament registration's buy-in
    and fee, a cancellation's refunds): all their legs in that event's data, all
    or nothing. Same refusals as ``transfer``."""
    if not moves:
        raise InvalidAmount("nothing to transfer", amount="[]")
    check_unit(currency)
    for move in moves:
        check_amount(move.amount)
        check_kind(move.kind)
        if move.debit == move.credit:
            raise SameAccount("a transfer needs two different accounts", account_id=move.debit)
    request: dict[str, Any] = {"moves": [[m.debit, m.credit, m.amount, m.kind] for m in moves], "currency": currency}
    request["cause"] = _cause_request(cause)
    return _moves(
        command="transfer_many", request=request, idempotency_key=idempotency_key, cause=cause, moves=moves,
        currency=currency, result_type=TransfersResult,
        result=lambda event_id, _, transfer_ids, balances: TransfersResult(
            transfer_ids, event_id, {str(k): v for k, v in balances.items()}
        ),
    )  # fmt: skip


def _moves(
    *,
    command: str,
    request: dict[str, Any],
    idempotency_key: str,
    cause: Cause,
    moves: Sequence[Move],
    currency: str,
    result_type: type[_Result],
    result: Callable[[int, list[Leg], list[int], dict[int, int]], _Result],
) -> _Result:
    """``transfer`` and ``transfer_many`` once checked: the moves' legs, each a transfer."""
    return _command(
        command=command, request=request, idempotency_key=idempotency_key, cause=cause,
        cause_legs=[transfer_leg(m.kind, m.debit, m.credit, m.amount, currency) for m in moves],
        legs=lambda _, event_id: [Leg(m.debit, m.credit, m.amount, currency, m.kind, event_id) for m in moves],
        result_type=result_type, result=result,
    )  # fmt: skip


_Result = TypeVar("_Result", TransferResult, TransfersResult, "HoldResult")


def _command(
    *,
    command: str,
    request: dict[str, Any],
    idempotency_key: str,
    cause: Cause,
    cause_legs: list[list[Any]],
    legs: Callable[[Any, int], list[Leg]],
    result_type: type[_Result],
    result: Callable[[int, list[Leg], list[int], dict[int, int]], _Result],
) -> _Result:
    """A money command once checked, in one transaction: claim the idempotency
    key (a repeat: the first result, as ``result_type``), append the cause with
    ``cause_legs`` in its last event, make the transfers ``legs(cursor, event
    id)`` names (never none) and store and return ``result(event id, legs,
    transfer ids, balances after)``."""
    append = with_cause_legs(cause, cause_legs)
    at = now()
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        first = claim(cursor, key=idempotency_key, command=command, digest=request_hash(command, request), at=at)
        if first is not None:
            return result_type(**first)
        event_id, _ = cause_event(cursor, append)
        made = legs(cursor, event_id)
        balances = apply_deltas(cursor, net_deltas(made), made[0].currency)
        done = result(event_id, made, insert_legs(cursor, made, balances, at), balances)
        record_result(cursor, key=idempotency_key, result=asdict(done))
        return done


# --- holds --------------------------------------------------------------------------


@dataclass(frozen=True)
class HoldResult:
    hold_id: str
    status: str
    amount: int
    posted_amount: int
    event_id: int
    transfer_ids: list[int]


def open_hold(
    *,
    source: int,
    escrow: int,
    destination: int,
    amount: int,
    currency: str,
    idempotency_key: str,
    cause: Cause,
    hold_id: UUID | None = None,
) -> HoldResult:
    """Hold ``amount`` of ``source`` (e.g. a stake: wallet -> the player's held
    account): the money moves into ``escrow`` now, and a later ``post_hold``
    sends it on to ``destination`` or ``void_hold`` returns it. Refused with
    ``InsufficientFunds`` if ``source`` may not go negative and lacks it.
    Outside any transaction (PostgreSQL) the bet is one autocommitted
    statement: it commits whole, or raises and leaves nothing."""
    check_amount(amount)
    check_currency(currency)
    if len({source, escrow, destination}) < 2 or source == escrow or escrow == destination:
        raise SameAccount("a hold needs an escrow account distinct from source and destination")
    hold_id = hold_id or uuid.uuid4()
    hold_text = str(hold_id)
    request: dict[str, Any] = {"source": source, "escrow": escrow, "destination": destination, "amount": amount}
    request |= {"currency": currency, "hold_id": hold_text, "cause": _cause_request(cause)}
    at = now()
    digest = request_hash("open_hold", request)
    leg = Leg(source, escrow, amount, currency, "hold", 0, hold_id)
    cause = with_cause_legs(cause, [hold_open_leg(source, escrow, destination, amount, currency, hold_text)])
    # The thread's connection once: each ``connection.x`` goes through Django's
    # thread-local proxy, a measurable share of a bet's client CPU.
    db = connections[DEFAULT_DB_ALIAS]
    if db.vendor == "postgresql":
        if db.get_autocommit() and not db.in_atomic_block:
            # Not inside a caller's transaction: the bet is a single-command
            # transaction, so it runs as ONE autocommitted statement (one
            # round trip, no BEGIN/COMMIT, no Django atomic bookkeeping).
            return _open_hold_autocommit(db, leg, hold_text, destination, cause, idempotency_key, digest, at)
        with transaction.atomic(savepoint=False), bulk_cursor() as pg_cursor:
            return _open_hold_postgres(pg_cursor, leg, destination, cause, idempotency_key, digest, at)
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        # The stored result names the hold; a retry rebuilds the first result
        # from the hold and its opening transfer, which never change.
        first = claim(cursor, key=idempotency_key, command="open_hold", digest=digest, at=at,
                      result={"hold_id": str(hold_id)})  # fmt: skip
        if first is not None:
            return opened_hold(cursor, UUID(first["hold_id"]))
        event_id, _ = cause_event(cursor, cause)
        leg = leg._replace(event_id=event_id)
        balances = apply_deltas(cursor, net_deltas([leg]), currency)
        # The destination is checked by the insert itself (exists, same
        # currency) without locking its row: no hot house row on the bet path.
        try:
            cursor.execute(
                "INSERT INTO ledger_hold (id, source_id, escrow_id, destination_id, amount, currency, status, "
                "opened_event_id) SELECT %s, %s, %s, id, %s, currency, 'pending', %s FROM ledger_account "
                "WHERE id = %s AND currency = %s",
                [uuid_param(hold_id), source, escrow, amount, event_id, destination, currency],
            )
        except IntegrityError as exc:
            raise HoldAlreadyResolved(f"hold {hold_id} exists", code="hold_exists", hold_id=str(hold_id)) from exc
        if cursor.rowcount != 1:
            check_account(cursor, destination, currency)
        transfer_ids = insert_legs(cursor, [leg], balances, at)
        return HoldResult(str(hold_id), "pending", amount, 0, event_id, transfer_ids)


def opened_hold(cursor: Any, hold_id: UUID) -> HoldResult:
    """The result ``open_hold`` returned for this hold (its opening facts never change)."""
    cursor.execute(
        "SELECT h.amount, h.opened_event_id, t.id FROM ledger_hold h JOIN ledger_transfer t "
        "ON t.hold_id = h.id AND t.kind = 'hold' WHERE h.id = %s",
        [uuid_param(hold_id)],
    )
    amount, event_id, transfer_id = cursor.fetchone()
    return HoldResult(str(hold_id), "pending", int(amount), 0, int(event_id), [int(transfer_id)])


# One round trip on PostgreSQL for the bet path: claim the key, append the
# cause, move the stake, record hold, transfer and statement lines. Every
# step after the claim depends on the one before, so a refused step writes
# nothing after it, and the Python side raises (rolling back what came before).
_OPEN_HOLD_TEMPLATE = """
WITH idem AS (
    INSERT INTO ledger_idempotency (key, command, request_hash, result, created_at)
    VALUES (%(key)s, 'open_hold', %(digest)s, %(result)s::jsonb, %(at)s)
    ON CONFLICT (key) DO NOTHING RETURNING 1
), ev AS (
    INSERT INTO ledger_event (stream_id, version, type, schema_version, data, metadata, recorded_at, prev_hash, hash,
                              mac)
    SELECT e.* FROM ({events}) e WHERE EXISTS (SELECT 1 FROM idem)
    RETURNING id, version
), cause AS (
    SELECT id FROM ev ORDER BY version DESC LIMIT 1
), bal AS (
    UPDATE ledger_account a SET balance = a.balance + v.delta
    FROM (VALUES (%(source)s::bigint, -%(amount)s::bigint), (%(escrow)s::bigint, %(amount)s::bigint)) v(id, delta)
    WHERE a.id = v.id AND a.currency = %(currency)s AND (a.may_go_negative OR a.balance + v.delta >= 0)
      AND EXISTS (SELECT 1 FROM idem)
    RETURNING a.id, a.balance
), hold AS (
    INSERT INTO ledger_hold (id, source_id, escrow_id, destination_id, amount, currency, status, opened_event_id)
    SELECT %(hold_id)s::uuid, %(source)s, %(escrow)s, d.id, %(amount)s, d.currency, 'pending', cause.id
    FROM ledger_account d, cause
    WHERE d.id = %(destination)s AND d.currency = %(currency)s AND (SELECT count(*) FROM bal) = 2
    RETURNING opened_event_id
), tr AS (
    INSERT INTO ledger_transfer (debit_account_id, credit_account_id, amount, currency, kind, hold_id, event_id,
                                 created_at)
    SELECT %(source)s, %(escrow)s, %(amount)s, %(currency)s, 'hold', %(hold_id)s::uuid, opened_event_id, %(at)s
    FROM hold RETURNING id, event_id
), sl AS (
    INSERT INTO ledger_statement_line (account_id, transfer_id, event_id, amount, balance_after, created_at)
    SELECT b.id, tr.id, tr.event_id, CASE WHEN b.id = %(source)s THEN -%(amount)s ELSE %(amount)s END, b.balance,
           %(at)s
    FROM tr, bal b RETURNING 1
)
SELECT (SELECT count(*) FROM idem), (SELECT count(*) FROM bal), (SELECT count(*) FROM hold),
       (SELECT id FROM cause LIMIT 1), (SELECT id FROM tr), (SELECT count(*) FROM sl){strict}
"""
# Autocommit variant: a refusal raises in the statement, so nothing of it commits.
_STRICT = ", ledger_bet_refused((SELECT count(*) FROM idem), (SELECT count(*) FROM hold))"
_EVENT_ROW = (
    "SELECT %(s{i})s::text, %(v{i})s::int, %(t{i})s::text, %(sv{i})s::smallint, %(d{i})s::json, %(m{i})s::json, "
    "%(at)s::timestamptz, %(p{i})s::text, %(h{i})s::text, %(mac{i})s::text"
)


@functools.lru_cache(maxsize=16)
def open_hold_sql(events: int, strict: bool = False) -> str:
    """The bet-path statement for a cause of ``events`` events. Scalar
    parameters: array parameters cost more to send than the statement costs to
    run. Each variant is prepared once per connection.
    ``strict``: a refusal raises (``BET_REFUSED_SQLSTATE``) instead of
    returning counts, for the autocommit path."""
    rows = " UNION ALL ".join(_EVENT_ROW.format(i=i) for i in range(events))
    return _OPEN_HOLD_TEMPLATE.format(events=rows, strict=_STRICT if strict else "")


def _open_hold_params(
    cursor: Any, leg: Leg, destination: int, cause: Cause, key: str, digest: str, at: datetime,
    hold_text: str | None = None,
) -> tuple[int, dict[str, Any]]:  # fmt: skip
    """(number of events appended, parameters) of the bet-path statement."""
    hold_text = hold_text or str(leg.hold_id)
    prepared = prepare_append(cursor, cause, at)
    params: dict[str, Any] = {
        "key": key, "digest": digest, "result": f'{{"hold_id": "{hold_text}"}}', "at": at, "source": leg.debit,
        "escrow": leg.credit, "amount": leg.amount, "currency": leg.currency, "hold_id": hold_text,
        "destination": destination,
    }  # fmt: skip
    for i, p in enumerate(prepared):
        params |= {f"s{i}": p.stream_id, f"v{i}": p.version, f"t{i}": p.type, f"sv{i}": p.schema_version,
                   f"d{i}": p.data_json, f"m{i}": p.metadata_json, f"p{i}": p.prev_hash, f"h{i}": p.hash,
                   f"mac{i}": p.mac}  # fmt: skip
    return len(prepared), params


def _open_hold_integrity(exc: BaseException | None, leg: Leg, cause: Cause) -> DomainError | None:
    """The domain error behind a unique violation of the bet statement."""
    constraint = getattr(getattr(exc, "diag", None), "constraint_name", "") or ""
    if "hold" in constraint and "pkey" in constraint:
        return HoldAlreadyResolved(f"hold {leg.hold_id} exists", code="hold_exists", hold_id=str(leg.hold_id))
    return StaleStreamVersion(f"stream {cause.stream_id!r} moved on", stream_id=cause.stream_id)


def _open_hold_autocommit(
    db: Any, leg: Leg, hold_text: str, destination: int, cause: Cause, key: str, digest: str, at: datetime
) -> HoldResult:
    """The bet as one autocommitted statement: it commits whole or, refused,
    raises in the database and leaves nothing behind; the reason is then read.
    ``db``: Django's connection wrapper; ``hold_text``: the hold id as text."""
    db.ensure_connection()
    pg = db.connection
    allow_explicit_prepare(pg)
    with db.wrap_database_errors, psycopg.Cursor(pg) as cursor:
        events, params = _open_hold_params(cursor, leg, destination, cause, key, digest, at, hold_text)
        try:
            row = cursor.execute(open_hold_sql(events, strict=True), params, prepare=True).fetchone()
        except psycopg.errors.UniqueViolation as exc:
            error = _open_hold_integrity(exc, leg, cause)
            if error is None:
                raise
            raise error from exc
        except psycopg.Error as exc:
            if exc.sqlstate != BET_REFUSED_SQLSTATE:
                raise
            _explain_refused_hold(cursor, leg, destination, cause)
            raise  # not reached: the explanation raises
        assert row is not None
        claimed, _, _, event_id, transfer_id = row[:5]
        if not claimed:
            first = claim(cursor, key=key, command="open_hold", digest=digest, at=at)
            assert first is not None
            return opened_hold(cursor, UUID(first["hold_id"]))
        return HoldResult(hold_text, "pending", leg.amount, 0, int(event_id), [int(transfer_id)])


def _explain_refused_hold(cursor: Any, leg: Leg, destination: int, cause: Cause) -> None:
    """Raise why the bet statement refused (after it rolled back; reads only)."""
    cursor.execute(
        "SELECT id, currency, balance FROM ledger_account WHERE id IN (%s, %s)",
        [leg.debit, leg.credit],
    )
    found = {int(row[0]): row[1:] for row in cursor.fetchall()}
    for account_id in (leg.debit, leg.credit):
        if account_id not in found:
            raise UnknownAccount(f"no account {account_id}", account_id=account_id)
        if found[account_id][0] != leg.currency:
            raise CurrencyMismatch(f"account {account_id} is in {found[account_id][0]}, not {leg.currency}",
                                   account_id=account_id)  # fmt: skip
    check_account(cursor, destination, leg.currency)
    balance = int(found[leg.debit][1])
    raise InsufficientFunds(
        f"account {leg.debit} holds {balance}, needs {leg.amount}", account_id=leg.debit, balance=balance,
        needed=leg.amount,
    )  # fmt: skip


def _open_hold_postgres(
    cursor: Any, leg: Leg, destination: int, cause: Cause, key: str, digest: str, at: datetime
) -> HoldResult:
    events, params = _open_hold_params(cursor, leg, destination, cause, key, digest, at)
    sql = open_hold_sql(events)
    try:
        with connection.wrap_database_errors:
            row = cursor.execute(sql, params, prepare=True).fetchone()
    except IntegrityError as exc:
        error = _open_hold_integrity(exc.__cause__, leg, cause)
        if error is None:
            raise
        raise error from exc
    assert row is not None  # the final SELECT always returns one row
    claimed, updated, held, event_id, transfer_id, _ = row
    if not claimed:
        first = claim(cursor, key=key, command="open_hold", digest=digest, at=at)
        assert first is not None
        return opened_hold(cursor, UUID(first["hold_id"]))
    if updated != 2:
        diagnose_refusal(cursor, [leg.debit, leg.credit], net_deltas([leg]), leg.currency)
    if not held:
        check_account(cursor, destination, leg.currency)  # raises the reason
        raise AssertionError("the bet statement wrote no hold for a known destination")
    return HoldResult(str(leg.hold_id), "pending", leg.amount, 0, int(event_id), [int(transfer_id)])


def check_account(cursor: Any, account_id: int, currency: str) -> None:
    cursor.execute("SELECT currency FROM ledger_account WHERE id = %s", [account_id])
    row = cursor.fetchone()
    if row is None:
        raise UnknownAccount(f"no account {account_id}", account_id=account_id)
    if row[0] != currency:
        raise CurrencyMismatch(f"account {account_id} is in {row[0]}, not {currency}", account_id=account_id)


def resolve_hold(cursor: Any, *, hold_id: UUID, post_amount: int, event_id: int) -> list[Leg]:
    """Mark a pending hold posted (``post_amount`` > 0) or voided (0) by a
    guarded UPDATE, so it resolves at most once even under races; return the
    legs that move the escrowed money."""
    status = "posted" if post_amount else "voided"
    cursor.execute(
        "UPDATE ledger_hold SET status = %s, posted_amount = %s, resolved_event_id = %s "
        "WHERE id = %s AND status = 'pending' AND amount >= %s "
        "RETURNING source_id, escrow_id, destination_id, amount, currency",
        [status, post_amount, event_id, uuid_param(hold_id), post_amount],
    )
    row = cursor.fetchone()
    if row is None:
        cursor.execute("SELECT status, amount FROM ledger_hold WHERE id = %s", [uuid_param(hold_id)])
        found = cursor.fetchone()
        if found is None:
            raise UnknownHold(f"no hold {hold_id}", hold_id=str(hold_id))
        if found[0] != "pending":
            raise HoldAlreadyResolved(f"hold {hold_id} is already {found[0]}", hold_id=str(hold_id), status=found[0])
        raise PostExceedsHold(
            f"post of {post_amount} exceeds hold of {found[1]}", hold_id=str(hold_id), amount=int(found[1])
        )
    source, escrow, destination, amount, currency = int(row[0]), int(row[1]), int(row[2]), int(row[3]), row[4]
    legs = []
    if post_amount:
        legs.append(Leg(escrow, destination, post_amount, currency, "post", event_id, hold_id))
    if amount - post_amount:
        legs.append(
            Leg(
                escrow,
                source,
                amount - post_amount,
                currency,
                "void" if not post_amount else "release",
                event_id,
                hold_id,
            )
        )
    return legs


def _resolve(*, command: str, hold_id: UUID, post_amount: int, idempotency_key: str, cause: Cause) -> HoldResult:
    request: dict[str, Any] = {"hold_id": str(hold_id), "amount": post_amount, "cause": _cause_request(cause)}
    return _command(
        command=command, request=request, idempotency_key=idempotency_key, cause=cause,
        cause_legs=[resolution_leg(str(hold_id), post_amount)],
        legs=lambda cursor, event_id: resolve_hold(cursor, hold_id=hold_id, post_amount=post_amount, event_id=event_id),
        result_type=HoldResult,
        result=lambda event_id, legs, transfer_ids, _: HoldResult(
            str(hold_id), "posted" if post_amount else "voided", sum(leg.amount for leg in legs), post_amount,
            event_id, transfer_ids,
        ),
    )  # fmt: skip


def post_hold(*, hold_id: UUID, amount: int, idempotency_key: str, cause: Cause) -> HoldResult:
    """Send ``amount`` (1..held) of a pending hold to its destination and
    release the rest to its source. ``HoldAlreadyResolved`` if not pending."""
    check_amount(amount)
    return _resolve(
        command="post_hold", hold_id=hold_id, post_amount=amount, idempotency_key=idempotency_key, cause=cause
    )


def void_hold(*, hold_id: UUID, idempotency_key: str, cause: Cause) -> HoldResult:
    """Return the whole held amount to the source. ``HoldAlreadyResolved`` if not pending."""
    return _resolve(command="void_hold", hold_id=hold_id, post_amount=0, idempotency_key=idempotency_key, cause=cause)


# --- cashier --------------------------------------------------------------------------


@dataclass(frozen=True)
class CashierResult:
    transfer_id: int
    event_id: int
    balance: int


#: The cashier's commands and the events they append.
_CASHIER_EVENTS = {"deposit": event_types.DEPOSITED, "withdraw": event_types.WITHDRAWN}


def _cashier(
    command: str,
    wallet: int,
    amount: int,
    currency: str,
    external_reference: str,
    idempotency_key: str,
    actor: str,
    /,
) -> CashierResult:
    """``deposit`` or ``withdraw`` (``command``), its arguments in their order."""
    event_type = _CASHIER_EVENTS[command]
    check_amount(amount)
    check_currency(currency)
    if not external_reference:
        raise InvalidAmount("a cashier movement needs its external reference", code="missing_external_reference")
    cashier = cashier_account(currency=currency)
    request: dict[str, Any] = {
        "wallet": wallet,
        "amount": amount,
        "currency": currency,
        "reference": external_reference,
    }
    request["actor"] = actor
    at = now()
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        first = claim(cursor, key=idempotency_key, command=command, digest=request_hash(command, request), at=at)
        if first is not None:
            return CashierResult(**first)
        debit, credit = (cashier, wallet) if command == "deposit" else (wallet, cashier)
        # Balances first: the wallet's row lock orders concurrent movements on
        # it, so the wallet's stream head read next is the latest.
        legs_deltas = {debit: -amount, credit: amount}
        balances = apply_deltas(cursor, legs_deltas, currency)
        data = {"account_id": wallet, "amount": amount, "currency": currency}
        data |= {"external_reference": external_reference, "actor": actor}
        data["legs"] = [transfer_leg(command, debit, credit, amount, currency)]
        append = StreamAppend(
            f"account-{wallet}",
            None,
            [NewEvent(event_type, data, CURRENT_VERSIONS[event_type])],
            {"actor": actor, "idempotency_key": idempotency_key},
        )
        event_id, _ = cause_event(cursor, append)
        leg = Leg(debit, credit, amount, currency, command, event_id)
        [transfer_id] = insert_legs(cursor, [leg], balances, at)
        result = CashierResult(transfer_id, event_id, balances[wallet])
        record_result(cursor, key=idempotency_key, result=asdict(result))
        return result


def deposit(
    *, wallet: int, amount: int, currency: str, external_reference: str, idempotency_key: str, actor: str
) -> CashierResult:
    """Money arriving from outside (operator or payment-provider callback with
    its reference): cashier -> wallet, recorded as ``cashier.deposited``."""
    return _cashier("deposit", wallet, amount, currency, external_reference, idempotency_key, actor)


def withdraw(
    *, wallet: int, amount: int, currency: str, external_reference: str, idempotency_key: str, actor: str
) -> CashierResult:
    """Money leaving to the outside: wallet -> cashier, recorded as
    ``cashier.withdrawn``; ``InsufficientFunds`` if the wallet lacks it."""
    return _cashier("withdraw", wallet, amount, currency, external_reference, idempotency_key, actor)
