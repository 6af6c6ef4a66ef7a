"""The runtime database role (docs/ledger.md, "The runtime role"): the ledger's
writes work as it, rewriting history fails with a permission error, and the
deploy check tells it from the owner. Real PostgreSQL connections: the test
database's owner (the suite's superuser) and a role made by ``setup_db_roles``."""

from __future__ import annotations

import time
import uuid
from io import StringIO
from typing import Any

import psycopg
import pytest
from django.core.checks import run_checks
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction
from psycopg import sql

from casino.db_roles import (
    APPEND_ONLY,
    RuntimeRoleTooPowerful,
    TableAccess,
    audit_role,
    runtime_access,
    setup_runtime_role,
)
from ledger.services import (
    EventRef,
    HoldOpening,
    HoldResult,
    HoldSettlement,
    NewEvent,
    PlayerAccounts,
    StreamAppend,
    TransferResult,
    TransferSpec,
    append_events,
    deposit,
    house_account,
    open_hold,
    player_accounts,
    post_hold,
    settle_batch,
    transfer,
    void_hold,
)
from ledger.services.seals import seal, seal_key
from ledger.services.verify import verify_ledger
from tests.db import ledger_sums, rows, wait_until_readable

from .conftest import RuntimeRole, connected_as, drop_role, unique_role_name

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True, databases=["default", "owner"])]

CURRENCY = "EUR"
LEDGER_TABLES = (
    "ledger_event",
    "ledger_transfer",
    "ledger_statement_line",
    "ledger_hold",
    "ledger_idempotency",
    "ledger_account",
    "ledger_seal",
)


def current_user() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user")
        return str(cursor.fetchone()[0])


def execute(statement: str | sql.Composable) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement)


def bet(stream: str, amount: int) -> StreamAppend:
    return StreamAppend(stream, 0, [NewEvent("test.bet_placed", {"amount": amount})], {"actor": "test"})


def settled(stream: str, version: int) -> StreamAppend:
    return StreamAppend(stream, version, [NewEvent("test.settled", {})], {"actor": "test"})


def funded_alice(amount: int) -> tuple[PlayerAccounts, int]:
    """Alice's accounts, her wallet funded by a deposit, and table t1's house account."""
    alice = player_accounts(player_id="alice", currency=CURRENCY)
    deposit(wallet=alice.wallet, amount=amount, currency=CURRENCY, external_reference="psp-1",
            idempotency_key="deposit-1", actor="test")  # fmt: skip
    return alice, house_account(table_id="t1", currency=CURRENCY)


def place_bet(alice: PlayerAccounts, house: int, amount: int, round_number: int) -> HoldResult:
    stream = f"round-{round_number}-player-a"
    return open_hold(source=alice.wallet, escrow=alice.held, destination=house, amount=amount, currency=CURRENCY,
                     idempotency_key=f"{stream}-bet", cause=bet(stream, amount))  # fmt: skip


def balance(account_id: int) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT balance FROM ledger_account WHERE id = %s", [account_id])
        return int(cursor.fetchone()[0])


def test_the_ledgers_writes_work_as_the_runtime_role(runtime_role: RuntimeRole):
    with connected_as(runtime_role):
        assert current_user() == runtime_role.name
        alice, house = funded_alice(1_000)
        append_events(stream_id="table-t1", expected_version=0, events=[NewEvent("test.opened", {})])

        def pay_fee() -> TransferResult:
            return transfer(debit_account=alice.wallet, credit_account=house, amount=100, currency=CURRENCY,
                            idempotency_key="fee-1", cause=settled("table-t1", 1))  # fmt: skip

        paid = pay_fee()
        # A retry returns the recorded first result (the idempotency row's one updatable column).
        assert pay_fee() == paid
        # A bet inside a transaction, then voided.
        with transaction.atomic():
            voided = place_bet(alice, house, 200, round_number=1)
        void_hold(hold_id=uuid.UUID(voided.hold_id), idempotency_key="void-1", cause=settled("round-1-player-a", 1))
        # A bet on its own: one autocommitted statement; then posted in part.
        posted = place_bet(alice, house, 250, round_number=2)
        post_hold(
            hold_id=uuid.UUID(posted.hold_id),
            amount=150,
            idempotency_key="post-2",
            cause=settled("round-2-player-a", 1),
        )
        # A round in bulk (COPY): the bet opened, then settled with a payout.
        hold_id = uuid.uuid4()
        settle_batch(
            idempotency_key="round-3-bets",
            currency=CURRENCY,
            appends=[bet("round-3-player-a", 300)],
            open_holds=[HoldOpening(hold_id, alice.wallet, alice.held, house, 300, EventRef("round-3-player-a", 1))],
        )
        settle_batch(
            idempotency_key="round-3-settle",
            currency=CURRENCY,
            appends=[settled("round-3-player-a", 1)],
            holds=[HoldSettlement(hold_id, 300, EventRef("round-3-player-a", 2))],
            transfers=[TransferSpec(house, alice.wallet, 300, EventRef("round-3-player-a", 2))],
        )
        wait_until_readable()
        sealed = seal()
        problems = verify_ledger(key=seal_key())
    assert current_user() != runtime_role.name
    assert sealed is not None
    assert sealed.event_count == 9  # the deposit, the table's opening, the fee's event, three rounds' 2 each
    assert problems == []
    assert (balance(alice.wallet), balance(alice.held), balance(house)) == (750, 0, 250)
    assert ledger_sums() == {CURRENCY: 0}


# The five, then the rest of what would rewrite history or lift the guards.
FORBIDDEN = [
    "UPDATE ledger_event SET type = 'forged'",
    "DELETE FROM ledger_transfer",
    "TRUNCATE ledger_event",
    "DROP TRIGGER ledger_event_append_only ON ledger_event",
    "ALTER TABLE ledger_event DISABLE TRIGGER ALL",
    "DELETE FROM ledger_event",
    "UPDATE ledger_transfer SET amount = amount + 1",
    "TRUNCATE ledger_transfer, ledger_statement_line",
    "UPDATE ledger_statement_line SET amount = 0",
    "DELETE FROM ledger_statement_line",
    "UPDATE ledger_seal SET merkle_root = 'forged'",
    "DELETE FROM ledger_seal",
    "UPDATE ledger_account SET may_go_negative = true",  # only the balance moves
    "DELETE FROM ledger_account",
    "UPDATE ledger_hold SET amount = 1",
    "DELETE FROM ledger_hold",
    "DELETE FROM ledger_idempotency",
    "UPDATE games_tableconfigversion SET reason = 'forged'",
    "DROP TABLE ledger_event",
    "ALTER TABLE ledger_account DROP CONSTRAINT ledger_account_no_overdraft",
    "CREATE OR REPLACE FUNCTION ledger_reject_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$",
    "SET session_replication_role = replica",  # what the test harness flushes with: triggers off
    "CREATE TABLE ledger_shadow (id bigint)",
    "DELETE FROM django_migrations",
]


def test_rewriting_history_fails_with_a_permission_error_as_the_runtime_role(runtime_role: RuntimeRole):
    with connected_as(runtime_role):
        alice, house = funded_alice(500)
        place_bet(alice, house, 100, round_number=1)
    history = rows(*LEDGER_TABLES)
    with connected_as(runtime_role):
        for statement in FORBIDDEN:
            with pytest.raises(DatabaseError) as refused:
                execute(statement)
            assert isinstance(refused.value.__cause__, psycopg.errors.InsufficientPrivilege), (statement, refused.value)
    assert rows(*LEDGER_TABLES) == history
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = 'ledger_event'::regclass "
            "AND NOT tgisinternal ORDER BY 1"
        )
        assert cursor.fetchall() == [
            ("casino_round_event_notify", "O"),
            ("ledger_event_append_only", "O"),
            ("ledger_event_no_truncate", "O"),
        ]


def casino_warnings(**kwargs: Any) -> dict[str, str]:
    """The project's own deploy-check findings: id -> message."""
    return {
        message.id: message.msg
        for message in run_checks(include_deployment_checks=True, **kwargs)
        if message.id and message.id.startswith("casino.W")
    }


def test_the_deploy_check_warns_for_the_owner_and_not_for_the_runtime_role(runtime_role: RuntimeRole):
    as_owner = casino_warnings()
    assert as_owner.keys() >= {"casino.W001", "casino.W002"}  # a superuser, and the tables' owner
    assert "SUPERUSER" in as_owner["casino.W001"]
    assert "table ledger_event" in as_owner["casino.W002"]
    with connected_as(runtime_role):
        assert casino_warnings() == {}
        assert audit_role().findings() == []


def test_a_table_without_its_runtime_grants_is_reported_until_setup_runs_again(runtime_role: RuntimeRole):
    """What a migration that adds a table leaves behind: the runtime role cannot
    use it and the deploy check names it; rerunning setup grants it, and a new
    ledger table starts append-only. An extra grant is reported, and taken back."""
    execute("CREATE TABLE ledger_scratch (id bigserial PRIMARY KEY, note text)")
    try:
        with connected_as(runtime_role):
            assert casino_warnings() == {
                "casino.W004": (
                    f"ledger_scratch: {runtime_role.name!r} has nothing; the runtime policy is SELECT, INSERT."
                )
            }
            with pytest.raises(DatabaseError, match="permission denied"):
                execute("INSERT INTO ledger_scratch (note) VALUES ('a')")
        setup_runtime_role(role=runtime_role.name)
        with connected_as(runtime_role):
            assert casino_warnings() == {}
            execute("INSERT INTO ledger_scratch (note) VALUES ('a')")  # its sequence too
            with pytest.raises(DatabaseError, match="permission denied"):
                execute("UPDATE ledger_scratch SET note = 'b'")
        execute(sql.SQL("GRANT UPDATE ON ledger_event TO {}").format(sql.Identifier(runtime_role.name)))
        with connected_as(runtime_role):
            assert casino_warnings() == {
                "casino.W004": (
                    f"ledger_event: {runtime_role.name!r} has SELECT, INSERT, UPDATE; "
                    "the runtime policy is SELECT, INSERT."
                )
            }
        setup_runtime_role(role=runtime_role.name)
        assert audit_role(role=runtime_role.name).tables["ledger_event"] == APPEND_ONLY
    finally:
        execute("DROP TABLE ledger_scratch")


def test_setup_is_idempotent_and_sets_exactly_the_policy(runtime_role: RuntimeRole):
    with connection.cursor() as cursor:  # a role someone widened by hand
        cursor.execute(sql.SQL("ALTER ROLE {} CREATEDB NOLOGIN").format(sql.Identifier(runtime_role.name)))
    again = setup_runtime_role(role=runtime_role.name)
    assert not again.created
    assert again.tables == {table: runtime_access(table) for table in again.tables}
    assert again.tables["ledger_account"] == TableAccess(frozenset({"SELECT", "INSERT"}), frozenset({"balance"}))
    assert again.tables["ledger_hold"].update_columns == {"status", "posted_amount", "resolved_event_id"}
    assert again.tables["ledger_event"] == again.tables["ledger_seal"] == APPEND_ONLY
    assert again.tables["games_houseround"].privileges == {"SELECT", "INSERT", "UPDATE", "DELETE"}
    assert again.tables["django_migrations"].privileges == {"SELECT"}
    assert again.sequences > 0
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT rolcanlogin, rolcreatedb, rolsuper, rolpassword IS NOT NULL FROM pg_authid WHERE rolname = %s",
            [runtime_role.name],
        )
        assert cursor.fetchone() == (True, False, False, True)
    assert setup_runtime_role(role=runtime_role.name) == again


def test_the_runtime_role_ends_its_sessions_left_idle_in_a_transaction(runtime_role: RuntimeRole, settings: Any):
    """Issue 35: such a session would hold back the seals and exports (they never
    read past a transaction of this database): PostgreSQL ends it."""
    assert setup_runtime_role(role=runtime_role.name).idle_in_transaction_ms == 30_000  # the default, 30 s
    settings.CASINO_DB_IDLE_IN_TRANSACTION_SECONDS = 0.5
    assert setup_runtime_role(role=runtime_role.name).idle_in_transaction_ms == 500
    with psycopg.connect(runtime_role.url) as session:
        assert session.execute("SHOW idle_in_transaction_session_timeout").fetchone() == ("500ms",)
        session.execute("SELECT txid_current()")  # a transaction with an id, left idle
        pid = session.info.backend_pid
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid])
                if cursor.fetchone() is None:
                    break
            time.sleep(0.1)
        with pytest.raises(psycopg.errors.IdleInTransactionSessionTimeout):
            session.execute("SELECT 1")


def test_setup_refuses_a_role_that_owns_a_table_and_changes_nothing():
    name = unique_role_name("owning")
    try:
        execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(name)))
        execute("CREATE TABLE scratch_owned (id bigint)")
        execute(sql.SQL("ALTER TABLE scratch_owned OWNER TO {}").format(sql.Identifier(name)))
        with pytest.raises(RuntimeRoleTooPowerful, match="table scratch_owned"):
            setup_runtime_role(role=name)
        assert audit_role(role=name).tables["ledger_event"].privileges == set()
    finally:
        drop_role(name)  # and its table


def test_setup_db_roles_refuses_to_make_the_owner_its_own_runtime_role():
    """The suite's DATABASE_URL is the owner (one URL, as in development)."""
    with pytest.raises(CommandError, match="runtime_role_too_powerful"):
        call_command("setup_db_roles", stdout=StringIO(), stderr=StringIO())
