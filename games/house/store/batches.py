"""The lean command path for a batch of player commands at one table
(``games.house.services.group``): ``games.house.store.commands`` for many
commands of distinct players, still one round trip to read them all and one
to write them all on PostgreSQL (``saving_commands_and_ledger``: the saves and
the ledger's rows together; ``saving_commands``: the saves beside a ledger batch).

Contracts, inside the batch's one transaction: ``read_commands`` claims every
key, share-locks the round and locks each command's player row ``FOR UPDATE``
(the single path's locks, in the commands' order); the claims of the commands
the caller refuses stay held until ``saving_commands`` releases them, the
batch's last write. ``ticks_and_waiting`` and ``seats_and_bettors`` read under
those locks (the seat rows they name locked until the transaction ends).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from django.db import IntegrityError, connection

from casino.errors import DomainError
from casino.responsible_gaming import ROW_COLUMNS as RG_COLUMNS
from casino.responsible_gaming import ROW_TABLE as RG_TABLE
from games.house.models import HouseRound, HouseTable, PlayerRound, TableSeat
from games.house.round.state import PlayerState
from games.house.store.cache import known_player
from games.house.store.commands import CommandContext, context_of, read_command
from games.house.store.rows import save_rows, state_text
from games.house.store.streams import iso
from ledger.errors import IdempotencyKeyReused
from ledger.services.batch import BatchResult
from ledger.services.events import now as ledger_now
from ledger.services.postings import (
    MAX_KEY,
    allow_explicit_prepare,
    bulk_cursor,
    pipelined,
    record_result,
    request_hash,
)
from ledger.services.small import SmallWrites
from ledger.services.small_holds import integrity_error


@dataclass(frozen=True)
class CommandRead:
    """One command of a batch as ``read_commands`` found it: a retry
    (``retry``, its ``first`` result), a refusal before anything was claimed
    (``error``: a reused or invalid key), or the command's ``context``
    (``None``: the table has no round) and whether the player holds a seat."""

    retry: bool = False
    first: Any = None
    error: DomainError | None = None
    context: CommandContext | None = None
    seated: bool = False


@dataclass(frozen=True)
class CommandRequest:
    """What ``read_commands`` needs of one command: the same command name and
    request body as the single path (``read_command``), so a retry is
    recognised whichever path answered first."""

    command: str
    player_id: int
    key: str
    request: Mapping[str, Any]


# ``commands._PG_CONTEXT`` for many commands at one table, still one round trip: the
# commands travel as arrays, every key is claimed (in the commands' order), the
# round is share-locked and each command's player row locked (the commands of
# one batch belong to distinct players, see ``services.group``).
_PG_CONTEXTS = f"""
WITH c AS (
    SELECT * FROM unnest(%(idx)s::int[], %(player)s::bigint[], %(key)s::text[], %(command)s::text[],
                         %(digest)s::text[], %(known_round)s::text[], %(known_version)s::int[],
                         %(known_incarnation)s::timestamptz[])
        AS c(idx, player, key, command, digest, known_round, known_version, known_incarnation)
), idem AS (
    INSERT INTO ledger_idempotency (key, command, request_hash, result, created_at)
    SELECT key, command, digest, NULL, %(at)s::timestamptz FROM c WHERE key IS NOT NULL ORDER BY idx
    ON CONFLICT (key) DO NOTHING RETURNING key
)
SELECT c.idx, c.key IS NULL OR c.key IN (SELECT key FROM idem),
       r.id, r.round_id, r.stream_version, r.currency, r.game, r.game_number,
       EXISTS (SELECT 1 FROM games_tableseat s WHERE s.table_id = t.id AND s.player_id = c.player),
       p.id, CASE WHEN r.round_id = c.known_round AND p.stream_version = c.known_version
                       AND pg_postmaster_start_time() = c.known_incarnation
                  THEN NULL ELSE p.state END,
       p.stream_version, p.created_at, w.id, w.balance, h.id, hs.id,
       e.hash, rg.user_id IS NOT NULL, {", ".join(f"rg.{c}" for c in RG_COLUMNS)}, pg_postmaster_start_time()
FROM c
JOIN games_housetable t ON t.id = %(table)s::bigint
JOIN games_houseround r ON r.table_id = t.id AND r.round_id = t.current_round_id
LEFT JOIN LATERAL (
    SELECT id, state, stream_version, created_at FROM games_playerround
    WHERE round_id = r.id AND player_id = c.player FOR UPDATE
) p ON true
LEFT JOIN ledger_account w ON w.key = 'wallet:player:' || c.player::text || ':' || r.currency
LEFT JOIN ledger_account h ON h.key = 'held:player:' || c.player::text || ':' || r.currency
LEFT JOIN ledger_account hs ON hs.key = 'house:table:' || t.id::text || ':' || r.currency
LEFT JOIN ledger_event e ON e.stream_id = 'round-' || r.round_id || '-player-' || c.player::text
                        AND e.version = p.stream_version
LEFT JOIN {RG_TABLE} rg ON rg.user_id = c.player
ORDER BY c.idx
FOR SHARE OF r
"""


def read_commands(*, table_id: int, requests: Sequence[CommandRequest], now: datetime) -> list[CommandRead]:
    """``read_command`` for many commands of distinct players at one table, in
    the requests' order: on PostgreSQL one round trip claims every key and reads
    every context (plus one to look up the first results of retried keys). A
    claimed key stays claimed until the transaction ends: the caller releases
    the keys of the commands it refuses (``saving_commands``). Accounts not yet
    opened are not opened here (a refused command must leave none behind): their
    ids are 0 in the context's ``Accounts`` (balance 0 without a wallet), and
    the caller opens them for a command it accepts (``accounts_of``).
    Elsewhere: ``read_command`` one by one."""
    if connection.vendor != "postgresql":
        portable: list[CommandRead] = []
        for r in requests:
            try:
                retry, first, context, seated = read_command(command=r.command, table_id=table_id,
                                                             player_id=r.player_id, key=r.key,
                                                             request=dict(r.request), now=now)  # fmt: skip
            except DomainError as refusal:
                portable.append(CommandRead(error=refusal))
                continue
            portable.append(CommandRead(retry=retry, first=first, context=context, seated=seated))
        return portable
    digests = [request_hash(r.command, {"table": table_id, "player": r.player_id, **r.request}) for r in requests]
    errors: dict[int, DomainError] = {}
    for i, r in enumerate(requests):
        if not r.key or len(r.key) > MAX_KEY:
            # ``claim``'s refusal, before the statement (which would fail on the column's length).
            errors[i] = IdempotencyKeyReused(f"idempotency key must be 1..{MAX_KEY} characters",
                                             code="invalid_idempotency_key")  # fmt: skip
    asked = [i for i in range(len(requests)) if i not in errors]
    knowns = [known_player(table_id, requests[i].player_id) for i in asked]
    known_of = dict(zip(asked, knowns, strict=True))
    params: dict[str, Any] = {
        "idx": asked, "player": [requests[i].player_id for i in asked], "key": [requests[i].key for i in asked],
        "command": [requests[i].command for i in asked], "digest": [digests[i] for i in asked],
        "known_round": [k.round_id if k else None for k in knowns],
        "known_version": [k.version if k else None for k in knowns],
        "known_incarnation": [k.incarnation if k else None for k in knowns],
        "at": ledger_now(), "table": table_id,
    }  # fmt: skip
    with bulk_cursor() as cursor:
        with pipelined():
            # The transaction's BEGIN travels with the query: one round trip.
            cursor.execute(_PG_CONTEXTS, params, prepare=True)
        found = {int(row[0]): row for row in cursor.fetchall()}
        claimed = {idx: bool(row[1]) for idx, row in found.items()}
        unclaimed = [requests[i].key for i in asked if i in found and not claimed[i]]
        firsts: dict[str, tuple[str, str, Any]] = {}
        if unclaimed:
            cursor.execute("SELECT key, command, request_hash, result FROM ledger_idempotency WHERE key = ANY(%s)",
                           [unclaimed])  # fmt: skip
            firsts = {key: (command, digest, result) for key, command, digest, result in cursor.fetchall()}
    reads: list[CommandRead] = []
    round_row: HouseRound | None = None
    for i, r in enumerate(requests):
        if i in errors:
            reads.append(CommandRead(error=errors[i]))
        elif i not in found:
            reads.append(CommandRead())  # no round at the table (the key's claim is released by the caller)
        elif not claimed[i]:
            command, digest, result = firsts[r.key]
            if (command, digest) != (r.command, digests[i]):
                error = IdempotencyKeyReused(f"idempotency key {r.key!r} was used for another {command} request",
                                             key=r.key, command=command)  # fmt: skip
                reads.append(CommandRead(error=error))
            else:
                reads.append(CommandRead(retry=True, first=json.loads(result) if isinstance(result, str) else result))
        else:
            row = found[i]
            context = context_of(row[2:], table_id, r.player_id, now, known_of[i], round_row)
            round_row = context.round_row
            reads.append(CommandRead(context=context, seated=bool(row[8])))
    return reads


# The write side's last round trip for a batch: every changed player's
# projection row, every accepted command's result under its key, and the
# claims of the refused commands released (their keys stay usable, as a
# refused single command's rolled-back claim does).
_SAVE_PARTS = [
    """pr AS (
    INSERT INTO games_playerround (round_id, table_id, player_id, game_number, game, currency, stream_version, state,
                                   totals, staked, returned, net, status, last_street, done_deciding, created_at)
    SELECT v.round, v.table_id, v.player, v.number, v.game, v.currency, v.version, v.state, v.totals, v.staked, 0, 0,
           'betting', v.street, v.done, v.created
    FROM jsonb_to_recordset(%s::jsonb) AS v(round bigint, table_id bigint, player bigint, number text,
         game text, currency text, version int, state jsonb, totals jsonb, staked bigint, street text, done bool,
         created timestamptz)
    ON CONFLICT ON CONSTRAINT one_player_round DO UPDATE SET
        stream_version = EXCLUDED.stream_version, state = EXCLUDED.state, totals = EXCLUDED.totals,
        staked = EXCLUDED.staked, last_street = EXCLUDED.last_street, done_deciding = EXCLUDED.done_deciding
    RETURNING 1
)""",
    """res AS (
    UPDATE ledger_idempotency i SET result = v.result
    FROM jsonb_to_recordset(%s::jsonb) AS v(key text, result jsonb) WHERE i.key = v.key
    RETURNING 1
)""",
    "gone AS (DELETE FROM ledger_idempotency WHERE key = ANY(%s::text[]) AND result IS NULL RETURNING 1)",
]
_SAVE_COUNTS = ["(SELECT count(*) FROM pr)", "(SELECT count(*) FROM res)", "(SELECT count(*) FROM gone)"]
_PG_SAVE_MANY = f"WITH {', '.join(_SAVE_PARTS)} SELECT {', '.join(_SAVE_COUNTS)}"


@contextmanager
def saving_commands(
    *,
    rows: Sequence[tuple[PlayerRound, PlayerState]],
    results: Sequence[tuple[str, dict[str, Any]]],
    released: Sequence[str],
    now: datetime,
) -> Iterator[None]:
    """A batch's last write (``save_player`` for many): each ``(row, new state)``
    saved (the row as ``PlayerRoundProjector.fold`` projected it), each ``(key, result)`` stored, and the claims of
    ``released`` keys (refused commands) removed. One statement on PostgreSQL,
    sent in pipeline mode when the block starts: the server runs it while the
    block runs (which must not query), and its counts are checked when the
    block ends (same transaction: a later refusal rolls it back). Elsewhere the
    single path's statements, before the block (a refused command there rolled
    back its own savepoint, claim included)."""
    if connection.vendor != "postgresql":
        for row, _ in rows:
            if row.pk is None:
                row.save()
            save_rows([row])
        with connection.cursor() as cursor:
            for key, result in results:
                record_result(cursor, key=key, result=result)
            for key in released:
                cursor.execute("DELETE FROM ledger_idempotency WHERE key = %s AND result IS NULL", [key])
        yield
        return
    params = _save_params(rows, results, released, now)
    with pipelined(), bulk_cursor() as cursor:
        cursor.execute(_PG_SAVE_MANY, params, prepare=True)
        yield
        counts = cursor.fetchone()
    _check_saved(counts, rows, results)


def saving_commands_and_ledger(
    *,
    rows: Sequence[tuple[PlayerRound, PlayerState]],
    results: Sequence[tuple[str, dict[str, Any]]],
    released: Sequence[str],
    now: datetime,
    ledger: SmallWrites,
) -> BatchResult:
    """``saving_commands`` and the batch's ledger writes (``ledger``: the ``WITH``
    parts of ``ledger.services.small_holds.hold_batch_writes``) as ONE statement
    of data-modifying ``WITH`` parts (PostgreSQL only), prepared once per shape
    and sent through psycopg's raw cursor (``$n`` placeholders: a statement of
    more than 50 parameters is otherwise parsed again by psycopg on every call).
    The ledger's result; raises what ``settle_prepared`` raises for a refused
    row (an overdraft, a destination missing, a hold id taken, a stream moved
    on: ``StaleStreamVersion``): the caller's transaction then rolls back whole."""
    parts, ledger_params, selects = ledger.parts("l")
    key = tuple(parts)  # the parts are cached strings, their hashes too
    raw = _RAW_SAVES.get(key)
    if raw is None:
        pieces = f"WITH {', '.join([*_SAVE_PARTS, *parts])} SELECT {', '.join([*_SAVE_COUNTS, *selects])}".split("%s")
        raw = pieces[0] + "".join(f"${n}{piece}" for n, piece in enumerate(pieces[1:], start=1))
        if len(_RAW_SAVES) < 1024:
            _RAW_SAVES[key] = raw
    params = [*_save_params(rows, results, released, now), *ledger_params]
    connection.ensure_connection()
    allow_explicit_prepare(connection.connection)
    try:
        with connection.wrap_database_errors, psycopg.RawCursor(connection.connection) as cursor:
            cursor.execute(raw, params, prepare=True)
            row = cursor.fetchone()
    except IntegrityError as exc:
        error = integrity_error(exc)
        if error is None:
            raise
        raise error from exc
    assert row is not None
    _check_saved(row[:3], rows, results)
    return ledger.finish_row(row[3:])


_RAW_SAVES: dict[tuple[str, ...], str] = {}  # the ledger parts -> the whole statement with $n placeholders


def _save_params(
    rows: Sequence[tuple[PlayerRound, PlayerState]],
    results: Sequence[tuple[str, dict[str, Any]]],
    released: Sequence[str],
    now: datetime,
) -> list[Any]:
    """The parameters of ``_SAVE_PARTS``, in order."""
    document = []
    for row, state in rows:
        # The row's ``state`` is ``state_to_json(state)`` (the fold projected it
        # from ``state``): written as ``state_text``, its chips' text kept by the
        # state, so a player's many chips are not all encoded again per command.
        fields = json.dumps({
            "round": row.round_id, "table_id": row.table_id, "player": row.player_id, "number": row.game_number,
            "game": row.game, "currency": row.currency, "version": row.stream_version,
            "totals": row.totals, "staked": row.staked, "street": row.last_street, "done": row.done_deciding,
            "created": row.created_at.isoformat() if row.created_at else iso(now),
        })  # fmt: skip
        document.append(f'{fields[:-1]},"state":{state_text(state)}}}')
    return [
        "[" + ",".join(document) + "]",
        json.dumps([{"key": key, "result": result} for key, result in results]),
        list(released),
    ]


def _check_saved(counts: Any, rows: Sequence[Any], results: Sequence[Any]) -> None:
    saved, stored, _ = counts
    if (saved, stored) != (len(rows), len(results)):
        raise RuntimeError(f"a batch saved {saved}/{len(rows)} rows and {stored}/{len(results)} results")


# ``commands._PG_TICK_AND_WAITING`` for many decisions: each decision's street and the
# players not to count (its own and those of the batch's earlier decisions,
# whose rows are written after this read).
_PG_TICKS_AND_WAITING = """
SELECT d.idx, t.current_round_id, t.phase, t.phase_seq, t.deadline,
       EXISTS (SELECT 1 FROM games_playerround p WHERE p.round_id = %(round)s AND p.staked > 0
               AND NOT p.done_deciding AND p.last_street < d.street
               AND p.player_id <> ALL(string_to_array(d.excluded, ',')::bigint[]))
       OR EXISTS (SELECT 1 FROM games_playerround p WHERE p.round_id = %(round)s AND p.staked > 0
               AND NOT p.done_deciding AND p.last_street > d.street
               AND p.player_id <> ALL(string_to_array(d.excluded, ',')::bigint[]))
FROM jsonb_to_recordset(%(decisions)s::jsonb) AS d(idx int, street text, excluded text)
CROSS JOIN games_housetable t WHERE t.id = %(table)s
"""


def ticks_and_waiting(
    *, table_id: int, round_row: HouseRound, decisions: Sequence[tuple[str, Sequence[int]]]
) -> list[tuple[tuple[str, str, int, datetime | None], bool]]:
    """``tick_and_waiting`` for several decisions in one query: for each
    ``(street, players not to count)``, the table's tick and whether anyone
    else still has to decide on that street."""
    if connection.vendor != "postgresql":
        answers = []
        for street, excluded in decisions:
            waiting = (
                PlayerRound.objects.filter(round=round_row, staked__gt=0, done_deciding=False)
                .exclude(last_street=street)
                .exclude(player_id__in=list(excluded))
                .exists()
            )
            table = HouseTable.objects.get(pk=table_id)
            answers.append(((table.current_round_id, table.phase, table.phase_seq, table.deadline), waiting))
        return answers
    document = json.dumps(
        [{"idx": i, "street": street, "excluded": ",".join(map(str, excluded))} for i, (street, excluded) in
         enumerate(decisions)]
    )  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(_PG_TICKS_AND_WAITING, {"round": round_row.pk, "decisions": document, "table": table_id})
        found = {int(row[0]): row[1:] for row in cursor.fetchall()}
    return [((found[i][0], found[i][1], found[i][2], found[i][3]), bool(found[i][4])) for i in range(len(decisions))]


def seats_and_bettors(*, table_id: int, round_row: HouseRound, player_ids: Sequence[int]) -> tuple[set[int], set[int]]:
    """``seat_and_bettors`` for a batch: which of ``player_ids`` still hold a
    seat (those seat rows locked until the transaction ends, as the single
    path locks its one) and which players hold bets in the round."""
    seated = set(
        TableSeat.objects.select_for_update(no_key=True)
        .filter(table_id=table_id, player_id__in=list(player_ids))
        .values_list("player_id", flat=True)
    )
    bettors = set(PlayerRound.objects.filter(round_id=round_row.pk, staked__gt=0).values_list("player_id", flat=True))
    return seated, bettors
