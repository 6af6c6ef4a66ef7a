"""The bulk path: settle a whole round (thousands of players' events, hold
posts/voids, payouts and projections) in ONE transaction.

PostgreSQL: event and transfer ids are reserved from their sequences, rows go
in with ``COPY`` (psycopg 3), holds and balances change in one set-based
UPDATE each, so every shared account (house, pools) is written once per
round, not once per player. SQLite: the same steps with ``executemany``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from django.db import IntegrityError, connection, transaction

from casino.collector import collector_paused
from ledger.canonical import GENESIS_HASH, NotCanonical, canonical_text
from ledger.currencies import check_unit
from ledger.errors import CurrencyMismatch, HoldAlreadyResolved, InvalidEvent, SameAccount, StaleStreamVersion
from ledger.legs import ReservedKey, splice, split_data
from ledger.services.events import (
    NewEvent,
    PreparedEvent,
    StreamAppend,
    check_metadata,
    encode_data,
    now,
    prepare,
    recorded_json_of,
    sqlite_txid,
    string_json,
    validate_event,
    validate_stream_id,
)
from ledger.services.money import check_account, resolve_hold
from ledger.services.postings import (
    Leg,
    apply_deltas,
    bulk_cursor,
    check_amount,
    check_kind,
    claim,
    net_deltas,
    pipelined,
    record_result,
    statement_rows,
    text_array,
    uuid_param,
)


@dataclass(frozen=True)
class EventRef:
    """An event appended by the same batch, named by stream and version."""

    stream_id: str
    version: int


@dataclass(frozen=True)
class HoldOpening:
    """Open a hold of ``amount`` from ``source`` into ``escrow``, bound for ``destination``."""

    hold_id: UUID
    source: int
    escrow: int
    destination: int
    amount: int
    cause: EventRef


@dataclass(frozen=True)
class HoldSettlement:
    """Post ``post_amount`` of the hold to its destination (rest released), or void it with 0."""

    hold_id: UUID
    post_amount: int
    cause: EventRef


@dataclass(frozen=True)
class TransferSpec:
    debit: int
    credit: int
    amount: int
    cause: EventRef
    kind: str = "payout"


@dataclass(frozen=True)
class BatchResult:
    events: int
    transfers: int
    first_event_id: int
    last_event_id: int


@dataclass(frozen=True)
class PreparedBatch:
    """A batch checked and encoded, not yet written (``prepare_batch``)."""

    idempotency_key: str
    currency: str
    appends: Sequence[StreamAppend]
    holds: Sequence[HoldSettlement]
    open_holds: Sequence[HoldOpening]
    transfers: Sequence[TransferSpec]
    at: datetime
    encoded: list[list[str]]  # each append's events' data with their money legs, canonical JSON
    metadata_jsons: list[str]  # each append's metadata, canonical JSON
    digest: str  # of the whole request, for the idempotency key
    hold_texts: list[str]  # each hold id as text, in order (made once: 30,000 in a big round)


def settle_batch(
    *,
    idempotency_key: str,
    currency: str,
    appends: Sequence[StreamAppend],
    holds: Sequence[HoldSettlement] = (),
    open_holds: Sequence[HoldOpening] = (),
    transfers: Sequence[TransferSpec] = (),
) -> BatchResult:
    """Append every stream's events, resolve the holds, make the transfers and
    update balances and statements, all or nothing, in the caller's
    transaction. Same errors as the single commands."""
    with transaction.atomic(savepoint=False):
        # PostgreSQL: the streams' heads are read while Python checks and
        # encodes the batch (two cores, not one after the other).
        with pipelined(), bulk_cursor() as cursor:
            read_heads = _send_heads(cursor, _streams_to_read(appends))
            batch = _prepare(idempotency_key, currency, appends, holds, open_holds, transfers)
            heads = read_heads()
        return settle_prepared(batch, heads=heads)


def prepare_batch(
    *,
    idempotency_key: str,
    currency: str,
    appends: Sequence[StreamAppend],
    holds: Sequence[HoldSettlement] = (),
    open_holds: Sequence[HoldOpening] = (),
    transfers: Sequence[TransferSpec] = (),
) -> PreparedBatch:
    """The database-free first half of ``settle_batch``: check amounts, kinds and
    events, encode every event's data and metadata and hash the request. A
    caller may run it while the server works on a statement it sent in
    pipeline mode (``games.house.store.commit``); ``settle_prepared`` writes."""
    return _prepare(idempotency_key, currency, appends, holds, open_holds, transfers)


def _prepare(
    idempotency_key: str,
    currency: str,
    appends: Sequence[StreamAppend],
    holds: Sequence[HoldSettlement],
    open_holds: Sequence[HoldOpening],
    transfers: Sequence[TransferSpec],
    /,
) -> PreparedBatch:
    """``prepare_batch``, its arguments in their order (``settle_batch`` too)."""
    with collector_paused():
        check_unit(currency)
        for spec in transfers:
            check_amount(spec.amount)
            check_kind(spec.kind)
        for hold in holds:
            check_amount(hold.post_amount, allow_zero=True)
        for opening in open_holds:
            check_amount(opening.amount)
            if opening.escrow in (opening.source, opening.destination):
                raise SameAccount("a hold needs an escrow account distinct from source and destination")
        hold_texts = [str(h.hold_id) for h in holds]
        legs = _legs_by_event(currency, holds, hold_texts, open_holds, transfers)
        # Each event's data is encoded once: for the request's digest and, with
        # its money legs spliced in, for its hash.
        encode = _data_encoder()
        plain: list[list[str]] = []
        encoded: list[list[str]] = []
        pop = legs.pop
        for append in appends:
            stream, version = append.stream_id, append.expected_version
            if version is None or not legs:
                texts = [encode(e, None)[0] for e in append.events]
                plain.append(texts)
                encoded.append(texts)
                continue
            given, hashed = [], []
            for event in append.events:
                version += 1
                text, with_legs = encode(event, pop((stream, version), None))
                given.append(text)
                hashed.append(with_legs)
            plain.append(given)
            encoded.append(hashed)
        if legs:
            (stream_id, version), _ = next(iter(legs.items()))
            raise InvalidEvent(
                f"{EventRef(stream_id, version)} is not appended by this batch (or its append has no expected "
                "version: the money legs go into the data of the event they name)",
                stream_id=stream_id,
            )
        metadata = _metadata_encoder()
        metadata_jsons = [metadata(a.metadata) for a in appends]
        digest = _batch_digest(currency, appends, plain, metadata_jsons, hold_texts, holds, open_holds, transfers)
        return PreparedBatch(idempotency_key, currency, appends, holds, open_holds, transfers, now(), encoded,
                             metadata_jsons, digest, hold_texts)  # fmt: skip


def settle_prepared(batch: PreparedBatch, *, heads: Mapping[str, tuple[int, str]] | None = None) -> BatchResult:
    """Write a ``prepare_batch`` result: the second half of ``settle_batch``.
    ``heads``: stream id -> (version, hash) of heads already read in this
    transaction (``_streams_to_read``), not read again."""
    with collector_paused():
        return _settle_prepared(batch, heads or {})


def _settle_prepared(batch: PreparedBatch, heads: Mapping[str, tuple[int, str]]) -> BatchResult:
    idempotency_key, currency, appends = batch.idempotency_key, batch.currency, batch.appends
    holds, open_holds, transfers, at = batch.holds, batch.open_holds, batch.transfers, batch.at
    encoded, metadata_jsons, digest = batch.encoded, batch.metadata_jsons, batch.digest
    with transaction.atomic(savepoint=False), bulk_cursor() as cursor:
        first = claim(cursor, key=idempotency_key, command="settle_batch", digest=digest, at=at)
        if first is not None:
            return BatchResult(**first)
        planned = _plan_appends(cursor, appends, heads)
        refs = [(a.stream_id, start + i) for a, start, _ in planned for i in range(len(a.events))]
        event_ids = _reserve_ids(cursor, "ledger_event", len(refs)) if refs else []
        by_ref = dict(zip(refs, event_ids, strict=True))

        def event_of(ref: EventRef) -> int:  # (prepare_batch found every ref's event)
            try:
                return by_ref[(ref.stream_id, ref.version)]
            except KeyError:
                raise InvalidEvent(f"{ref} is not appended by this batch", stream_id=ref.stream_id) from None

        resolutions = [(h.hold_id, h.post_amount, event_of(h.cause)) for h in holds]
        with pipelined():
            # PostgreSQL: the holds' UPDATE runs on the server while Python
            # hashes the events (two cores, not one after the other).
            resolving = _send_hold_resolutions(cursor, resolutions, batch.hold_texts)
            prepared = _hash_appends(planned, at, encoded, metadata_jsons)
            legs = _collect_hold_resolutions(cursor, resolutions, batch.hold_texts, resolving)
        _insert_events(cursor, prepared, event_ids)
        opened = [(h, event_of(h.cause)) for h in open_holds]
        legs += [Leg(h.source, h.escrow, h.amount, currency, "hold", event_id, h.hold_id) for h, event_id in opened]
        legs += [Leg(t.debit, t.credit, t.amount, currency, t.kind, event_of(t.cause)) for t in transfers]
        for leg in legs:
            if leg.currency != currency:
                raise CurrencyMismatch(f"hold in {leg.currency} settled in a {currency} batch", currency=leg.currency)
        balances = apply_deltas(cursor, net_deltas(legs), currency)
        _insert_holds(cursor, opened, currency)
        _insert_legs(cursor, legs, balances, at)
        result = BatchResult(len(event_ids), len(legs), min(event_ids, default=0), max(event_ids, default=0))
        record_result(cursor, key=idempotency_key, result=asdict(result))
        return result


def _plan_appends(
    cursor: Any, appends: Sequence[StreamAppend], read: Mapping[str, tuple[int, str]]
) -> list[tuple[StreamAppend, int, str]]:
    """Check every append against its stream's head: (append, first new
    version, head hash); ``StaleStreamVersion`` when a stream moved on.
    ``read``: heads already read in this transaction (not read again)."""
    streams = [a.stream_id for a in appends]
    if len(set(streams)) != len(streams):
        raise InvalidEvent("a batch appends to each stream once")
    for append in appends:
        validate_stream_id(append.stream_id)
        if not append.events:
            raise InvalidEvent("nothing to append", stream_id=append.stream_id)
    # A head the caller read in this transaction (``StreamAppend.head_hash``)
    # is not read again: a version the stream has moved past still trips the
    # unique key when the events are written (see ``StreamAppend``).
    known: dict[str, tuple[int, str]] = dict(read)
    for append in appends:
        if append.expected_version and append.head_hash is not None:
            known[append.stream_id] = (append.expected_version, append.head_hash)
    heads = _heads(cursor, [s for s in _streams_to_read(appends) if s not in known])
    heads |= known
    planned = []
    for append in appends:
        version, head_hash = heads.get(append.stream_id, (0, GENESIS_HASH))
        if append.expected_version is not None and version != append.expected_version:
            raise StaleStreamVersion(
                f"stream {append.stream_id!r} is at version {version}, not {append.expected_version}",
                stream_id=append.stream_id,
                expected_version=append.expected_version,
                actual_version=version,
            )
        planned.append((append, version + 1, head_hash))
    return planned


def _legs_by_event(
    currency: str,
    holds: Sequence[HoldSettlement],
    hold_texts: list[str],
    open_holds: Sequence[HoldOpening],
    transfers: Sequence[TransferSpec],
) -> dict[tuple[str, int], list[str]]:
    """The batch's money legs (``ledger.legs``), each as its canonical JSON text,
    by the (stream, version) of the event that causes them. Written as text
    directly: a round has tens of thousands (ints, hold ids as UUID text, a
    checked ISO currency code, kinds through ``string_json``)."""
    legs: dict[tuple[str, int], list[str]] = {}
    cur = string_json(currency)
    for hold, text in zip(holds, hold_texts, strict=True):
        ref = hold.cause
        leg = f'["post","{text}",{int(hold.post_amount)}]' if hold.post_amount else f'["void","{text}"]'
        legs.setdefault((ref.stream_id, ref.version), []).append(leg)
    for opening in open_holds:
        ref = opening.cause
        leg = (f'["hold",{int(opening.source)},{int(opening.escrow)},{int(opening.amount)},{cur},'
               f'"{opening.hold_id}",{int(opening.destination)}]')  # fmt: skip
        legs.setdefault((ref.stream_id, ref.version), []).append(leg)
    for spec in transfers:
        ref = spec.cause
        leg = f"[{string_json(spec.kind)},{int(spec.debit)},{int(spec.credit)},{int(spec.amount)},{cur}]"
        legs.setdefault((ref.stream_id, ref.version), []).append(leg)
    return legs


def _data_encoder() -> Callable[[NewEvent, list[str] | None], tuple[str, str]]:
    """(data as given, data with ``legs``) as canonical JSON, remembering each
    data mapping by identity: a round's settlement events share one mapping
    among the players with the same result. With legs, the mapping's keys
    before and after ``"legs"`` are encoded once and each event's legs spliced
    between them (``ledger.legs.splice``). (Sound while the batch lasts: its
    events keep every mapping alive, so no identity is reused.)"""
    known: dict[int, str] = {}
    halves: dict[int, tuple[str, str, str]] = {}

    def encode(event: NewEvent, legs: list[str] | None) -> tuple[str, str]:
        if legs is None:
            text = known.get(id(event.data))
            if text is None:
                text = known[id(event.data)] = encode_data(event)
                if '"legs":' in text and isinstance(event.data, Mapping) and "legs" in event.data:
                    raise InvalidEvent(f"{event.type}: the key 'legs' is reserved for money legs",
                                       event_type=event.type)  # fmt: skip
            else:
                validate_event(event)
            return text, text
        found = halves.get(id(event.data))
        if found is None:
            validate_event(event)
            found = halves[id(event.data)] = _around_legs(event)
        else:
            validate_event(event)
        return found[2], found[0] + ",".join(legs) + found[1]

    return encode


def _around_legs(event: NewEvent) -> tuple[str, str, str]:
    """(text before the legs' items, text after them, the data as given) of
    ``event``'s canonical JSON with a ``legs`` list spliced in."""
    data = event.data
    try:
        if not data:
            return '{"legs":[', "]}", "{}"
        first, last = min(data), max(data)
        if first > "legs" or last < "legs":  # every key on one side (the common case): one encoding
            text = canonical_text(data)
            if first > "legs":
                return '{"legs":[', "]," + text[1:], text
            return text[:-1] + ',"legs":[', "]}", text
        before, after = split_data(data)
        before_json, after_json = canonical_text(before), canonical_text(after)
    except (ReservedKey, NotCanonical, TypeError) as exc:  # TypeError: keys that are not all strings
        raise InvalidEvent(f"{event.type} data: {exc}", event_type=event.type) from exc
    head, tail = splice(before_json, after_json, "\0").split("\0")
    return head + "[", "]" + tail, before_json[:-1] + "," + after_json[1:]


def _metadata_encoder() -> Callable[[Mapping[str, Any]], str]:
    """``check_metadata`` remembering results: a round's appends mostly share
    one metadata shape (``{"actor": "dealer", ...}``)."""
    known: dict[Any, str] = {}

    def metadata_json(metadata: Mapping[str, Any]) -> str:
        try:
            key = tuple((k, type(v), v) for k, v in sorted(metadata.items()))  # 1 and True differ in JSON
            return known.get(key) or known.setdefault(key, check_metadata(metadata))
        except TypeError:  # unhashable values: encode each time
            return check_metadata(metadata)

    return metadata_json


def _batch_digest(
    currency: str,
    appends: Sequence[StreamAppend],
    encoded: list[list[str]],
    metadata_jsons: list[str],
    hold_texts: list[str],
    holds: Sequence[HoldSettlement],
    open_holds: Sequence[HoldOpening],
    transfers: Sequence[TransferSpec],
) -> str:
    """``request_hash("settle_batch", request)`` of the batch's request (streams,
    events, holds, transfers), its canonical JSON assembled from the events'
    already-encoded data instead of encoding all of it a second time. Equal to
    the digest of the plain structure (tests/ledger/test_batch.py), so a retry
    is recognised whichever way its first attempt was hashed."""

    def events_json(events: Sequence[NewEvent], texts: list[str]) -> str:
        return ",".join(
            f"[{string_json(e.type)},{int(e.schema_version)},{data}]" for e, data in zip(events, texts, strict=True)
        )

    appends_json = ",".join(
        f"[{string_json(a.stream_id)},{'null' if a.expected_version is None else int(a.expected_version)},"
        f"[{events_json(a.events, texts)}],{meta}]"
        for a, texts, meta in zip(appends, encoded, metadata_jsons, strict=True)
    )
    rest = canonical_text(
        {
            "holds": [
                [text, h.post_amount, h.cause.stream_id, h.cause.version]
                for h, text in zip(holds, hold_texts, strict=True)
            ],
            "open_holds": [
                [str(h.hold_id), h.source, h.escrow, h.destination, h.amount, h.cause.stream_id, h.cause.version]
                for h in open_holds
            ],
            "transfers": [[t.debit, t.credit, t.amount, t.kind, t.cause.stream_id, t.cause.version] for t in transfers],
        }
    )
    text = (
        f'{{"command":"settle_batch","request":{{"appends":[{appends_json}],"currency":{string_json(currency)},'
        + rest[1:]  # '"holds":…,"open_holds":…,"transfers":…}' (its keys sort after "currency")
        + "}"
    )
    return hashlib.sha256(text.encode()).hexdigest()


def _hash_appends(
    planned: list[tuple[StreamAppend, int, str]], at: datetime, encoded: list[list[str]], metadata_jsons: list[str]
) -> list[PreparedEvent]:
    """Encode and hash-chain the planned appends (pure computation); ``encoded``
    and ``metadata_jsons``: each append's data and metadata texts, in order."""
    recorded = recorded_json_of(at)
    prepared: list[PreparedEvent] = []
    for (append, first_version, head_hash), texts, metadata_json in zip(planned, encoded, metadata_jsons, strict=True):
        prepared += prepare(
            stream_id=append.stream_id,
            first_version=first_version,
            prev_hash=head_hash,
            events=append.events,
            metadata_json=metadata_json,
            at=at,
            recorded_json=recorded,
            data_jsons=texts,
        )
    return prepared


def _streams_to_read(appends: Sequence[StreamAppend]) -> list[str]:
    """The streams whose heads a batch must read: not new ones (expected version
    0) and not those whose head the caller passed (``StreamAppend.head_hash``)."""
    return [
        a.stream_id for a in appends if a.expected_version != 0 and not (a.expected_version and a.head_hash is not None)
    ]


def _send_heads(cursor: Any, stream_ids: list[str]) -> Callable[[], dict[str, tuple[int, str]]]:
    """Start reading the heads of ``stream_ids``; the returned function gives
    them. PostgreSQL in pipeline mode: the query runs on the server until then."""

    def with_new_streams(found: dict[str, tuple[int, str]]) -> dict[str, tuple[int, str]]:
        # A stream without events is at version 0 (so it is not read again).
        return {stream_id: found.get(stream_id, (0, GENESIS_HASH)) for stream_id in stream_ids}

    if not stream_ids or connection.vendor != "postgresql":
        return lambda: with_new_streams(_heads(cursor, stream_ids))
    cursor.execute(_HEADS_SQL, [stream_ids])
    return lambda: with_new_streams({row[0]: (int(row[1]), row[2]) for row in cursor.fetchall()})


_HEADS_SQL = (
    "SELECT DISTINCT ON (stream_id) stream_id, version, hash FROM ledger_event "
    "WHERE stream_id = ANY(%s) ORDER BY stream_id, version DESC"
)


def _heads(cursor: Any, stream_ids: list[str]) -> dict[str, tuple[int, str]]:
    if not stream_ids:
        return {}
    if connection.vendor == "postgresql":
        cursor.execute(_HEADS_SQL, [stream_ids])
        return {row[0]: (int(row[1]), row[2]) for row in cursor.fetchall()}
    heads: dict[str, tuple[int, str]] = {}
    for start in range(0, len(stream_ids), 500):
        chunk = stream_ids[start : start + 500]
        # SQLite returns the other columns from the row holding MAX().
        cursor.execute(
            "SELECT stream_id, MAX(version), hash FROM ledger_event WHERE stream_id IN ({}) GROUP BY stream_id".format(
                ", ".join(["%s"] * len(chunk))
            ),
            chunk,
        )
        heads.update({row[0]: (int(row[1]), row[2]) for row in cursor.fetchall()})
    return heads


#: (database name, table) -> the sequence of the table's ``id``: looked up once
#: per process, not in a round trip of its own on every batch (a bet batch
#: reserves ids for two tables: two of its round trips). A sequence's name
#: is fixed by the migrations that made its table.
_SEQUENCES: dict[tuple[str, str], str] = {}


def _sequence_of(cursor: Any, table: str) -> str:
    key = (str(connection.settings_dict["NAME"]), table)
    sequence = _SEQUENCES.get(key)
    if sequence is None:
        cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [table])
        sequence = _SEQUENCES[key] = cursor.fetchone()[0]
    return sequence


def _reserve_ids(cursor: Any, table: str, count: int) -> list[int]:
    """``count`` fresh ids for ``table`` (PostgreSQL: from its sequence;
    SQLite: above the maximum, safe with its single writer)."""
    if connection.vendor == "postgresql":
        # One text value, not one row per id: fetching 20,000 rows costs more
        # than drawing the 20,000 values. The sequence goes in as a constant
        # (a looked-up one makes each nextval ten times slower).
        sequence = _sequence_of(cursor, table)
        cursor.execute(
            "SELECT string_agg(nextval(%s::regclass)::text, ',') FROM generate_series(1, %s)", [sequence, count]
        )
        return [int(i) for i in cursor.fetchone()[0].split(",")]
    cursor.execute(f"SELECT COALESCE(MAX(id), 0) FROM {table}")
    start = int(cursor.fetchone()[0]) + 1
    return list(range(start, start + count))


def _copy(cursor: Any, table: str, columns: str, rows: list[tuple[Any, ...]]) -> None:
    """COPY rows through the psycopg 3 cursor under Django's cursor, with
    Django's error translation (a unique violation is an ``IntegrityError``)."""
    with (
        connection.wrap_database_errors,
        getattr(cursor, "cursor", cursor).copy(f"COPY {table} ({columns}) FROM STDIN") as copy,
    ):
        for row in rows:
            copy.write_row(row)


def _copy_text(cursor: Any, table: str, columns: str, lines: Iterable[str]) -> None:
    """COPY rows already in PostgreSQL's text format (one ``"\\t"``-joined,
    ``"\\n"``-ended line per row, values escaped with ``_copy_escape``), sent in
    chunks as they are made, so the server stores one chunk while Python formats
    the next; ``write_row`` adapted value by value in Python, most of a
    settlement's client time. Django's error translation as in ``_copy``."""
    with (
        connection.wrap_database_errors,
        getattr(cursor, "cursor", cursor).copy(f"COPY {table} ({columns}) FROM STDIN") as copy,
    ):
        chunk: list[str] = []
        for line in lines:
            chunk.append(line)
            if len(chunk) == _COPY_CHUNK:
                copy.write("".join(chunk))
                chunk.clear()
        if chunk:
            copy.write("".join(chunk))


_COPY_CHUNK = 2000  # rows per write: large enough to amortise the call, small enough to overlap


_NULL = "\\N"  # COPY's text format for NULL


def _copy_escape(text: str) -> str:
    """A text value for COPY's text format: backslash, tab, newline and carriage
    return escaped (JSON text holds no raw control characters, only backslashes)."""
    if "\\" in text:
        text = text.replace("\\", "\\\\")
    if "\t" in text or "\n" in text or "\r" in text:
        text = text.replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    return text


def _insert_events(cursor: Any, prepared: list[PreparedEvent], ids: list[int]) -> None:
    """Write the events under their reserved ids (``StaleStreamVersion`` if
    another writer took one of their versions meanwhile)."""
    if not prepared:
        return
    columns = "id, stream_id, version, type, schema_version, data, metadata, recorded_at, prev_hash, hash, mac"
    rows = [
        (
            i,
            p.stream_id,
            p.version,
            p.type,
            p.schema_version,
            p.data_json,
            p.metadata_json,
            p.recorded_at,
            p.prev_hash,
            p.hash,
            p.mac,
        )
        for i, p in zip(ids, prepared, strict=True)
    ]
    try:
        if connection.vendor == "postgresql":
            esc = _copy_escape
            lines = (
                f"{i}\t{esc(stream)}\t{version}\t{esc(kind)}\t{schema}\t{esc(data)}\t{esc(meta)}\t"
                f"{recorded.isoformat()}\t{prev}\t{digest}\t{mac}\n"
                for i, stream, version, kind, schema, data, meta, recorded, prev, digest, mac in rows
            )
            _copy_text(cursor, "ledger_event", columns, lines)
        else:
            txid, adapt = sqlite_txid(cursor), connection.ops.adapt_datetimefield_value
            cursor.executemany(
                f"INSERT INTO ledger_event ({columns}, txid) VALUES ({', '.join(['%s'] * 12)})",
                [(*row[:7], adapt(row[7]), *row[8:], txid) for row in rows],
            )
    except IntegrityError as exc:
        raise StaleStreamVersion("another writer appended to a stream of this batch") from exc


def _send_hold_resolutions(cursor: Any, holds: list[tuple[UUID, int, int]], texts: list[str]) -> list[Leg] | None:
    """Start resolving the holds: PostgreSQL sends one guarded UPDATE (rows
    fetched by ``_collect_hold_resolutions``); SQLite resolves them here."""
    if not holds:
        return []
    if connection.vendor != "postgresql":
        legs: list[Leg] = []
        for hold_id, amount, event_id in holds:
            legs += resolve_hold(cursor, hold_id=hold_id, post_amount=amount, event_id=event_id)
        return legs
    cursor.execute(
        "UPDATE ledger_hold h SET status = CASE WHEN v.amount > 0 THEN 'posted' ELSE 'voided' END, "
        "posted_amount = v.amount, resolved_event_id = v.event_id "
        "FROM unnest(%s::text::uuid[], %s::text::bigint[], %s::text::bigint[]) AS v(id, amount, event_id) "
        "WHERE h.id = v.id AND h.status = 'pending' AND h.amount >= v.amount "
        "RETURNING h.id::text, h.source_id, h.escrow_id, h.destination_id, h.amount, h.currency, v.amount, v.event_id",
        [text_array(texts), text_array(h[1] for h in holds), text_array(h[2] for h in holds)],
    )
    return None


def _collect_hold_resolutions(
    cursor: Any, holds: list[tuple[UUID, int, int]], texts: list[str], sent: list[Leg] | None
) -> list[Leg]:
    """The legs that move the escrowed money of the resolved holds; raises
    the reason (unknown, already resolved, post exceeds) if any was refused."""
    if sent is not None:
        return sent
    rows = cursor.fetchall()
    by_text = dict(zip(texts, (h[0] for h in holds), strict=True))
    if len(rows) != len(holds):
        done = {by_text[row[0]] for row in rows}
        missing = next(h for h in holds if h[0] not in done)
        resolve_hold(cursor, hold_id=missing[0], post_amount=missing[1], event_id=missing[2])  # raises the reason
    legs = []
    for hold_text, source, escrow, destination, amount, currency, post, event_id in rows:
        hold = by_text[hold_text]
        if post:
            legs.append(Leg(escrow, destination, post, currency, "post", event_id, hold))
        if amount - post:
            legs.append(Leg(escrow, source, amount - post, currency, "release" if post else "void", event_id, hold))
    return legs


def _insert_holds(cursor: Any, opened: list[tuple[HoldOpening, int]], currency: str) -> None:
    """Write new pending holds; each destination must exist in ``currency``
    (checked by reading, not locking, those rows)."""
    if not opened:
        return
    destinations = sorted({h.destination for h, _ in opened})
    for start in range(0, len(destinations), 500):
        chunk = destinations[start : start + 500]
        cursor.execute(
            "SELECT id FROM ledger_account WHERE currency = %s AND id IN (" + ", ".join(["%s"] * len(chunk)) + ")",
            [currency, *chunk],
        )
        found = {int(row[0]) for row in cursor.fetchall()}
        for destination in chunk:
            if destination not in found:
                check_account(cursor, destination, currency)  # raises the reason
    columns = "id, source_id, escrow_id, destination_id, amount, currency, status, opened_event_id"
    rows = [
        (uuid_param(h.hold_id), h.source, h.escrow, h.destination, h.amount, currency, "pending", event_id)
        for h, event_id in opened
    ]
    try:
        if connection.vendor == "postgresql":
            _copy(cursor, "ledger_hold", columns, rows)
        else:
            cursor.executemany(f"INSERT INTO ledger_hold ({columns}) VALUES ({', '.join(['%s'] * 8)})", rows)
    except IntegrityError as exc:
        raise HoldAlreadyResolved("a hold of this batch already exists", code="hold_exists") from exc


def _insert_legs(cursor: Any, legs: list[Leg], balances: dict[int, int], at: datetime) -> None:
    if not legs:
        return
    ids = _reserve_ids(cursor, "ledger_transfer", len(legs))
    transfer_rows = [
        (i, leg.debit, leg.credit, leg.amount, leg.currency, leg.kind, leg.hold_id, leg.event_id, at)
        for i, leg in zip(ids, legs, strict=True)
    ]
    line_rows = [(*row, at) for row in statement_rows(legs, ids, balances)]
    transfer_columns = "id, debit_account_id, credit_account_id, amount, currency, kind, hold_id, event_id, created_at"
    line_columns = "account_id, transfer_id, event_id, amount, balance_after, created_at"
    if connection.vendor == "postgresql":
        stamp = at.isoformat()
        _copy_text(cursor, "ledger_transfer", transfer_columns, (
            f"{i}\t{debit}\t{credit}\t{amount}\t{cur}\t{_copy_escape(kind)}\t{hold or _NULL}\t{event}\t{stamp}\n"
            for i, debit, credit, amount, cur, kind, hold, event, _ in transfer_rows
        ))  # fmt: skip
        _copy_text(cursor, "ledger_statement_line", line_columns, (
            f"{account}\t{transfer}\t{event}\t{amount}\t{balance}\t{stamp}\n"
            for account, transfer, event, amount, balance, _ in line_rows
        ))  # fmt: skip
        return
    adapt = connection.ops.adapt_datetimefield_value
    cursor.executemany(
        f"INSERT INTO ledger_transfer ({transfer_columns}) VALUES ({', '.join(['%s'] * 9)})",
        [(*row[:6], row[6].hex if row[6] else None, row[7], adapt(at)) for row in transfer_rows],
    )
    cursor.executemany(
        f"INSERT INTO ledger_statement_line ({line_columns}) VALUES (%s, %s, %s, %s, %s, %s)",
        [(*row[:5], adapt(at)) for row in line_rows],
    )
