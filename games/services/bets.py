"""Player-side services: chips, undo, clear, repeat, double and decisions.

Each is keyword-only and runs in one transaction: a shared lock on the round
row (bets never block each other; the dealer's close waits for them), the
player's own projection row locked, the domain decides, then events and the
stake holds (wallet -> held, destination the table's house) go in together.
The house row is never written on the bet path. ``idempotency_key``: a retry
of the same command returns the first result and changes nothing.
"""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from django.db import connection, transaction

from games.domain.house_round import (
    BET_PLACED,
    BetOutcome,
    Event,
    NotInRound,
    RoundState,
    WrongPhase,
    decide_clear,
    decide_decision,
    decide_double,
    decide_place_chip,
    decide_repeat,
    decide_undo,
)
from games.models import HouseRound, HouseTable, PlayerRound, TableSeat
from games.services.rounds import TableTick, tick_of
from games.services.store import Money, commit, iso, load_round, state_from_json
from ledger.services import house_account, player_accounts
from ledger.services.events import now as ledger_now
from ledger.services.money import account_key
from ledger.services.postings import claim, record_result, request_hash


class NotSeated(NotInRound):
    """The player must join the table (take a seat) before betting."""

    code = "not_seated"


@dataclass(frozen=True)
class BetResult:
    round_id: str
    totals: dict[str, int]
    capped: bool
    balance: int
    doubled: list[str]


@dataclass(frozen=True)
class DecisionResult:
    round_id: str
    street: str
    option: str
    amount: int
    balance: int
    all_decided: bool
    tick: TableTick | None


def _context(table_id: int, player_id: int, now: datetime) -> tuple[HouseRound, RoundState, PlayerRound]:
    """The table's current round (share-locked), its state and the player's row (locked)."""
    share = " FOR SHARE OF r" if connection.vendor == "postgresql" else ""
    found = list(
        HouseRound.objects.raw(
            "SELECT r.* FROM games_houseround r JOIN games_housetable t "
            f"ON t.id = r.table_id AND t.current_round_id = r.round_id WHERE t.id = %s{share}",
            [table_id],
        )
    )
    if not found:
        raise WrongPhase("no round at this table", table_id=table_id)
    round_row = found[0]
    state = load_round(round_row.round_id)
    row = PlayerRound.objects.select_for_update().filter(round=round_row, player_id=player_id).first()
    if row is None:
        row = PlayerRound(
            round=round_row,
            table_id=table_id,
            player_id=player_id,
            game_number=round_row.game_number,
            game=round_row.game,
            currency=round_row.currency,
            created_at=now,
        )
    return round_row, state, row


@dataclass(frozen=True)
class _Accounts:
    wallet: int
    held: int
    house: int
    balance: int


def _accounts(player_id: int, table_id: int, currency: str) -> _Accounts:
    """Wallet, held and house account ids and the wallet balance in one query
    (opened first when missing)."""
    keys = [
        account_key("wallet", f"player:{player_id}", currency),
        account_key("held", f"player:{player_id}", currency),
        account_key("house", f"table:{table_id}", currency),
    ]
    with connection.cursor() as cursor:
        cursor.execute("SELECT key, id, balance FROM ledger_account WHERE key IN (%s, %s, %s)", keys)
        found = {key: (int(account), int(balance)) for key, account, balance in cursor.fetchall()}
    if len(found) < 3:
        player_accounts(player_id=player_id, currency=currency)
        house_account(table_id=table_id, currency=currency)
        return _accounts(player_id, table_id, currency)
    return _Accounts(found[keys[0]][0], found[keys[1]][0], found[keys[2]][0], found[keys[0]][1])


def _replayed(key: str, command: str, request: dict[str, Any]) -> Any | None:
    with connection.cursor() as cursor:
        return claim(cursor, key=key, command=command, digest=request_hash(command, request), at=ledger_now())


def _remember(key: str, result: Any) -> None:
    with connection.cursor() as cursor:
        record_result(cursor, key=key, result=asdict(result))


def _bet_command(
    *, command: str, table_id: int, player_id: int, idempotency_key: str, now: datetime, request: dict[str, Any],
    decide: Any,
) -> BetResult:  # fmt: skip
    with transaction.atomic():
        first = _replayed(idempotency_key, command, {"table": table_id, "player": player_id, **request})
        if first is not None:
            return BetResult(**first)
        round_row, state, row = _context(table_id, player_id, now)
        if not TableSeat.objects.filter(table_id=table_id, player_id=player_id).exists():
            raise NotSeated(table_id=table_id)
        player = state_from_json(player_id, row.state)
        accounts = _accounts(player_id, table_id, round_row.currency)
        balance = accounts.balance
        outcome: BetOutcome = decide(state, player, balance)
        if outcome.events:
            if row.pk is None:
                row.save()
            money = _bet_money(outcome.events, accounts)
            _, changed = commit(
                round_row=round_row, state=state, players={player_id: row}, events=outcome.events, money=money,
                idempotency_key=idempotency_key, actor=f"user:{player_id}", now=now,
            )  # fmt: skip
            # Only this player's holds moved: the wallet changed by the stake difference.
            balance += player.staked - changed[player_id].staked
            player = changed[player_id]
        result = BetResult(round_row.round_id, player.totals(), outcome.capped, balance, list(outcome.doubled))
        _remember(idempotency_key, result)
        return result


def _bet_money(events: list[Event], accounts: _Accounts) -> Money:
    money = Money()
    for event in events:
        if event.type == BET_PLACED:
            amount = int(event.data["amount"]) + sum(event.data["automatic"].values())
            money.open_holds.append(
                (event.data["hold_id"], accounts.wallet, accounts.held, accounts.house, amount, event)
            )
        else:
            for hold_id in event.data["hold_ids"]:
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
    table = HouseTable.objects.get(pk=table_id)
    previous = previous_bets(table_id=table_id, player_id=player_id, before_round=table.current_round_id)
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
        request = {"table": table_id, "player": player_id, "option": option}
        first = _replayed(idempotency_key, "house.make_decision", request)
        if first is not None:
            tick = first.pop("tick")
            if tick is not None:
                tick["deadline"] = datetime.fromisoformat(tick["deadline"]) if tick["deadline"] else None
            return DecisionResult(**first, tick=TableTick(**tick) if tick else None)
        round_row, state, row = _context(table_id, player_id, now)
        if row.pk is None:
            raise NotInRound()
        player = state_from_json(player_id, row.state)
        accounts = _accounts(player_id, table_id, round_row.currency)
        balance = accounts.balance
        hold_id = _new_ids(1)[0]
        events = decide_decision(state, player, option=option, balance=balance, hold_id=hold_id, now=iso(now))
        money = Money()
        event = events[0]
        if event.data["amount"]:
            money.open_holds.append(
                (hold_id, accounts.wallet, accounts.held, accounts.house, event.data["amount"], event)
            )
        commit(
            round_row=round_row, state=state, players={player_id: row}, events=events, money=money,
            idempotency_key=idempotency_key, actor=f"user:{player_id}", now=now,
        )  # fmt: skip
        # Without loading every player: is anyone still to decide on this street?
        waiting = (
            PlayerRound.objects.filter(round=round_row, staked__gt=0, done_deciding=False)
            .exclude(last_street=state.phase)
            .exists()
        )
        everyone = not waiting
        result = DecisionResult(
            round_row.round_id,
            event.data["street"],
            event.data["option"],
            event.data["amount"],
            balance - event.data["amount"],
            everyone,
            tick_of(HouseTable.objects.get(pk=table_id)),
        )
        stored = asdict(result)
        if stored["tick"] and stored["tick"]["deadline"]:
            stored["tick"]["deadline"] = stored["tick"]["deadline"].isoformat()
        with connection.cursor() as cursor:
            record_result(cursor, key=idempotency_key, result=stored)
        return result


class TooManyTables(NotInRound):
    """A player may play at most ``CASINO_MAX_TABLES_PER_PLAYER`` tables at once."""

    code = "too_many_tables"


def join_table(*, table_id: int, player_id: int) -> TableSeat:
    """Take a seat (one per player per table). Per-seat tables number seats up to
    the deck's limit; shared tables have unlimited, unnumbered seats."""
    from django.conf import settings

    from games.domain.house_round import PER_SEAT_MAX, TableFull

    with transaction.atomic():
        table = HouseTable.objects.select_for_update().get(pk=table_id)
        seat = TableSeat.objects.filter(table=table, player_id=player_id).first()
        if seat is not None:
            return seat
        if TableSeat.objects.filter(player_id=player_id).count() >= settings.CASINO_MAX_TABLES_PER_PLAYER:
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
