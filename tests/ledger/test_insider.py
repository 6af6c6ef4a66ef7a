"""What a database insider without the application's keys (CASINO_EVENT_MAC_KEY,
CASINO_SEAL_KEY) can and cannot do to the event log: one test per claim of
docs/ledger.md, "Insiders without the keys". Real PostgreSQL connections: a
runtime role made by ``setup_db_roles``' service (the application's password),
and the test database's owner, a superuser, switching the ledger's triggers off
the way a DBA can (``ALTER TABLE ... DISABLE TRIGGER USER``)."""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection

from casino.db_roles import APPEND_ONLY, audit_role
from ledger.canonical import GENESIS_HASH, canonical_json, chain_hash, event_body, event_mac
from ledger.errors import EventNotAuthentic, IntegrityEpochMoved
from ledger.event_types import DEPOSITED
from ledger.services import NewEvent, append_events, deposit, player_accounts
from ledger.services.events import now, timestamp
from ledger.services.seals import seal, seal_key
from ledger.services.verify import Problem, verify_ledger
from ledger.upcasting import CURRENT_VERSIONS
from tests.db import wait_until_readable
from tests.platform.conftest import RuntimeRole, connected_as

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True, databases=["default", "owner"])]

CURRENCY = "EUR"
GUARDED = ("ledger_event", "ledger_transfer", "ledger_seal", "ledger_integrity_epoch")


def as_dba(*statements: str) -> None:
    """Run ``statements`` as the tables' owner would: the ledger's triggers off
    around them, in one committed transaction of a separate connection."""
    db = settings.DATABASES["default"]
    with psycopg.connect(
        host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432, user=db["USER"], dbname=db["NAME"]
    ) as conn:
        for table in GUARDED:
            conn.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
        for statement in statements:
            conn.execute(statement)
        for table in GUARDED:
            conn.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")


def run(statement: str, params: list[Any] | None = None) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def forged_deposit_sql(wallet: int, amount: int) -> str:
    """An INSERT of a ``cashier.deposited`` of ``amount`` on the wallet's stream,
    chained correctly onto its head: everything an insider can compute without
    the event key (the ``mac`` column stays empty; a guessed one is tried apart)."""
    stream = f"account-{wallet}"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT version, hash FROM ledger_event WHERE stream_id = %s ORDER BY version DESC LIMIT 1", [stream]
        )
        version, head = cursor.fetchone()
    at = timestamp(now())
    data = {"account_id": wallet, "amount": amount, "currency": CURRENCY, "external_reference": "psp-forged",
            "actor": "insider"}  # fmt: skip
    schema = CURRENT_VERSIONS[DEPOSITED]
    body = event_body(stream_id=stream, version=version + 1, type=DEPOSITED, schema_version=schema, data=data,
                      metadata={"actor": "insider"}, recorded_at=at)  # fmt: skip
    digest = chain_hash(head, canonical_json(body))
    return (
        "INSERT INTO ledger_event (stream_id, version, type, schema_version, data, metadata, recorded_at, "
        f"prev_hash, hash) VALUES ('{stream}', {version + 1}, '{DEPOSITED}', {schema}, '{json.dumps(data)}', "
        f"'{{\"actor\": \"insider\"}}', '{at}', '{head}', '{digest}') RETURNING id"
    )


def funded_wallet(amount: int = 1_000) -> int:
    wallet = player_accounts(player_id="alice", currency=CURRENCY).wallet
    deposit(wallet=wallet, amount=amount, currency=CURRENCY, external_reference="psp-1", idempotency_key="d-1",
            actor="test")  # fmt: skip
    return wallet


def last_event_id() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT MAX(id) FROM ledger_event")
        return int(cursor.fetchone()[0])


def problems() -> list[Problem]:
    return verify_ledger(key=seal_key(), projections=False)


def verify_names(event_id: int, *texts: str) -> None:
    """``manage.py verify_ledger`` exits non-zero with ``event_id`` as the first bad event."""
    with pytest.raises(CommandError) as failed:
        call_command("verify_ledger", "--no-projections")
    assert f"first bad event: {event_id};" in str(failed.value)
    named = [str(p) for p in problems() if p.event_id == event_id]
    for text in texts:
        assert any(text in line for line in named), (text, named)


def seal_refuses(event_id: int, stream: str) -> None:
    """The seal stops before ``event_id`` and names it, now and on the next try;
    ``manage.py seal`` exits non-zero naming it."""
    wait_until_readable()
    with pytest.raises(EventNotAuthentic) as refused:
        seal()
    assert f"event {event_id} ({stream}@" in refused.value.message
    sealed = refused.value.details["sealed"]
    assert sealed is None or sealed.last_event_id < event_id
    with connection.cursor() as cursor:
        cursor.execute("SELECT COALESCE(MAX(last_event_id), 0) FROM ledger_seal")
        assert cursor.fetchone()[0] < event_id
    with pytest.raises(CommandError, match=f"seal refused: not sealing event {event_id} "):
        call_command("seal")


def test_a_forged_deposit_chained_by_the_runtime_role_is_named_and_never_sealed(runtime_role: RuntimeRole):
    with connected_as(runtime_role):
        wallet = funded_wallet()
        wait_until_readable()
        assert seal() is not None
        with connection.cursor() as cursor:
            cursor.execute(forged_deposit_sql(wallet, 5_000_000))
            forged = int(cursor.fetchone()[0])
        # A MAC the insider makes up (the seal key or no key at all) does not verify either.
        run(
            "INSERT INTO ledger_event (stream_id, version, type, schema_version, data, metadata, recorded_at, "
            "prev_hash, hash, mac) SELECT 'guess', 1, 'x.e', 1, '{}', '{}', now(), %s, %s, %s",
            ["0" * 64, "1" * 64, event_mac(seal_key(), "1" * 64)],
        )
        guessed = last_event_id()
        [later] = append_events(stream_id="later", expected_version=0, events=[NewEvent("x.e", {})])
        # A genuine event's hash and MAC, copied onto other content.
        run(
            "INSERT INTO ledger_event (stream_id, version, type, schema_version, data, metadata, recorded_at, "
            "prev_hash, hash, mac) SELECT 'copy', 1, type, 1, '{\"amount\": 5000000}', metadata, recorded_at, "
            "prev_hash, hash, mac FROM ledger_event WHERE id = %s",
            [later.position],
        )
        copied = last_event_id()
        verify_names(forged, f"{DEPOSITED}: has no MAC")
        found = problems()
        assert any(p.event_id == guessed and "MAC does not verify" in p.message for p in found)
        assert any(p.event_id == copied and "hash does not match the content" in p.message for p in found)
        assert not any(p.event_id == later.position for p in found)  # the application's own event verifies
        seal_refuses(forged, f"account-{wallet}")


def test_a_forged_deposit_inserted_by_the_dba_is_named_and_never_sealed():
    wallet = funded_wallet()
    wait_until_readable()
    first = seal()
    assert first is not None
    as_dba(forged_deposit_sql(wallet, 5_000_000))
    forged = last_event_id()
    verify_names(forged, "has no MAC")
    seal_refuses(forged, f"account-{wallet}")


def test_the_runtime_role_cannot_change_or_remove_an_epoch_and_adding_one_does_not_relax_the_check(
    runtime_role: RuntimeRole,
):
    assert audit_role(role=runtime_role.name).tables["ledger_integrity_epoch"] == APPEND_ONLY
    run("INSERT INTO ledger_integrity_epoch (feature, first_event_id, recorded_at) VALUES ('mac', 1, now())")
    with connected_as(runtime_role):
        wallet = funded_wallet()
        with connection.cursor() as cursor:
            cursor.execute(forged_deposit_sql(wallet, 100))
            forged = int(cursor.fetchone()[0])
        for statement in (
            "UPDATE ledger_integrity_epoch SET first_event_id = first_event_id + 1000",
            "DELETE FROM ledger_integrity_epoch",
            "TRUNCATE ledger_integrity_epoch",
        ):
            with pytest.raises(DatabaseError) as refused:
                run(statement)
            assert isinstance(refused.value.__cause__, psycopg.errors.InsufficientPrivilege), statement
        # A later row counts only if it starts earlier (the smallest bound counts).
        run(
            "INSERT INTO ledger_integrity_epoch (feature, first_event_id, recorded_at) VALUES ('mac', %s, now())",
            [forged + 1],
        )
        verify_names(forged, "has no MAC")


def test_the_epochs_are_append_only_for_the_owner_while_the_triggers_are_on():
    run("INSERT INTO ledger_integrity_epoch (feature, first_event_id, recorded_at) VALUES ('mac', 1, now())")
    for statement in ("UPDATE ledger_integrity_epoch SET first_event_id = 99", "DELETE FROM ledger_integrity_epoch"):
        with pytest.raises(DatabaseError, match="append-only"):
            run(statement)


def test_an_epoch_moved_by_the_dba_past_a_forged_event_is_detected_and_stops_the_seal():
    run("INSERT INTO ledger_integrity_epoch (feature, first_event_id, recorded_at) VALUES ('mac', 1, now())")
    wallet = funded_wallet()
    wait_until_readable()
    signed = seal()
    assert signed is not None
    assert signed.epochs is not None
    assert signed.epochs["mac"] == 1
    as_dba(forged_deposit_sql(wallet, 5_000_000))
    forged = last_event_id()
    as_dba(f"UPDATE ledger_integrity_epoch SET first_event_id = {forged + 1}")
    found = [str(p) for p in problems()]
    assert not any("has no MAC" in line for line in found)  # the move exempts the forged event from the MAC check...
    assert f"[epoch] seal {signed.id}: integrity epoch 'mac' starts at event {forged + 1}; " in "\n".join(found)
    with pytest.raises(CommandError, match="epoch"):
        call_command("verify_ledger", "--no-projections")
    wait_until_readable()
    with pytest.raises(IntegrityEpochMoved, match="integrity epoch 'mac' starts at event"):  # ...but not from the seal
        seal()
    as_dba("DELETE FROM ledger_integrity_epoch")  # no row: every event must carry a MAC, the seal still refuses
    with pytest.raises(IntegrityEpochMoved, match="'mac' has no row"):
        seal()


def test_a_sealed_event_edited_with_its_hash_recomputed_is_named():
    funded_wallet()
    [tail] = append_events(stream_id="audit", expected_version=0, events=[NewEvent("audit.noted", {"n": 1})])
    wait_until_readable()
    assert seal() is not None
    body = event_body(stream_id="audit", version=1, type="audit.noted", schema_version=1, data={"n": 2},
                      metadata={}, recorded_at=timestamp(tail.recorded_at))  # fmt: skip
    rehashed = chain_hash(GENESIS_HASH, canonical_json(body))
    as_dba(f"""UPDATE ledger_event SET data = '{{"n": 2}}', hash = '{rehashed}' WHERE id = {tail.position}""")
    verify_names(tail.position, "audit@1 audit.noted: MAC does not verify")
    assert any(p.check == "seal" and "Merkle root differs" in p.message for p in problems())
    assert not [p for p in problems() if p.event_id not in (None, tail.position)]


def test_the_dba_can_delete_an_unsealed_tail_unseen_but_not_a_sealed_one():
    """The limit the docs state: an event removed from the end of its stream
    before any seal covers it leaves nothing behind to verify against."""
    first, second = append_events(
        stream_id="audit", expected_version=0, events=[NewEvent("audit.noted", {"n": n}) for n in (1, 2)]
    )
    as_dba(f"DELETE FROM ledger_event WHERE id = {second.position}")
    assert problems() == []  # undetected: nothing in the database remembers it
    wait_until_readable()
    assert seal() is not None
    as_dba(f"DELETE FROM ledger_event WHERE id = {first.position}")
    assert [p.check for p in problems()] == ["seal"]  # sealed: the seal's count and root no longer match


def test_the_dba_can_roll_history_back_to_an_earlier_seal_unseen_in_the_database():
    """The other stated limit: seals chain backwards only, so the latest seal
    and the events it covers can go together; only a copy outside shows it."""
    append_events(stream_id="early", expected_version=0, events=[NewEvent("audit.noted", {})])
    wait_until_readable()
    assert seal() is not None
    [late] = append_events(stream_id="late", expected_version=0, events=[NewEvent("audit.noted", {})])
    wait_until_readable()
    latest = seal()
    assert latest is not None
    as_dba(f"DELETE FROM ledger_seal WHERE id = {latest.id}", f"DELETE FROM ledger_event WHERE id = {late.position}")
    assert problems() == []
