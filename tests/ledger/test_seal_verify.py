"""Seals and verify_ledger, against rows tampered with behind the triggers' back."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import psycopg
import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection

from casino.settings import CELERY_BEAT_SCHEDULE
from ledger import triggers
from ledger.canonical import merkle_root
from ledger.services import NewEvent, append_events, post_hold, read_stream
from ledger.services.seals import seal, sign, signed_message
from ledger.tasks import seal_ledger
from tests.conftest import ROOT, _database_url_for_subprocess
from tests.db import wait_until_readable

from .conftest import CURRENCY, bet_event, fund, house_account, stake

pytestmark = pytest.mark.django_db(transaction=True)


def tamper(*statements: str) -> None:
    """Change committed rows the way an attacker with superuser rights could:
    PostgreSQL through a separate superuser connection with the trigger
    disabled; SQLite by dropping the triggers around the change."""
    if connection.vendor == "postgresql":
        db = settings.DATABASES["default"]
        with psycopg.connect(
            host=db["HOST"] or "127.0.0.1",
            port=db["PORT"] or 5432,
            user=db["USER"],
            dbname=db["NAME"],
            autocommit=False,
        ) as conn:
            conn.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no deferred FK checks left pending at ENABLE
            for table in triggers.APPEND_ONLY_TABLES:
                conn.execute(f"ALTER TABLE {table} DISABLE TRIGGER {table}_append_only")
            for sql in statements:
                conn.execute(sql)
            for table in triggers.APPEND_ONLY_TABLES:
                conn.execute(f"ALTER TABLE {table} ENABLE TRIGGER {table}_append_only")
        return
    with connection.cursor() as cursor:
        triggers.run(cursor, "sqlite", install=False)
        for sql in statements:
            cursor.execute(sql)
        triggers.run(cursor, "sqlite", install=True)


def populate() -> list:
    alice = fund("alice", 5_000)
    house = house_account(table_id="t1", currency=CURRENCY)
    for n in range(3):
        opened = stake(alice, house, 100, idempotency_key=f"b{n}", cause=bet_event(f"round-{n}", 100))
        post_hold(
            hold_id=uuid.UUID(opened.hold_id),
            amount=100,
            idempotency_key=f"p{n}",
            cause=bet_event(f"round-{n}", 0, expected_version=1),
        )
    return [e for n in range(3) for e in read_stream(stream_id=f"round-{n}")]


def verify_fails_naming(event_id: int | None, text: str) -> str:
    with pytest.raises(CommandError) as caught:
        call_command("verify_ledger")
    message = str(caught.value)
    if event_id is not None:
        assert f"first bad event: {event_id};" in message
    assert text in message
    return message


def test_seal_covers_committed_events_and_chains_to_the_previous_seal():
    events = populate()
    wait_until_readable()
    first = seal()
    assert first is not None
    with connection.cursor() as cursor:
        cursor.execute("SELECT hash FROM ledger_event ORDER BY txid, id")
        hashes = [row[0] for row in cursor.fetchall()]
    assert first.event_count == len(hashes)
    assert first.merkle_root == merkle_root(hashes)
    assert first.last_event_id == max(e.position for e in events)
    assert first.signature == sign(
        signed_message(
            from_txid=first.from_txid,
            to_txid=first.to_txid,
            event_count=first.event_count,
            last_event_id=first.last_event_id,
            merkle_root=first.merkle_root,
            prev_root=first.prev_root,
            epochs=first.epochs,
        ),
        settings.CASINO_SEAL_KEY.encode(),
    )
    with connection.cursor() as cursor:  # the seal signs the integrity epochs as they are
        cursor.execute("SELECT feature, MIN(first_event_id) FROM ledger_integrity_epoch GROUP BY feature")
        assert first.epochs == dict(cursor.fetchall())
    assert seal() is None  # nothing new
    append_events(stream_id="later", expected_version=0, events=[NewEvent("x.e", {})])
    wait_until_readable()
    second = seal_ledger.apply().get()  # the beat task's body
    assert second == first.id + 1
    with connection.cursor() as cursor:
        cursor.execute("SELECT from_txid, prev_root, event_count FROM ledger_seal WHERE id = %s", [second])
        assert cursor.fetchone() == (first.to_txid, first.merkle_root, 1)
    call_command("verify_ledger")
    assert CELERY_BEAT_SCHEDULE["ledger-seal"]["task"] == seal_ledger.name


def test_verify_names_an_event_whose_data_was_altered():
    events = populate()
    wait_until_readable()
    seal()
    call_command("verify_ledger")
    victim = events[3]
    tamper(f"UPDATE ledger_event SET data = '{{\"amount\": 1}}' WHERE id = {victim.position}")
    verify_fails_naming(victim.position, "hash does not match the content")


def test_verify_names_the_event_after_a_deleted_one():
    populate()
    first, second = append_events(
        stream_id="audit", expected_version=0, events=[NewEvent("a.e", {"n": n}) for n in (1, 2)]
    )
    tamper(f"DELETE FROM ledger_event WHERE id = {first.position}")
    verify_fails_naming(second.position, "version 2 follows 0")


def test_verify_catches_an_altered_transfer_and_a_forged_seal():
    populate()
    wait_until_readable()
    seal()
    tamper("UPDATE ledger_transfer SET amount = amount + 1 WHERE id = (SELECT MAX(id) FROM ledger_transfer)")
    verify_fails_naming(None, "money")
    tamper("UPDATE ledger_transfer SET amount = amount - 1 WHERE id = (SELECT MAX(id) FROM ledger_transfer)")
    call_command("verify_ledger")
    tamper("UPDATE ledger_seal SET event_count = event_count + 1")
    verify_fails_naming(None, "signature does not verify")


def test_verify_catches_a_transfer_pointing_at_no_event():
    populate()
    tamper("UPDATE ledger_transfer SET event_id = 999999 WHERE id = (SELECT MIN(id) FROM ledger_transfer)")
    verify_fails_naming(None, "names a missing event")


def test_verify_ledger_exits_non_zero_from_the_command_line():
    events = populate()
    tamper(f"UPDATE ledger_event SET type = 'forged' WHERE id = {events[2].position}")
    env = dict(os.environ, DATABASE_URL=_database_url_for_subprocess(), CASINO_SEAL_KEY=settings.CASINO_SEAL_KEY)
    done = subprocess.run(
        [sys.executable, "manage.py", "verify_ledger"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0
    assert f"first bad event: {events[2].position};" in done.stderr


def test_the_seal_task_runs_in_a_real_worker(celery_worker_process):
    populate()
    wait_until_readable()
    seal_id = seal_ledger.delay().get(timeout=60)
    with connection.cursor() as cursor:
        cursor.execute("SELECT event_count FROM ledger_seal WHERE id = %s", [seal_id])
        (count,) = cursor.fetchone()
        cursor.execute("SELECT COUNT(*) FROM ledger_event")
        assert cursor.fetchone() == (count,)
    call_command("verify_ledger")
