"""Player-side services: chips, undo, clear, repeat, double and decisions.

Each is keyword-only and runs in one transaction: a shared lock on the round
row (bets never block each other; the dealer's close waits for them), the
player's own projection row locked, the domain decides, then events and the
stake holds (wallet -> held, destination the table's house) go in together.
The house row is never written on the bet path. ``idempotency_key``: a retry
of the same command returns the first result and changes nothing.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from django.db import connection, transaction

from casino.responsible_gaming import ROW_COLUMNS as RG_COLUMNS
from casino.responsible_gaming import ROW_TABLE as RG_TABLE
from casino.responsible_gaming import UNREAD_SETTINGS, assert_may_wager, settings_row
from games.house.models import HouseRound, HouseTable, PlayerRound, TableSeat
from games.house.round import (
    BET_PLACED,
    BetOutcome,
    Event,
    NotInRound,
    NotSeated,
    PlayerState,
    RoundState,
    WrongPhase,
    decide_clear,
    decide_decision,
    decide_double,
    decide_place_chip,
    decide_repeat,
    decide_undo,
)
from games.house.round.events import BetPlaced, BetRemoved, DecisionMade
from games.house.services.rounds import TableTick, tick_of
from games.house.store import (
    Money,
    commit,
    iso,
    known_player,
    load_round_at,
    project_player,
    remember_player,
    save_rows,
    state_from_json,
)
from ledger.services import house_account, player_accounts
from ledger.services.events import now as ledger_now
from ledger.services.money import account_key
from ledger.services.postings import bulk_cursor, claim, pipelined, record_result, request_hash


@dataclass(frozen=True)
class BetResult:
    round_id: str
    totals: dict[str, int]
    capped: bool
    balance: int
    doubled: list[str]

    def as_json(self) -> dict[str, Any]:
        """``dataclasses.asdict(self)`` without its recursive deep copy (the
        fields are plain values): a chip is stored and answered with it."""
        return {"round_id": self.round_id, "totals": dict(self.totals), "capped": self.capped,
                "balance": self.balance, "doubled": list(self.doubled)}  # fmt: skip


@dataclass(frozen=True)
class DecisionResult:
    round_id: str
    street: str
    option: str
    amount: int
    balance: int
    all_decided: bool
    tick: TableTick | None


@dataclass
class _Context:
    """Everything a player command reads before the domain decides."""

    round_row: HouseRound
    state: RoundState
    row: PlayerRound
    accounts: _Accounts
    # The player stream's head hash (at ``row.stream_version``) and the
    # responsible-gaming settings, when the context query read them already.
    head_hash: str | None = None
    settings: Any = UNREAD_SETTINGS
    # The player's state at ``row.stream_version`` when this process had it
    # (``store.known_player``): ``row.state`` was then not read.
    player: PlayerState | None = None
    # The database server's start time (``store.KnownPlayer.incarnation``); None on SQLite.
    incarnation: object = None

    def player_state(self, player_id: int) -> PlayerState:
        return self.player if self.player is not None else state_from_json(player_id, self.row.state)


@dataclass(frozen=True)
class _Accounts:
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
) -> tuple[bool, _Context | None, bool]:
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
            claimed, rid, round_id, version, currency, game, number, seated, *player = found[:12]
            wallet, balance, held, house, head_hash, has_settings = found[12:18]
            if not claimed:
                return False, None, bool(seated)
            if wallet is not None and held is not None and house is not None:
                break
            # First bet of this player (or table) in this currency: open the
            # accounts, then read again (the claim is ours already).
            _open_accounts(player_id, table_id, currency)
            params["key"] = None  # ON CONFLICT cannot fire on NULL: re-reading claims nothing
    round_row = HouseRound(id=rid, round_id=round_id, table_id=table_id, stream_version=version, currency=currency,
                           game=game, game_number=number)  # fmt: skip
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
    settings = settings_row(found[18:-1]) if has_settings else None
    accounts = _Accounts(wallet, held, house, int(balance))
    state = load_round_at(round_id, version, incarnation)
    context = _Context(round_row, state, row, accounts, head_hash, settings, cached, incarnation)
    return True, context, bool(seated)


def _accounts(player_id: int, table_id: int, currency: str) -> _Accounts:
    """Wallet, held and house account ids and the wallet balance in one query
    (opened first when missing)."""
    keys = _account_keys(player_id, table_id, currency)
    with connection.cursor() as cursor:
        cursor.execute("SELECT key, id, balance FROM ledger_account WHERE key IN (%s, %s, %s)", keys)
        found = {key: (int(account), int(balance)) for key, account, balance in cursor.fetchall()}
    if len(found) < 3:
        _open_accounts(player_id, table_id, currency)
        return _accounts(player_id, table_id, currency)
    return _Accounts(found[keys[0]][0], found[keys[1]][0], found[keys[2]][0], found[keys[0]][1])


def _claim_lookup(key: str, command: str, digest: str) -> Any:
    """The first result stored under ``key`` (``IdempotencyKeyReused`` for another request)."""
    with connection.cursor() as cursor:
        return claim(cursor, key=key, command=command, digest=digest, at=ledger_now())


def _read(
    *, command: str, table_id: int, player_id: int, key: str, request: dict[str, Any], now: datetime, seated: bool
) -> tuple[Any, _Context | None]:
    """Claim ``key`` and read the command's context: ``(first result, None)`` for a
    retry, ``(None, context)`` otherwise. ``seated``: refuse a player without a seat
    (``not_seated``). Raises ``WrongPhase`` when the table has no round."""
    digest = request_hash(command, {"table": table_id, "player": player_id, **request})
    if connection.vendor == "postgresql":
        claimed, context, has_seat = _pg_context(
            command=command, table_id=table_id, player_id=player_id, key=key, digest=digest, now=now
        )
        if not claimed:
            return _claim_lookup(key, command, digest), None
    else:
        first = _claim_lookup(key, command, digest)
        if first is not None:
            return first, None
        context = _portable_context(table_id, player_id, now)
        has_seat = TableSeat.objects.filter(table_id=table_id, player_id=player_id).exists()
    if context is None:
        raise WrongPhase("no round at this table", table_id=table_id)
    if seated and not has_seat:
        raise NotSeated(table_id=table_id)
    return None, context


def _portable_context(table_id: int, player_id: int, now: datetime) -> _Context | None:
    """``_pg_context`` in several statements, for SQLite (the embedded default)."""
    found = list(
        HouseRound.objects.raw(
            "SELECT r.* FROM games_houseround r JOIN games_housetable t "
            "ON t.id = r.table_id AND t.current_round_id = r.round_id WHERE t.id = %s",
            [table_id],
        )
    )
    if not found:
        return None
    round_row = found[0]
    row = PlayerRound.objects.select_for_update().filter(round=round_row, player_id=player_id).first()
    return _Context(
        round_row,
        load_round_at(round_row.round_id, round_row.stream_version),
        row or _new_row(round_row, table_id, player_id, now),
        _accounts(player_id, table_id, round_row.currency),
    )


# The write side's last round trip on PostgreSQL: the player's projection row
# (inserted with the first chip) and the command's result under its key.
_PG_SAVE = """
WITH pr AS (
    INSERT INTO games_playerround (round_id, table_id, player_id, game_number, game, currency, stream_version, state,
                                   totals, staked, returned, net, status, last_street, done_deciding, created_at)
    VALUES (%(round)s::bigint, %(table)s::bigint, %(player)s::bigint, %(number)s::text, %(game)s::text,
            %(currency)s::text, %(version)s::int, %(state)s::jsonb, %(totals)s::jsonb, %(staked)s::bigint, 0, 0,
            'betting', %(street)s::text, %(done)s::bool, %(created)s::timestamptz)
    ON CONFLICT ON CONSTRAINT one_player_round DO UPDATE SET
        stream_version = EXCLUDED.stream_version, state = EXCLUDED.state, totals = EXCLUDED.totals,
        staked = EXCLUDED.staked, last_street = EXCLUDED.last_street, done_deciding = EXCLUDED.done_deciding
    RETURNING 1
)
UPDATE ledger_idempotency SET result = %(result)s::jsonb WHERE key = %(key)s::text AND (SELECT count(*) FROM pr) = 1
"""


def _save(row: PlayerRound, player: PlayerState | None, key: str, result: dict[str, Any], now: datetime) -> None:
    """Write the player's projection (when ``player`` changed) and remember ``result``."""
    if player is None or connection.vendor != "postgresql":
        if player is not None:
            if row.pk is None:
                row.save()
            save_rows([project_player(row, player, now)])
        with connection.cursor() as cursor:
            record_result(cursor, key=key, result=result)
        return
    project_player(row, player, now)
    params: dict[str, Any] = {
        "round": row.round_id, "table": row.table_id, "player": row.player_id, "number": row.game_number,
        "game": row.game, "currency": row.currency, "version": row.stream_version, "state": json.dumps(row.state),
        "totals": json.dumps(row.totals), "staked": row.staked, "street": row.last_street, "done": row.done_deciding,
        "created": row.created_at, "result": json.dumps(result), "key": key,
    }  # fmt: skip
    with bulk_cursor() as cursor:
        cursor.execute(_PG_SAVE, params, prepare=True)


def _bet_command(
    *, command: str, table_id: int, player_id: int, idempotency_key: str, now: datetime, request: dict[str, Any],
    decide: Any,
) -> BetResult:  # fmt: skip
    with transaction.atomic():
        first, context = _read(command=command, table_id=table_id, player_id=player_id, key=idempotency_key,
                               request=request, now=now, seated=True)  # fmt: skip
        if context is None:
            return BetResult(**first)
        round_row, state, row, accounts = context.round_row, context.state, context.row, context.accounts
        player = context.player_state(player_id)
        balance = accounts.balance
        outcome: BetOutcome = decide(state, player, balance)
        changed: PlayerState | None = None
        if outcome.events:
            money = _bet_money(outcome.events, accounts)
            new_stake = sum(hold[4] for hold in money.open_holds)
            if new_stake:
                # Responsible gaming refuses new stakes (exclusion, cool-off,
                # session and loss limits); removing chips is always allowed.
                assert_may_wager(player_id=player_id, amount=new_stake, currency=round_row.currency, now=now,
                                 settings=context.settings)  # fmt: skip
            _, players = commit(
                round_row=round_row, state=state, players={player_id: row}, events=outcome.events, money=money,
                idempotency_key=idempotency_key, actor=f"user:{player_id}", now=now, project_players=False,
                head_hashes={player_id: context.head_hash} if context.head_hash else None, states={player_id: player},
            )  # fmt: skip
            changed = players[player_id]
            remember_player(table_id, round_row.round_id, changed, context.incarnation)
            # Only this player's holds moved: the wallet changed by the stake difference.
            balance += player.staked - changed.staked
            player = changed
        result = BetResult(round_row.round_id, player.totals(), outcome.capped, balance, list(outcome.doubled))
        _save(row, changed, idempotency_key, result.as_json(), now)
        return result


def _bet_money(events: list[Event], accounts: _Accounts) -> Money:
    money = Money()
    for event in events:
        if event.type == BET_PLACED:
            placed = BetPlaced.from_data(event.data)
            money.open_holds.append(
                (placed.hold_id, accounts.wallet, accounts.held, accounts.house, placed.held, event)
            )
        else:
            for hold_id in BetRemoved.from_data(event.data).hold_ids:
                money.settle_holds.append((hold_id, 0, event))
    return money


def _new_ids(n: int) -> list[str]:
    return [str(uuid.uuid4()) for _ in range(n)]


def place_chip(
    *, table_id: int, player_id: int, spot: str, amount: int, idempotency_key: str, now: datetime
) -> BetResult:
    """Add one chip to ``spot`` (capped at its maximum: ``capped`` says so)."""
    hold_id = _new_ids(1)[0]
    return _bet_command(
        command="house.place_chip", table_id=table_id, player_id=player_id, idempotency_key=idempotency_key,
        now=now, request={"spot": spot, "amount": amount},
        decide=lambda s, p, b: decide_place_chip(s, p, spot=spot, amount=amount, balance=b, hold_id=hold_id,
                                                 now=iso(now)),
    )  # fmt: skip


def undo_bet(*, table_id: int, player_id: int, idempotency_key: str, now: datetime) -> BetResult:
    """Remove the last chip placed (repeatable, in reverse order)."""
    return _bet_command(
        command="house.undo_bet", table_id=table_id, player_id=player_id, idempotency_key=idempotency_key,
        now=now, request={}, decide=lambda s, p, b: decide_undo(s, p, now=iso(now)),
    )  # fmt: skip


def clear_bets(*, table_id: int, player_id: int, idempotency_key: str, now: datetime) -> BetResult:
    """Remove every chip."""
    return _bet_command(
        command="house.clear_bets", table_id=table_id, player_id=player_id, idempotency_key=idempotency_key,
        now=now, request={}, decide=lambda s, p, b: decide_clear(s, p, now=iso(now)),
    )  # fmt: skip


def previous_bets(*, table_id: int, player_id: int, before_round: str) -> dict[str, int]:
    """The player's placed spots (automatic wagers excluded) of their last round with bets here."""
    row = (
        PlayerRound.objects.filter(table_id=table_id, player_id=player_id, staked__gt=0)
        .exclude(round__round_id=before_round)
        .order_by("-created_at", "-id")
        .first()
    )
    if row is None:
        return {}
    state = state_from_json(player_id, row.state)
    return state.placed_stakes()


def repeat_bets(*, table_id: int, player_id: int, idempotency_key: str, now: datetime) -> BetResult:
    """Place the previous round's bets again."""
    # An unknown table has no previous bets; the command then refuses it as the others do.
    current = HouseTable.objects.filter(pk=table_id).values_list("current_round_id", flat=True).first()
    previous = previous_bets(table_id=table_id, player_id=player_id, before_round=current or "")
    ids = _new_ids(len(previous))
    return _bet_command(
        command="house.repeat_bets", table_id=table_id, player_id=player_id, idempotency_key=idempotency_key,
        now=now, request={},
        decide=lambda s, p, b: decide_repeat(s, p, previous=previous, balance=b, hold_ids=ids, now=iso(now)),
    )  # fmt: skip


def double_bets(*, table_id: int, player_id: int, idempotency_key: str, now: datetime) -> BetResult:
    """Double every current bet once per round (in placing order while the balance lasts)."""
    ids = _new_ids(8)
    return _bet_command(
        command="house.double_bets", table_id=table_id, player_id=player_id, idempotency_key=idempotency_key,
        now=now, request={}, decide=lambda s, p, b: decide_double(s, p, balance=b, hold_ids=ids, now=iso(now)),
    )  # fmt: skip


def make_decision(*, table_id: int, player_id: int, option: str, idempotency_key: str, now: datetime) -> DecisionResult:
    """Take ``option`` at the open decision point. A call/play is held like a bet."""
    with transaction.atomic():
        first, context = _read(command="house.make_decision", table_id=table_id, player_id=player_id,
                               key=idempotency_key, request={"option": option}, now=now, seated=False)  # fmt: skip
        if context is None:
            tick = first.pop("tick")
            if tick is not None:
                tick["deadline"] = datetime.fromisoformat(tick["deadline"]) if tick["deadline"] else None
            return DecisionResult(**first, tick=TableTick(**tick) if tick else None)
        round_row, state, row, accounts = context.round_row, context.state, context.row, context.accounts
        if row.pk is None:
            raise NotInRound()
        player = context.player_state(player_id)
        balance = accounts.balance
        hold_id = _new_ids(1)[0]
        events = decide_decision(state, player, option=option, balance=balance, hold_id=hold_id, now=iso(now))
        money = Money()
        event = events[0]
        made = DecisionMade.from_data(event.data)
        if made.amount:
            # A call or play is a new stake: responsible gaming may refuse it
            # (checking and folding stay possible).
            assert_may_wager(player_id=player_id, amount=made.amount, currency=round_row.currency, now=now,
                             settings=context.settings)  # fmt: skip
            money.open_holds.append((hold_id, accounts.wallet, accounts.held, accounts.house, made.amount, event))
        _, players = commit(
            round_row=round_row, state=state, players={player_id: row}, events=events, money=money,
            idempotency_key=idempotency_key, actor=f"user:{player_id}", now=now, project_players=False,
            head_hashes={player_id: context.head_hash} if context.head_hash else None, states={player_id: player},
        )  # fmt: skip
        remember_player(table_id, round_row.round_id, players[player_id], context.incarnation)
        tick, waiting = _tick_and_waiting(table_id=table_id, round_row=round_row, player_id=player_id,
                                          street=state.phase)  # fmt: skip
        result = DecisionResult(
            round_row.round_id,
            made.street,
            made.option,
            made.amount,
            balance - made.amount,
            not waiting,
            tick,
        )
        stored = asdict(result)
        if stored["tick"] and stored["tick"]["deadline"]:
            stored["tick"]["deadline"] = stored["tick"]["deadline"].isoformat()
        _save(row, players[player_id], idempotency_key, stored, now)
        return result


# Is anyone but this player still to decide on ``street``? Two probes of the
# partial index ``playerround_undecided`` (round, last_street) over the players
# with a stake who have not called or folded: a row whose last street sorts
# before or after ``street`` has not decided on it. O(log n) per decision, so
# 10,000 players deciding cost 10,000 probes, not 10,000 scans of the round.
_PG_TICK_AND_WAITING = """
SELECT t.current_round_id, t.phase, t.phase_seq, t.deadline,
       EXISTS (SELECT 1 FROM games_playerround p WHERE p.round_id = %(round)s AND p.staked > 0
               AND NOT p.done_deciding AND p.last_street < %(street)s AND p.player_id <> %(player)s)
       OR EXISTS (SELECT 1 FROM games_playerround p WHERE p.round_id = %(round)s AND p.staked > 0
               AND NOT p.done_deciding AND p.last_street > %(street)s AND p.player_id <> %(player)s)
FROM games_housetable t WHERE t.id = %(table)s
"""


def _tick_and_waiting(*, table_id: int, round_row: HouseRound, player_id: int, street: str) -> tuple[TableTick, bool]:
    """The table's tick and whether another participant still has to decide on ``street``."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                _PG_TICK_AND_WAITING, {"round": round_row.pk, "street": street, "player": player_id, "table": table_id}
            )
            round_id, phase, phase_seq, deadline, waiting = cursor.fetchone()
        return TableTick(table_id, round_id, round_id, phase, phase_seq, deadline), bool(waiting)
    waiting = (
        PlayerRound.objects.filter(round=round_row, staked__gt=0, done_deciding=False)
        .exclude(last_street=street)
        .exclude(player_id=player_id)
        .exists()
    )
    return tick_of(HouseTable.objects.get(pk=table_id)), waiting


class TooManyTables(NotInRound):
    """A player may play at most ``CASINO_MAX_TABLES_PER_PLAYER`` tables at once."""

    code = "too_many_tables"


def tables_in_play(*, player_id: int) -> set[int]:
    """The tables the player plays at (RULES.md: at most 4 at once): those where
    they hold a seat, and those where a round still holds their wagers (a seat
    given up mid-round leaves its wagers in play until the round ends)."""
    seated = set(TableSeat.objects.filter(player_id=player_id).values_list("table_id", flat=True))
    wagering = PlayerRound.objects.filter(player_id=player_id, status="betting", staked__gt=0)
    return seated | set(wagering.values_list("round__table_id", flat=True))


def join_table(*, table_id: int, player_id: int) -> TableSeat:
    """Take a seat (one per player per table). Per-seat tables number seats up to
    the deck's limit; shared tables have unlimited, unnumbered seats."""
    from django.conf import settings

    from games.house.round import PER_SEAT_MAX, TableFull

    with transaction.atomic():
        table = HouseTable.objects.select_for_update().get(pk=table_id)
        seat = TableSeat.objects.filter(table=table, player_id=player_id).first()
        if seat is not None:
            return seat
        if len(tables_in_play(player_id=player_id) - {table.pk}) >= settings.CASINO_MAX_TABLES_PER_PLAYER:
            raise TooManyTables(limit=settings.CASINO_MAX_TABLES_PER_PLAYER)
        number = None
        if table.hand_mode == "per_seat":
            limit = min(table.max_seats or PER_SEAT_MAX, PER_SEAT_MAX)
            taken = set(TableSeat.objects.filter(table=table).values_list("seat_number", flat=True))
            free = [n for n in range(1, limit + 1) if n not in taken]
            if not free:
                raise TableFull(seats=limit)
            number = free[0]
        return TableSeat.objects.create(table=table, player_id=player_id, seat_number=number)


def leave_table(*, table_id: int, player_id: int) -> None:
    """Give the seat up (bets already in a round play on: a round proceeds regardless)."""
    TableSeat.objects.filter(table_id=table_id, player_id=player_id).delete()
