"""Event MACs (docs/ledger.md, "Event MACs"): every writer stores the MAC of the
event's hash under the application's key; a rotated key keeps verifying the
events it made only while it is listed as retired."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection, transaction

from ledger.canonical import event_mac
from ledger.errors import EventNotAuthentic
from ledger.services import EventRef, HoldSettlement, NewEvent, StreamAppend, append_events, open_hold, settle_batch
from ledger.services.seals import seal, seal_key
from ledger.services.verify import verify_ledger
from tests.db import wait_until_readable

from .conftest import CURRENCY, fund, house_account

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def stored() -> list[tuple[int, str, str | None]]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, hash, mac FROM ledger_event ORDER BY id")
        return cursor.fetchall()


def test_every_writer_stores_the_mac_of_the_events_hash(settings):
    append_events(stream_id="mac-1", expected_version=0, events=[NewEvent("test.noted", {"n": 1})])
    accounts = fund("mac", 1_000)  # a deposit
    house = house_account(table_id="mac", currency=CURRENCY)
    bets = {}
    for stream in ("mac-2", "mac-3"):
        bet = StreamAppend(stream, 0, [NewEvent("test.bet", {"amount": 100})], {"actor": "test"})
        place = lambda bet=bet: open_hold(  # noqa: E731
            source=accounts.wallet, escrow=accounts.held, destination=house, amount=100, currency=CURRENCY,
            idempotency_key=f"{bet.stream_id}-bet", cause=bet,
        )  # fmt: skip
        if stream == "mac-2":
            bets[stream] = place()  # outside a transaction: the one autocommitted statement
        else:
            with transaction.atomic():
                bets[stream] = place()
    settle_batch(  # COPY
        idempotency_key="mac-settle",
        currency=CURRENCY,
        appends=[StreamAppend(s, 1, [NewEvent("test.settled", {})], {"actor": "test"}) for s in bets],
        holds=[HoldSettlement(uuid.UUID(held.hold_id), 100, EventRef(s, 2)) for s, held in bets.items()],
    )
    rows = stored()
    assert len(rows) >= 6
    key = settings.CASINO_EVENT_MAC_KEY.encode()
    assert all(mac == event_mac(key, digest) for _, digest, mac in rows), rows
    assert verify_ledger(key=seal_key()) == []


def test_a_rotated_key_verifies_the_events_it_made_only_while_listed_as_retired(settings):
    append_events(stream_id="before", expected_version=0, events=[NewEvent("test.noted", {})])
    old_key = settings.CASINO_EVENT_MAC_KEY
    settings.CASINO_EVENT_MAC_KEY = "a-new-event-mac-key-of-at-least-32-characters"
    [under_new] = append_events(stream_id="after", expected_version=0, events=[NewEvent("test.noted", {})])
    assert {i: m for i, _, m in stored()}[under_new.position] == event_mac(
        settings.CASINO_EVENT_MAC_KEY.encode(), under_new.hash
    )
    not_listed = verify_ledger(key=seal_key())
    assert [(p.check, p.message) for p in not_listed] == [
        ("mac", "before@1 test.noted: MAC does not verify under the event keys (written without the application's key)")
    ]
    wait_until_readable()
    with pytest.raises(EventNotAuthentic, match=r"before@1 test\.noted"):
        seal()
    settings.CASINO_EVENT_MAC_RETIRED_KEYS = [old_key]
    assert verify_ledger(key=seal_key()) == []
    sealed = seal()
    assert sealed is not None
    assert sealed.event_count == 2
