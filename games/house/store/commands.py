"""The lean command path: a player's bet or decision at a house table, read in
one round trip and written in one (PostgreSQL; SQLite runs the same steps in
several statements), with the prepared SQL that reads and writes the round's
and the player's rows.

Contracts, all inside the command's one transaction (``transaction.atomic``
in ``games.house.services.bets``): ``read_command`` claims the idempotency key,
share-locks the current round (``FOR SHARE``: bettors never block each other,
the dealer's close waits) and locks the player's own row ``FOR UPDATE``; every
other function here assumes those locks are held, and ``save_player`` is the
command's last write. ``lock_leaving_player`` takes the same locks in the same
order for a player leaving the table. A batch of commands
(``games.house.store.batches``) shares the context and the locks' order.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from django.db import connection

from casino.responsible_gaming import ROW_COLUMNS as RG_COLUMNS
from casino.responsible_gaming import ROW_TABLE as RG_TABLE
from casino.responsible_gaming import UNREAD_SETTINGS, settings_row
from games.house.models import HouseRound, HouseTable, PlayerRound, TableSeat
from games.house.round.state import PlayerState, RoundState
from games.house.store.cache import KnownPlayer, known_player, load_round_at
from games.house.store.rows import save_rows, state_from_json, state_text
from ledger.services import house_account, player_accounts
from ledger.services.events import now as ledger_now
from ledger.services.money import account_key
from ledger.services.postings import (
    allow_explicit_prepare,
    bulk_cursor,
    claim,
    pipelined,
    record_result,
    request_hash,
)


@dataclass
class CommandContext:
    """Everything a player command reads before the domain decides (``read_command``)."""

    round_row: HouseRound
    state: RoundState
    row: PlayerRound
    accounts: Accounts
    # The player stream's head hash (at ``row.stream_version``) and the
    # responsible-gaming settings, when the context query read them already.
    head_hash: str | None = None
    settings: Any = UNREAD_SETTINGS
    # The player's state at ``row.stream_version`` when this process had it
    # (``cache.known_player``): ``row.state`` was then not read.
    player: PlayerState | None = None
    # The database server's start time (``cache.KnownPlayer.incarnation``); None on SQLite.
    incarnation: object = None

    def player_state(self, player_id: int) -> PlayerState:
        return self.player if self.player is not None else state_from_json(player_id, self.row.state)


@dataclass(frozen=True)
class Accounts:
    wallet: int
    held: int
    house: int
    balance: int


def _account_keys(player_id: int, table_id: int, currency: str) -> list[str]:
    return [
        account_key("wallet", f"player:{player_id}", currency),
        account_key("held", f"player:{player_id}", currency),
        account_key("house", f"table:{table_id}", currency),
    ]


def _open_accounts(player_id: int, table_id: int, currency: str) -> None:
    player_accounts(player_id=player_id, currency=currency)
    house_account(table_id=table_id, currency=currency)


def _new_row(round_row: HouseRound, table_id: int, player_id: int, now: datetime) -> PlayerRound:
    return PlayerRound(
        round=round_row,
        table_id=table_id,
        player_id=player_id,
        game_number=round_row.game_number,
        game=round_row.game,
        currency=round_row.currency,
        created_at=now,
    )


# PostgreSQL: the whole read side of a player command in one round trip. The
# idempotency key is claimed first (a data-modifying CTE runs whatever the rest
# finds; a refusal rolls it back), the round is share-locked through its table
# (bettors never block each other; the dealer's close waits), the player's own
# row is locked, and the seat and the three accounts come along.
_PG_CONTEXT = f"""
WITH idem AS (
    INSERT INTO ledger_idempotency (key, command, request_hash, result, created_at)
    SELECT %(key)s::text, %(command)s::text, %(digest)s::text, NULL, %(at)s::timestamptz
    WHERE %(key)s::text IS NOT NULL
    ON CONFLICT (key) DO NOTHING RETURNING 1
)
SELECT (SELECT count(*) FROM idem) + (%(key)s::text IS NULL)::int,
       r.id, r.round_id, r.stream_version, r.currency, r.game, r.game_number,
       EXISTS (SELECT 1 FROM games_tableseat s WHERE s.table_id = t.id AND s.player_id = %(player)s::bigint),
       p.id, CASE WHEN r.round_id = %(known_round)s::text AND p.stream_version = %(known_version)s::int
                       AND pg_postmaster_start_time() = %(known_incarnation)s::timestamptz
                  THEN NULL ELSE p.state END,
       p.stream_version, p.created_at, w.id, w.balance, h.id, hs.id,
       e.hash, rg.user_id IS NOT NULL, {", ".join(f"rg.{c}" for c in RG_COLUMNS)}, pg_postmaster_start_time()
FROM games_housetable t
JOIN games_houseround r ON r.table_id = t.id AND r.round_id = t.current_round_id
LEFT JOIN LATERAL (
    SELECT id, state, stream_version, created_at FROM games_playerround
    WHERE round_id = r.id AND player_id = %(player)s::bigint FOR UPDATE
) p ON true
LEFT JOIN ledger_account w ON w.key = 'wallet:player:' || %(player)s::bigint::text || ':' || r.currency
LEFT JOIN ledger_account h ON h.key = 'held:player:' || %(player)s::bigint::text || ':' || r.currency
LEFT JOIN ledger_account hs ON hs.key = 'house:table:' || t.id::text || ':' || r.currency
-- store.player_stream's id: the head the player's next events chain onto
LEFT JOIN ledger_event e ON e.stream_id = 'round-' || r.round_id || '-player-' || %(player)s::bigint::text
                        AND e.version = p.stream_version
LEFT JOIN {RG_TABLE} rg ON rg.user_id = %(player)s::bigint
WHERE t.id = %(table)s::bigint
FOR SHARE OF r
"""


def _pg_context(
    *, command: str, table_id: int, player_id: int, key: str, digest: str, now: datetime
) -> tuple[bool, CommandContext | None, bool]:
    """(claimed, context or ``None`` when the table has no round, seated)."""
    known = known_player(table_id, player_id)
    params: dict[str, Any] = {"key": key, "command": command, "digest": digest, "at": ledger_now(), "player": player_id,
              "table": table_id, "known_round": known.round_id if known else None,
              "known_version": known.version if known else None,
              "known_incarnation": known.incarnation if known else None}  # fmt: skip
    with bulk_cursor() as cursor:
        for _ in range(2):
            # Prepared once per connection: parsing and planning the joins cost
            # PostgreSQL more than running them.
            with pipelined():
                # The transaction's BEGIN travels with the query: one round trip.
                cursor.execute(_PG_CONTEXT, params, prepare=True)
            found = cursor.fetchone()
            if found is None:
                return True, None, False
            claimed, seated = found[0], found[7]
            wallet, held, house = found[12], found[14], found[15]
            if not claimed:
                return False, None, bool(seated)
            if wallet is not None and held is not None and house is not None:
                break
            # First bet of this player (or table) in this currency: open the
            # accounts, then read again (the claim is ours already).
            _open_accounts(player_id, table_id, found[4])
            params["key"] = None  # ON CONFLICT cannot fire on NULL: re-reading claims nothing
    context = context_of(found[1:], table_id, player_id, now, known)
    return True, context, bool(seated)


def _accounts(player_id: int, table_id: int, currency: str) -> Accounts:
    """Wallet, held and house account ids and the wallet balance in one query
    (opened first when missing)."""
    keys = _account_keys(player_id, table_id, currency)
    with connection.cursor() as cursor:
        cursor.execute("SELECT key, id, balance FROM ledger_account WHERE key IN (%s, %s, %s)", keys)
        found = {key: (int(account), int(balance)) for key, account, balance in cursor.fetchall()}
    if len(found) < 3:
        _open_accounts(player_id, table_id, currency)
        return _accounts(player_id, table_id, currency)
    return Accounts(found[keys[0]][0], found[keys[1]][0], found[keys[2]][0], found[keys[0]][1])


def accounts_of(*, player_id: int, table_id: int, currency: str) -> Accounts:
    """The player's wallet and held accounts and the table's house account in
    ``currency``, opened when missing, with the wallet's balance."""
    return _accounts(player_id, table_id, currency)


def _claim_lookup(key: str, command: str, digest: str) -> Any:
    """The first result stored under ``key`` (``IdempotencyKeyReused`` for another request)."""
    with connection.cursor() as cursor:
        return claim(cursor, key=key, command=command, digest=digest, at=ledger_now())


def read_command(
    *, command: str, table_id: int, player_id: int, key: str, request: dict[str, Any], now: datetime
) -> tuple[bool, Any, CommandContext | None, bool]:
    """Claim ``key`` and read a player command's context, in one round trip on
    PostgreSQL: ``(retry, first result, context, seated)``. A retry of the key
    gives ``(True, first result, None, ...)``; otherwise ``context`` is ``None``
    when the table has no round. The caller refuses (no round, no seat)."""
    digest = request_hash(command, {"table": table_id, "player": player_id, **request})
    if connection.vendor == "postgresql":
        claimed, context, has_seat = _pg_context(
            command=command, table_id=table_id, player_id=player_id, key=key, digest=digest, now=now
        )
        if not claimed:
            return True, _claim_lookup(key, command, digest), None, has_seat
        return False, None, context, has_seat
    first = _claim_lookup(key, command, digest)
    if first is not None:
        return True, first, None, False
    context = _portable_context(table_id, player_id, now)
    has_seat = TableSeat.objects.filter(table_id=table_id, player_id=player_id).exists()
    return False, None, context, has_seat


def _current_round(table_id: int) -> HouseRound | None:
    """The table's current round row (no lock), ``None`` without one."""
    found = list(
        HouseRound.objects.raw(
            "SELECT r.* FROM games_houseround r JOIN games_housetable t "
            "ON t.id = r.table_id AND t.current_round_id = r.round_id WHERE t.id = %s",
            [table_id],
        )
    )
    return found[0] if found else None


def _portable_context(table_id: int, player_id: int, now: datetime) -> CommandContext | None:
    """``_pg_context`` in several statements, for SQLite (the embedded default)."""
    round_row = _current_round(table_id)
    if round_row is None:
        return None
    row = PlayerRound.objects.select_for_update().filter(round=round_row, player_id=player_id).first()
    return CommandContext(
        round_row,
        load_round_at(round_row.round_id, round_row.stream_version),
        row or _new_row(round_row, table_id, player_id, now),
        _accounts(player_id, table_id, round_row.currency),
    )


# The write side's last round trip on PostgreSQL: the player's projection row
# (inserted with the first chip) and the command's result under its key.
_PG_PLAYER_ROW = """
    INSERT INTO games_playerround (round_id, table_id, player_id, game_number, game, currency, stream_version, state,
                                   totals, staked, returned, net, status, last_street, done_deciding, created_at)
    VALUES (%(round)s::bigint, %(table)s::bigint, %(player)s::bigint, %(number)s::text, %(game)s::text,
            %(currency)s::text, %(version)s::int, %(state)s::jsonb, %(totals)s::jsonb, %(staked)s::bigint, 0, 0,
            'betting', %(street)s::text, %(done)s::bool, %(created)s::timestamptz)
    ON CONFLICT ON CONSTRAINT one_player_round DO UPDATE SET
        stream_version = EXCLUDED.stream_version, state = EXCLUDED.state, totals = EXCLUDED.totals,
        staked = EXCLUDED.staked, last_street = EXCLUDED.last_street, done_deciding = EXCLUDED.done_deciding
    RETURNING 1
"""
_PG_SAVE = f"""
WITH pr AS ({_PG_PLAYER_ROW})
UPDATE ledger_idempotency SET result = %(result)s::jsonb WHERE key = %(key)s::text AND (SELECT count(*) FROM pr) = 1
"""


def _save_params(row: PlayerRound, player: PlayerState, key: str, result: dict[str, Any]) -> dict[str, Any]:
    """The save's parameters; the row's ``state`` (``state_to_json(player)``, as
    the fold projected it) written as ``state_text``: the chips' text kept by ``player``."""
    return {
        "round": row.round_id, "table": row.table_id, "player": row.player_id, "number": row.game_number,
        "game": row.game, "currency": row.currency, "version": row.stream_version, "state": state_text(player),
        "totals": json.dumps(row.totals), "staked": row.staked, "street": row.last_street, "done": row.done_deciding,
        "created": row.created_at, "result": json.dumps(result), "key": key,
    }  # fmt: skip


def save_player(row: PlayerRound, player: PlayerState | None, key: str, result: dict[str, Any], now: datetime) -> None:
    """A player command's last write: the player's row (when ``player``, its new
    state, changed: the row ``commit`` projected with ``PlayerRoundProjector.fold``)
    and ``result`` under the idempotency key; one statement on PostgreSQL (sent
    only: inside the caller's pipeline it travels with the next statement)."""
    if player is None or connection.vendor != "postgresql":
        if player is not None:
            if row.pk is None:
                row.save()
            save_rows([row])
        with connection.cursor() as cursor:
            record_result(cursor, key=key, result=result)
        return
    with bulk_cursor() as cursor:
        cursor.execute(_PG_SAVE, _save_params(row, player, key, result), prepare=True)


# Is anyone but this player still to decide on ``street``? Two probes of the
# partial index ``playerround_undecided`` (round, last_street) over the players
# with a stake who have not called or folded: a row whose last street sorts
# before or after ``street`` has not decided on it. O(log n) per decision, so
# 10,000 players deciding cost 10,000 probes, not 10,000 scans of the round.
_WAITING = """
       EXISTS (SELECT 1 FROM games_playerround p WHERE p.round_id = %(round)s::bigint AND p.staked > 0
               AND NOT p.done_deciding AND p.last_street < %({street})s::text AND p.player_id <> %(player)s::bigint)
       OR EXISTS (SELECT 1 FROM games_playerround p WHERE p.round_id = %(round)s::bigint AND p.staked > 0
               AND NOT p.done_deciding AND p.last_street > %({street})s::text AND p.player_id <> %(player)s::bigint)"""
_PG_TICK_AND_WAITING = f"""
SELECT t.current_round_id, t.phase, t.phase_seq, t.deadline, {_WAITING.format(street="street")}
FROM games_housetable t WHERE t.id = %(table)s::bigint
"""
# ``datetime.isoformat`` of a UTC timestamp, as ``decision_stored`` writes a tick's deadline.
_ISO_DEADLINE = (
    "to_char(tw.deadline AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS') || CASE WHEN "
    "extract(microseconds FROM tw.deadline)::bigint %% 1000000 = 0 THEN '' "
    "ELSE to_char(tw.deadline AT TIME ZONE 'UTC', '.US') END || '+00:00'"
)
# A decision's last write and its tick in one statement: the player's row, the
# table's tick and whether anyone else is still to decide on the street (others'
# rows: this statement's own row is not counted), and the result under the key
# with that tick and ``all_decided`` written into it.
_PG_SAVE_DECISION = f"""
WITH pr AS ({_PG_PLAYER_ROW}), tw AS (
    SELECT t.current_round_id, t.phase, t.phase_seq, t.deadline, {_WAITING.format(street="decided")} AS waiting
    FROM games_housetable t WHERE t.id = %(table)s::bigint
), res AS (
    UPDATE ledger_idempotency SET result = %(result)s::jsonb || jsonb_build_object(
        'all_decided', NOT tw.waiting,
        'tick', jsonb_build_object('table_id', %(table)s::bigint, 'round_id', tw.current_round_id,
                                   'game_number', tw.current_round_id, 'phase', tw.phase, 'phase_seq', tw.phase_seq,
                                   'deadline', CASE WHEN tw.deadline IS NOT NULL THEN {_ISO_DEADLINE} END))
    FROM tw WHERE key = %(key)s::text AND (SELECT count(*) FROM pr) = 1
    RETURNING 1
)
SELECT tw.current_round_id, tw.phase, tw.phase_seq, tw.deadline, tw.waiting, (SELECT count(*) FROM res) FROM tw
"""

Tick = tuple[tuple[str, str, int, datetime | None], bool]


def tick_json(table_id: int, tick: Tick) -> dict[str, Any]:
    """A decision result's ``tick`` and ``all_decided`` as stored (``decision_stored``'s JSON)."""
    (round_id, phase, phase_seq, deadline), waiting = tick
    return {"all_decided": not waiting,
            "tick": {"table_id": table_id, "round_id": round_id, "game_number": round_id, "phase": phase,
                     "phase_seq": phase_seq, "deadline": deadline.isoformat() if deadline else None}}  # fmt: skip


def save_decision(
    row: PlayerRound, player: PlayerState, key: str, result: dict[str, Any], now: datetime, *, round_row: HouseRound,
    street: str,
) -> Callable[[], Tick]:  # fmt: skip
    """A decision's last write (``save_player``) and its ``tick_and_waiting`` on
    ``street``: ``result`` is stored with the tick and ``all_decided`` written
    into it (``tick_json``), and the returned function answers the tick. On
    PostgreSQL one statement, sent now and read when the answer is called:
    inside the caller's pipeline it travels with the statements sent after it."""
    if connection.vendor != "postgresql":
        tick = tick_and_waiting(table_id=row.table_id, round_row=round_row, player_id=row.player_id, street=street)
        save_player(row, player, key, result | tick_json(row.table_id, tick), now)
        return lambda: tick
    connection.ensure_connection()
    allow_explicit_prepare(connection.connection)
    cursor = psycopg.Cursor(connection.connection)
    with connection.wrap_database_errors:
        cursor.execute(_PG_SAVE_DECISION, _save_params(row, player, key, result) | {"decided": street}, prepare=True)

    def answer() -> Tick:
        try:
            with connection.wrap_database_errors:
                found = cursor.fetchone()
        finally:
            cursor.close()
        if found is None or found[-1] != 1:
            raise RuntimeError(f"a decision's last write stored {found and found[-1]} results, not 1")
        round_id, phase, phase_seq, deadline, waiting, _ = found
        return (round_id, phase, phase_seq, deadline), bool(waiting)

    return answer


def tick_and_waiting(
    *, table_id: int, round_row: HouseRound, player_id: int, street: str
) -> tuple[tuple[str, str, int, datetime | None], bool]:
    """The table's (current round, phase, phase sequence, deadline) and whether
    another participant still has to decide on ``street``."""
    if connection.vendor == "postgresql":
        with bulk_cursor() as cursor:
            params = {"round": round_row.pk, "street": street, "player": player_id, "table": table_id}
            round_id, phase, phase_seq, deadline, waiting = cursor.execute(
                _PG_TICK_AND_WAITING, params, prepare=True
            ).fetchone()
        return (round_id, phase, phase_seq, deadline), bool(waiting)
    waiting = (
        PlayerRound.objects.filter(round=round_row, staked__gt=0, done_deciding=False)
        .exclude(last_street=street)
        .exclude(player_id=player_id)
        .exists()
    )
    table = HouseTable.objects.get(pk=table_id)
    return (table.current_round_id, table.phase, table.phase_seq, table.deadline), waiting


# --- seats in a per-seat round: who may still join it, who leaves it ---------------------------


def seat_and_bettors(*, table_id: int, round_row: HouseRound, player_id: int) -> tuple[bool, int]:
    """(whether the player still holds a seat at the table, how many other
    players hold bets in the round), for a chip that would make the player a
    participant of a per-seat round. Read by statements of their own, after the
    command's context took its locks, so a leave that committed meanwhile is
    seen; the seat row stays locked until the command commits, so a leave
    (which deletes it) waits for the chip and then returns it
    (``games.house.services.seats.leave_table``)."""
    seat = (
        TableSeat.objects.select_for_update(no_key=True)
        .filter(table_id=table_id, player_id=player_id)
        .values_list("pk", flat=True)
        .first()
    )
    others = PlayerRound.objects.filter(round_id=round_row.pk, staked__gt=0).exclude(player_id=player_id).count()
    return seat is not None, others


# Locks in the bet path's order (``_PG_CONTEXT``): the player's row of the
# current round, then that round shared.
_PG_LEAVING = """
SELECT r.id, p.id FROM games_housetable t
JOIN games_houseround r ON r.table_id = t.id AND r.round_id = t.current_round_id
LEFT JOIN LATERAL (
    SELECT id FROM games_playerround WHERE round_id = r.id AND player_id = %(player)s::bigint FOR UPDATE
) p ON true
WHERE t.id = %(table)s::bigint
FOR SHARE OF r
"""


def lock_leaving_player(*, table_id: int, player_id: int) -> tuple[HouseRound, PlayerRound | None] | None:
    """The table's current round and the player's row of it (``None`` without
    one), or ``None`` when the table has no round. PostgreSQL: the player's row
    is locked for update and the round row shared, in the bet path's order, so
    a leave waits for the player's bets in flight and the dealer's close (which
    locks the round for update) waits for the leave. SQLite's ``IMMEDIATE``
    transactions serialise writers anyway."""
    if connection.vendor != "postgresql":
        round_row = _current_round(table_id)
        if round_row is None:
            return None
        return round_row, PlayerRound.objects.filter(round=round_row, player_id=player_id).first()
    with connection.cursor() as cursor:
        cursor.execute(_PG_LEAVING, {"table": table_id, "player": player_id})
        locked = cursor.fetchone()
    if locked is None:
        return None
    round_id, row_id = locked
    row = PlayerRound.objects.filter(pk=row_id).first() if row_id is not None else None
    return HouseRound.objects.get(pk=round_id), row


def context_of(
    found: Sequence[Any],
    table_id: int,
    player_id: int,
    now: datetime,
    known: KnownPlayer | None,
    round_row: HouseRound | None = None,
) -> CommandContext:
    """A ``CommandContext`` from one row of ``_PG_CONTEXT``/``batches._PG_CONTEXTS`` (from the round's id on).
    ``round_row``: the round as read for another command of the batch (one model instance, not one each)."""
    rid, round_id, version, currency, game, number, _seated, *player = found[:11]
    wallet, balance, held, house, head_hash, has_settings = found[11:17]
    if round_row is None or round_row.pk != rid:
        round_row = HouseRound(id=rid, round_id=round_id, table_id=table_id, stream_version=version,
                               currency=currency, game=game, game_number=number)  # fmt: skip
    incarnation = found[-1]
    row_id, state_json, stream_version, created_at = player
    cached = None
    if row_id is None:
        row = _new_row(round_row, table_id, player_id, now)
    else:
        if state_json is None:  # not read: this process has the state at this version
            assert known is not None
            assert (known.round_id, known.version, known.incarnation) == (round_id, stream_version, incarnation)
            cached = known.state
        state_data = json.loads(state_json) if isinstance(state_json, str | bytes) else state_json or {}
        row = PlayerRound(id=row_id, round=round_row, table_id=table_id, player_id=player_id, game_number=number,
                          game=game, currency=currency, state=state_data, stream_version=stream_version,
                          created_at=created_at)  # fmt: skip
    settings = settings_row(found[17:-1]) if has_settings else None
    # Ids 0: accounts not opened yet (``read_commands``); ``_pg_context`` opens them first.
    accounts = Accounts(wallet or 0, held or 0, house or 0, int(balance or 0))
    state = load_round_at(round_id, version, incarnation)
    return CommandContext(round_row, state, row, accounts, head_hash, settings, cached, incarnation)
