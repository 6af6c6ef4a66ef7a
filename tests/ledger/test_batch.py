"""The bulk settlement path: a round's events, holds, payouts and projections at once."""

from __future__ import annotations

import uuid
from dataclasses import replace

import pytest
from django.db import IntegrityError, connection, transaction

from ledger.errors import (
    HoldAlreadyResolved,
    IdempotencyKeyReused,
    InsufficientFunds,
    InvalidAmount,
    StaleStreamVersion,
)
from ledger.services import (
    EventRef,
    HoldOpening,
    HoldSettlement,
    NewEvent,
    StreamAppend,
    TransferSpec,
    append_events,
    read_stream,
    settle_batch,
)
from ledger.services.projections import expected_projections
from ledger.services.verify import verify_ledger
from tests.db import ledger_sums

from .conftest import CURRENCY, balances, bet_event, fund, house_account, snapshot, stake

pytestmark = pytest.mark.django_db

PLAYERS = 40


@pytest.fixture
def round_with_bets():
    house = house_account(table_id="t1", currency=CURRENCY)
    players = []
    for n in range(PLAYERS):
        accounts = fund(f"p{n}", 1_000)
        opened = stake(accounts, house, 100, idempotency_key=f"bet-{n}", cause=bet_event(f"r1-p{n}", 100))
        players.append((accounts, uuid.UUID(opened.hold_id)))
    return house, players


def settlement(house, players, *, winners=frozenset(range(0, PLAYERS, 4)), stream_version=1):
    """Losers' stakes go to the house; winners get the stake back plus 1:1 from the house."""
    appends, holds, transfers = [], [], []
    for n, (accounts, hold_id) in enumerate(players):
        won = n in winners
        stream = f"r1-p{n}"
        appends.append(
            StreamAppend(stream, stream_version, [NewEvent("test.settled", {"won": won})], {"actor": "dealer"})
        )
        ref = EventRef(stream, stream_version + 1)
        holds.append(HoldSettlement(hold_id, 0 if won else 100, ref))
        if won:
            transfers.append(TransferSpec(house, accounts.wallet, 100, ref))
    return {"appends": appends, "holds": holds, "transfers": transfers}


def test_settle_batch_moves_the_house_once_and_keeps_every_invariant(round_with_bets, settings):
    house, players = round_with_bets
    result = settle_batch(idempotency_key="round-1-settle", currency=CURRENCY, **settlement(house, players))
    winners = len(range(0, PLAYERS, 4))
    assert result.events == PLAYERS
    assert result.transfers == PLAYERS + winners
    assert balances(house) == [(PLAYERS - winners) * 100 - winners * 100]
    for n, (accounts, _) in enumerate(players):
        assert balances(accounts.wallet, accounts.held) == [1_100 if n % 4 == 0 else 900, 0]
        assert [e.type for e in read_stream(stream_id=f"r1-p{n}")] == ["test.bet_placed", "test.settled"]
    assert ledger_sums() == {CURRENCY: 0}
    with connection.cursor() as cursor:
        expected_balances, expected_lines = expected_projections(cursor)
        cursor.execute("SELECT account_id, transfer_id, event_id, amount, balance_after FROM ledger_statement_line")
        live_lines = sorted(cursor.fetchall())
        cursor.execute("SELECT id, balance FROM ledger_account WHERE balance <> 0")
        assert dict(cursor.fetchall()) == {a: b for a, b in expected_balances.items() if b}
    assert live_lines == sorted(line[:5] for line in expected_lines)
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []
    # The same batch again is the first result; nothing moves twice.
    before = snapshot()
    again = settle_batch(idempotency_key="round-1-settle", currency=CURRENCY, **settlement(house, players))
    assert again == result
    assert snapshot() == before


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (lambda h, p: settlement(h, p, stream_version=0), StaleStreamVersion),
        (
            lambda h, p: (
                settlement(h, p)
                | {"transfers": [TransferSpec(p[1][0].wallet, h, 5_000, EventRef("r1-p1", 2), "side_bet")]}
            ),
            InsufficientFunds,
        ),
        # Refused while the streams' heads are being read (prepare_batch checks amounts).
        (
            lambda h, p: (
                settlement(h, p) | {"transfers": [TransferSpec(h, p[1][0].wallet, 0, EventRef("r1-p1", 2), "payout")]}
            ),
            InvalidAmount,
        ),
    ],
)
def test_a_refused_batch_leaves_everything_as_it_was(round_with_bets, change, error):
    house, players = round_with_bets
    before = snapshot()
    with pytest.raises(error), transaction.atomic():
        settle_batch(idempotency_key="round-1-bad", currency=CURRENCY, **change(house, players))
    assert snapshot() == before
    # Still usable afterwards: the right batch settles.
    settle_batch(idempotency_key="round-1-settle", currency=CURRENCY, **settlement(house, players))
    assert [e.type for e in read_stream(stream_id="r1-p0")] == ["test.bet_placed", "test.settled"]


@pytest.mark.django_db(transaction=True)
def test_a_batch_called_outside_a_transaction_commits_whole_or_not_at_all(round_with_bets):
    """In autocommit the batch is its own transaction: the heads it reads while
    encoding and its writes are one; refused while encoding, nothing is left."""
    house, players = round_with_bets
    before = snapshot()
    zero = [TransferSpec(house, players[1][0].wallet, 0, EventRef("r1-p1", 2), "payout")]
    with pytest.raises(InvalidAmount):
        settle_batch(
            idempotency_key="round-1-bad", currency=CURRENCY, **settlement(house, players) | {"transfers": zero}
        )
    assert snapshot() == before
    result = settle_batch(idempotency_key="round-1-settle", currency=CURRENCY, **settlement(house, players))
    assert result.events == PLAYERS
    assert ledger_sums() == {CURRENCY: 0}


def test_a_batch_cannot_resolve_a_hold_twice_or_reuse_a_key(round_with_bets):
    house, players = round_with_bets
    settle_batch(idempotency_key="k1", currency=CURRENCY, **settlement(house, players[:5]))
    before = snapshot()
    with pytest.raises(HoldAlreadyResolved), transaction.atomic():
        settle_batch(idempotency_key="k2", currency=CURRENCY, **settlement(house, players[:5], stream_version=2))
    with pytest.raises(IdempotencyKeyReused), transaction.atomic():
        settle_batch(idempotency_key="k1", currency=CURRENCY, **settlement(house, players[5:10]))
    assert snapshot() == before


def _with_heads(request: dict, heads: dict[str, str]) -> dict:
    """The request with each append carrying the head hash its caller read (``StreamAppend.head_hash``)."""
    return request | {"appends": [replace(a, head_hash=heads[a.stream_id]) for a in request["appends"]]}


def _heads(request: dict) -> dict[str, str]:
    return {a.stream_id: read_stream(stream_id=a.stream_id)[-1].hash for a in request["appends"]}


def test_a_batch_chains_onto_the_heads_its_caller_read(round_with_bets, settings):
    house, players = round_with_bets
    request = settlement(house, players)
    heads = _heads(request)
    settle_batch(idempotency_key="round-1-settle", currency=CURRENCY, **_with_heads(request, heads))
    for stream, head in heads.items():
        bet, settled = read_stream(stream_id=stream)
        assert head == bet.hash
        assert (settled.version, settled.prev_hash) == (2, bet.hash)
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []


def test_a_head_hash_from_the_caller_is_not_read_again_so_a_wrong_one_breaks_the_chain_and_verify_names_it(
    round_with_bets, settings
):
    # The contract of ``StreamAppend.head_hash``: the batch trusts it (that is
    # the read it saves); verify_ledger is what catches a caller that lies.
    house, players = round_with_bets
    request = settlement(house, players)
    heads = _heads(request) | {"r1-p3": "f" * 64}
    settle_batch(idempotency_key="round-1-settle", currency=CURRENCY, **_with_heads(request, heads))
    settled = read_stream(stream_id="r1-p3")[-1]
    assert settled.prev_hash == "f" * 64
    problems = verify_ledger(key=settings.CASINO_SEAL_KEY.encode())
    assert [p.event_id for p in problems if p.check == "chain"] == [settled.position], problems


def test_a_head_hash_at_a_version_the_stream_moved_past_is_refused_and_writes_nothing(round_with_bets):
    house, players = round_with_bets
    request = settlement(house, players)
    heads = _heads(request)
    append_events(stream_id="r1-p7", expected_version=1, events=[NewEvent("test.note", {})], metadata={})
    before = snapshot()
    with pytest.raises(StaleStreamVersion) as refused, transaction.atomic():
        settle_batch(idempotency_key="round-1-settle", currency=CURRENCY, **_with_heads(request, heads))
    # Refused by the unique key when the events were written (the head was not read).
    assert isinstance(refused.value.__cause__, IntegrityError)
    assert snapshot() == before


def test_a_batch_can_open_holds_for_many_players(settings):
    house = house_account(table_id="t2", currency=CURRENCY)
    players = [fund(f"q{n}", 300) for n in range(10)]
    appends = [StreamAppend(f"r2-q{n}", 0, [NewEvent("test.bet_placed", {"amount": 200})]) for n in range(10)]
    openings = [
        HoldOpening(uuid.UUID(int=1000 + n), p.wallet, p.held, house, 200, EventRef(f"r2-q{n}", 1))
        for n, p in enumerate(players)
    ]
    settle_batch(idempotency_key="bets-r2", currency=CURRENCY, appends=appends, open_holds=openings)
    assert [balances(p.wallet, p.held) for p in players] == [[100, 200]] * 10
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []
    before = snapshot()
    overdraw = [HoldOpening(uuid.uuid4(), players[0].wallet, players[0].held, house, 101, EventRef("r2-q0", 2))]
    with pytest.raises(InsufficientFunds), transaction.atomic():
        settle_batch(
            idempotency_key="bets-r2b",
            currency=CURRENCY,
            appends=[StreamAppend("r2-q0", 1, [NewEvent("test.bet_placed", {"amount": 101})])],
            open_holds=overdraw,
        )
    assert snapshot() == before


def test_a_batch_stores_any_text_exactly_and_its_chain_verifies(settings):
    """The bulk path writes rows in COPY's text format: backslashes, tabs, line
    breaks, quotes, "\\N" and non-ASCII in stream ids, types, data and metadata
    must come back exactly as appended, and the hash chain must still verify."""
    tricky = 'a\\b\tc\nd\re "q" \\N é€ \\.'
    appends = [
        StreamAppend(
            f"odd-{n}-{tricky}", 0, [NewEvent(f"test.odd{tricky}", {"s": tricky, "n": [n, tricky]})], {"actor": tricky}
        )
        for n in range(3)
    ]
    with transaction.atomic():
        settle_batch(idempotency_key="odd-text", currency=CURRENCY, appends=appends)
    for n in range(3):
        [event] = read_stream(stream_id=f"odd-{n}-{tricky}")
        assert (event.type, event.data, event.metadata["actor"]) == (
            f"test.odd{tricky}",
            {"s": tricky, "n": [n, tricky]},
            tricky,
        )
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []


def test_the_batch_digest_is_the_canonical_hash_of_the_whole_request():
    """The batch assembles its request's canonical JSON from the events' encoded
    data; it must equal hashing the plain request structure (so a retry of a
    batch first hashed either way is still recognised as the same request)."""
    from ledger.services.batch import _batch_digest, _metadata_encoder
    from ledger.services.events import encode_data
    from ledger.services.postings import request_hash

    odd = 'é "q" \\ \t'
    appends = [
        StreamAppend(
            f"s-{odd}",
            None,
            [NewEvent(f"t.{odd}", {"b": [1, odd], "a": None}, 2), NewEvent("t.x", {})],
            {"actor": odd, "n": 1},
        ),
        StreamAppend("s-2", 0, [NewEvent("t.y", {"z": {"k": True}})], {}),
    ]
    holds = [HoldSettlement(uuid.uuid4(), 5, EventRef("s-2", 1))]
    opens = [HoldOpening(uuid.uuid4(), 1, 2, 3, 7, EventRef("s-2", 1))]
    transfers = [TransferSpec(3, 1, 9, EventRef(f"s-{odd}", 2), "payout")]
    plain = {
        "currency": "EUR",
        "appends": [
            [
                a.stream_id,
                a.expected_version,
                [[e.type, e.schema_version, dict(e.data)] for e in a.events],
                dict(a.metadata),
            ]
            for a in appends
        ],
        "holds": [[str(h.hold_id), h.post_amount, h.cause.stream_id, h.cause.version] for h in holds],
        "open_holds": [
            [str(h.hold_id), h.source, h.escrow, h.destination, h.amount, h.cause.stream_id, h.cause.version]
            for h in opens
        ],
        "transfers": [[t.debit, t.credit, t.amount, t.kind, t.cause.stream_id, t.cause.version] for t in transfers],
    }
    encoded = [[encode_data(e) for e in a.events] for a in appends]
    metadata = _metadata_encoder()
    texts = [str(h.hold_id) for h in holds]
    metas = [metadata(a.metadata) for a in appends]
    assembled = _batch_digest("EUR", appends, encoded, metas, texts, holds, opens, transfers)
    assert assembled == request_hash("settle_batch", plain)
    assert assembled != _batch_digest("EUR", appends[:1], encoded[:1], metas[:1], texts, holds, opens, transfers)
