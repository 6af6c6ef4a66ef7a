"""Review of the poker action's deferred writes (``games.poker.store.act``):
the queued ledger batches and row UPDATEs go as one statement (or a pipeline),
and that changes nothing a statement-at-a-time run would leave: every balance
moved once, every refusal its own error, and a refusal leaves nothing behind."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import DEFAULT_DB_ALIAS, DatabaseError, IntegrityError, connection, connections, transaction

from games.poker import event_types as et
from games.poker import services
from games.poker.engine.events import ActionTaken
from games.poker.models import PokerHand, PokerHandPlayer, PokerSeat, PokerTable
from games.poker.store import act as store
from ledger.errors import InsufficientFunds, StaleStreamVersion
from ledger.services import EventRef, NewEvent, StreamAppend, TransferSpec, balance_of, read_stream, settle_batch
from ledger.services.postings import MAX_KEY
from ledger.services.seals import seal_key
from ledger.services.small import small_batch_writes
from ledger.services.verify import verify_ledger
from tests.db import ledger_sums, race
from tests.ledger.conftest import CURRENCY, fund, house_account, snapshot
from tests.poker.tables import T0, heads_up_dealt, make_table, refused, seat_balance
from tests.poker.tables import snapshot as poker_snapshot

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


def _batch(tag: str, debit: int, credit: int, amount: int, *, version: int = 0, head: str | None = None) -> Any:
    stream = f"{tag}-stream"
    writes = small_batch_writes(
        idempotency_key=f"{tag}-key",
        currency=CURRENCY,
        appends=[StreamAppend(stream, version, [NewEvent("test.bet", {"amount": amount})], {"actor": "t"}, head)],
        transfers=[TransferSpec(debit, credit, amount, EventRef(stream, version + 1), "bet")],
    )
    assert writes is not None
    return writes


def _deferred(*writes: Callable[[], object]) -> None:
    """``writes`` in one step's transaction, deferred (``store.deferred_writes``)."""
    with transaction.atomic(), store.deferred_writes():
        for write in writes:
            write()


def test_two_batches_moving_one_account_move_it_twice() -> None:
    wallet = fund("two-batches", 1_000).wallet
    house = house_account(table_id="two-batches", currency=CURRENCY)
    with transaction.atomic(), store.deferred_writes():
        store.queue_batch(_batch("two-a", wallet, house, 300))
        store.queue_batch(_batch("two-b", wallet, house, 200))
    assert (balance_of(account_id=wallet), balance_of(account_id=house)) == (500, 500)
    assert ledger_sums() == {CURRENCY: 0}


def test_a_refused_batch_among_the_writes_leaves_nothing() -> None:
    wallet = fund("refused-batch", 100).wallet
    house = house_account(table_id="refused-batch", currency=CURRENCY)
    table = make_table()
    before = snapshot()
    with pytest.raises(InsufficientFunds):
        _deferred(
            lambda: store.queue_batch(_batch("refused", wallet, house, 300)),
            lambda: store.save_table_phase(table_id=table.pk, phase="hand", phase_seq=99, deadline=None),
        )
    assert snapshot() == before
    assert PokerTable.objects.get(pk=table.pk).phase_seq != 99


def test_an_update_finding_no_row_is_refused_and_leaves_nothing() -> None:
    wallet = fund("no-row", 1_000).wallet
    house = house_account(table_id="no-row", currency=CURRENCY)
    before = snapshot()
    with pytest.raises(RuntimeError):
        _deferred(
            lambda: store.queue_batch(_batch("no-row", wallet, house, 300)),
            lambda: store.save_result(key="no-such-key", result={"x": 1}),
        )
    assert snapshot() == before


def test_a_stream_moved_on_meanwhile_is_a_stale_version_and_leaves_nothing() -> None:
    wallet = fund("moved", 1_000).wallet
    house = house_account(table_id="moved", currency=CURRENCY)
    settle_batch(idempotency_key="moved-first", currency=CURRENCY, appends=[StreamAppend(
        "moved-stream", 0, [NewEvent("test.bet", {}), NewEvent("test.bet", {})], {"actor": "t"})])  # fmt: skip
    first, _ = read_stream(stream_id="moved-stream")
    # This action read the head at version 1; another writer appended version 2 since.
    table = make_table()
    before = snapshot()
    with pytest.raises(StaleStreamVersion):  # one statement
        _deferred(lambda: store.queue_batch(_batch("moved", wallet, house, 300, version=1, head=first.hash)))
    assert snapshot() == before
    with pytest.raises(StaleStreamVersion):  # two UPDATEs of one row: the pipeline
        _deferred(
            lambda: store.queue_batch(_batch("moved", wallet, house, 300, version=1, head=first.hash)),
            lambda: store.save_table_phase(table_id=table.pk, phase="hand", phase_seq=1, deadline=None),
            lambda: store.save_table_phase(table_id=table.pk, phase="hand", phase_seq=2, deadline=None),
        )
    assert snapshot() == before


def test_a_projection_write_breaking_a_constraint_is_not_a_stale_stream() -> None:
    wallet = fund("constraint", 1_000).wallet
    house = house_account(table_id="constraint", currency=CURRENCY)
    taken, other = make_table(), make_table()
    other.code = taken.code  # unique: the projection's own fault, not another writer's append
    before = snapshot()
    with pytest.raises(IntegrityError):
        _deferred(
            lambda: store.queue_batch(_batch("constraint", wallet, house, 300)),
            lambda: store.save_row(other, ["code"]),
        )
    assert snapshot() == before


def test_two_updates_of_one_row_apply_in_order_with_the_batch() -> None:
    wallet = fund("same-row", 1_000).wallet
    house = house_account(table_id="same-row", currency=CURRENCY)
    table = make_table()
    with transaction.atomic(), store.deferred_writes():
        store.save_table_phase(table_id=table.pk, phase="hand", phase_seq=7, deadline=None)
        store.queue_batch(_batch("same-row", wallet, house, 300))
        store.save_table_phase(table_id=table.pk, phase="between", phase_seq=8, deadline=None)
    table.refresh_from_db()
    assert (table.phase, table.phase_seq) == ("between", 8)
    assert (balance_of(account_id=wallet), balance_of(account_id=house)) == (700, 300)


def _acting(table: PokerTable) -> tuple[PokerHand, int]:
    hand = PokerHand.objects.get(hand_id=table.current_hand_id)
    assert hand.actor_seat is not None
    return hand, int(hand.players[str(hand.actor_seat)])


@pytest.mark.django_db(transaction=True)
def test_a_retry_racing_the_first_action_is_done_once() -> None:
    table = heads_up_dealt()
    hand, player = _acting(table)
    events = len(read_stream(stream_id=et.hand_stream(hand.hand_id)))
    results = race(2, lambda _: services.act(table_id=table.pk, player_id=player, action="call",
                                             idempotency_key="race-same", now=T0), atomic=False)  # fmt: skip
    assert results[0] == results[1]
    taken = [e for e in read_stream(stream_id=et.hand_stream(hand.hand_id))[events:] if e.type == ActionTaken.type]
    assert len(taken) == 1
    assert ledger_sums() == {CURRENCY: 0}
    assert verify_ledger(key=seal_key()) == []


@pytest.mark.django_db(transaction=True)
def test_two_actions_at_one_table_at_once_are_done_one_after_the_other() -> None:
    table = heads_up_dealt()
    hand, player = _acting(table)
    results = race(2, lambda i: services.act(table_id=table.pk, player_id=player, action="call",
                                             idempotency_key=f"race-{i}", now=T0), atomic=False)  # fmt: skip
    done = [r for r in results if isinstance(r, services.ActResult)]
    assert len(done) == 1, results
    assert [r for r in results if r is not done[0]] == ["poker_not_your_turn"]
    hand.refresh_from_db()
    assert hand.stream_version == len(read_stream(stream_id=et.hand_stream(hand.hand_id)))
    # The seats' stacks (projection) are their ledger accounts' balances.
    for seat in PokerSeat.objects.filter(table=table):
        assert seat.stack == seat_balance(table, seat.player_id)
    assert ledger_sums() == {CURRENCY: 0}
    assert verify_ledger(key=seal_key()) == []


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_before_its_writes_leaves_nothing_and_the_retry_acts(monkeypatch: Any) -> None:
    table = heads_up_dealt()
    _, player = _acting(table)
    before = poker_snapshot()
    send = store._fetch_one_raw

    def killed_first(sql: str, params: list[Any]) -> Any:
        # The claim and the table lock are held; the server ends this session before the writes arrive.
        pid = connection.connection.info.backend_pid
        other = connections.create_connection(DEFAULT_DB_ALIAS)
        try:
            with other.cursor() as cursor:
                cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
        finally:
            other.close()
        return send(sql, params)

    monkeypatch.setattr(store, "_fetch_one_raw", killed_first)
    with pytest.raises(DatabaseError):
        services.act(table_id=table.pk, player_id=player, action="call", idempotency_key="killed", now=T0)
    monkeypatch.undo()
    connection.close()
    assert poker_snapshot() == before
    result = services.act(table_id=table.pk, player_id=player, action="call", idempotency_key="killed", now=T0)
    assert result.action == "call"
    assert ledger_sums() == {CURRENCY: 0}


def test_a_hand_players_row_and_the_hands_stacks_after_both_land() -> None:
    table = heads_up_dealt()
    player = PokerHandPlayer.objects.filter(hand__hand_id=table.current_hand_id).order_by("seat_number").first()
    assert player is not None
    dealt = player.stack_before
    player.stack_before = 123
    _deferred(
        lambda: store.save_row(player, ["stack_before"]),
        lambda: store.save_stacks_after(hand_id=table.current_hand_id, stacks=[(player.seat_number, 77)]),
    )
    player.refresh_from_db()
    assert (player.stack_before, player.stack_after) == (123, 77)
    # Back to what the hand's events say (the suite rebuilds the projections from the log).
    PokerHandPlayer.objects.filter(pk=player.pk).update(stack_before=dealt, stack_after=None)


@pytest.mark.parametrize("bad_key", ["", "k" * (MAX_KEY + 1)], ids=["empty", "long"])
def test_an_action_under_a_key_no_command_may_claim_is_refused_as_the_general_path_refuses_it(bad_key: str) -> None:
    table = heads_up_dealt()
    _, player = _acting(table)
    refused(
        "invalid_idempotency_key",
        lambda: services.act(table_id=table.pk, player_id=player, action="call", idempotency_key=bad_key, now=T0),
    )
