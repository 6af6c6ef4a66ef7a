"""Seats and chips at a poker table (docs/poker.md, "Tables"): sit down, add
money, stand up, sit out and in, and the dealer freeing seats whose
reservation ran out.

Each use case is keyword-only and one transaction that locks the table row
first. The seat rows are written only by their projector
(``games.poker.projectors.PokerSeatProjector``), from the table events the
use case appends, in its transaction. Chips move through the ledger in that transaction: sit down / add
money: wallet -> the player's ``poker_seat`` account; stand up or a freed
seat: ``poker_seat`` -> wallet.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction

from casino.responsible_gaming import ResponsibleGamingRefusal, assert_may_wager
from games.poker import event_types as et
from games.poker.errors import (
    AlreadySeated,
    BuyInOutOfRange,
    InHand,
    InvalidSeat,
    NoChips,
    PokerTableClosed,
    SeatTaken,
    TournamentTable,
)
from games.poker.models import PokerSeat, PokerTable
from games.poker.projectors import PokerSeatProjector, project_new
from games.poker.services.tables import (
    DEALER,
    current_hand,
    dealt_in,
    eligible,
    in_live_hand,
    iso,
    lock_table,
    maybe_start_soon,
    once,
    seat_account,
    seat_of,
    table_append,
)
from games.tables import presence
from ledger.services import NewEvent, StreamAppend, player_accounts, transfer

# Why a seat sits out (``PokerSeat.sat_out_reason``, ``poker_table.sat_out``'s ``reason``).
DISCONNECTED = "disconnected"
RESPONSIBLE_GAMING = "responsible_gaming"


@dataclass(frozen=True)
class SeatResult:
    table_id: int
    seat_number: int
    stack: int
    sitting_out: bool
    moved: int  # chips moved by this command (buy-in, top-up, cash-out)


def _chips_in(
    table: PokerTable,
    player_id: int,
    amount: int,
    event_type: str,
    data: dict[str, Any],
    *,
    key: str,
    now: datetime,
    seat: PokerSeat | None = None,
) -> None:
    """Wallet -> seat account, caused by the table event (buy-in or top-up),
    which the seat's projector then applies (``seat``: the row held, kept
    current). Responsible gaming refuses it like a stake (exclusion, limits)."""
    assert_may_wager(player_id=player_id, amount=amount, currency=table.currency, now=now)
    metadata = {"actor": f"user:{player_id}"}
    transfer(
        debit_account=player_accounts(player_id=player_id, currency=table.currency).wallet,
        credit_account=seat_account(table_id=table.pk, player_id=player_id, currency=table.currency),
        amount=amount,
        currency=table.currency,
        idempotency_key=key,
        kind="buy_in" if event_type == et.SAT_DOWN else "top_up",
        cause=StreamAppend(et.table_stream(table.pk), None, [NewEvent(event_type, data)], metadata),
    )
    project_new(et.table_stream(table.pk), [NewEvent(event_type, data)], metadata, at=now,
                using=[PokerSeatProjector(seats=[seat] if seat is not None else (), table=table)])  # fmt: skip


def sit_down(
    *, table_id: int, player_id: int, seat_number: int, buy_in: int, idempotency_key: str, now: datetime
) -> SeatResult:
    """Take a free seat with ``buy_in`` chips from the wallet. Refusals:
    ``poker_table_not_found``, ``poker_table_closed``, ``poker_invalid_seat``,
    ``poker_seat_taken``, ``poker_already_seated``,
    ``poker_buy_in_out_of_range``, ``insufficient_funds`` and the responsible
    gaming refusals. The player is dealt in from the next hand."""
    request = {"table": table_id, "player": player_id, "seat": seat_number, "buy_in": buy_in}

    def run() -> SeatResult:
        table = lock_table(table_id)
        if table.tournament_id is not None:
            raise TournamentTable(table_id=table_id)
        if not table.is_open:
            raise PokerTableClosed(table_id=table_id)
        if not 1 <= seat_number <= table.max_seats:
            raise InvalidSeat(seat=seat_number, seats=table.max_seats)
        if PokerSeat.objects.filter(table=table, player_id=player_id).exists():
            raise AlreadySeated(table_id=table_id)
        if PokerSeat.objects.filter(table=table, seat_number=seat_number).exists():
            raise SeatTaken(seat=seat_number)
        if not table.buy_in_min <= buy_in <= table.buy_in_max:
            raise BuyInOutOfRange(amount=buy_in, minimum=table.buy_in_min, maximum=table.buy_in_max)
        data = {"seat": seat_number, "player_id": player_id, "buy_in": buy_in, "at": iso(now)}
        _chips_in(table, player_id, buy_in, et.SAT_DOWN, data, key=f"{idempotency_key}:ledger", now=now)
        seat = seat_of(table, player_id)  # the projector's
        maybe_start_soon(table, now)
        return SeatResult(table.pk, seat.seat_number, seat.stack, seat.sitting_out, buy_in)

    with transaction.atomic():
        return once(idempotency_key, "poker.sit_down", request, run, SeatResult)


def top_up(*, table_id: int, player_id: int, amount: int, idempotency_key: str, now: datetime) -> SeatResult:
    """Add ``amount`` chips from the wallet between hands (not while the seat is
    dealt into the hand being played; a seat taken after the deal may): the stack
    may not exceed the maximum buy-in.
    Refusals: ``poker_not_seated``, ``poker_in_hand``,
    ``poker_buy_in_out_of_range``, ``insufficient_funds``."""
    request = {"table": table_id, "player": player_id, "amount": amount}

    def run() -> SeatResult:
        table = lock_table(table_id)
        if table.tournament_id is not None:
            raise TournamentTable(table_id=table_id)
        seat = seat_of(table, player_id)
        if amount <= 0 or seat.stack + amount > table.buy_in_max:
            raise BuyInOutOfRange(amount=amount, stack=seat.stack, maximum=table.buy_in_max)
        hand = current_hand(table)
        if hand is not None and dealt_in(hand, seat):
            raise InHand(hand_id=hand.hand_id)
        data = {"seat": seat.seat_number, "player_id": player_id, "amount": amount, "stack": seat.stack + amount,
                "at": iso(now)}  # fmt: skip
        _chips_in(table, player_id, amount, et.TOPPED_UP, data, key=f"{idempotency_key}:ledger", now=now, seat=seat)
        maybe_start_soon(table, now)
        return SeatResult(table.pk, seat.seat_number, seat.stack, seat.sitting_out, amount)

    with transaction.atomic():
        return once(idempotency_key, "poker.top_up", request, run, SeatResult)


def _free_seat(table: PokerTable, seat: PokerSeat, *, reason: str, actor: str, key: str, now: datetime) -> int:
    """Chips back to the wallet, the seat freed (by its projector). Returns the chips moved."""
    data = {"seat": seat.seat_number, "player_id": seat.player_id, "amount": seat.stack, "reason": reason,
            "at": iso(now)}  # fmt: skip
    moved = seat.stack
    if seat.stack > 0:
        wallet = player_accounts(player_id=seat.player_id, currency=table.currency).wallet
        seat_acct = seat_account(table_id=table.pk, player_id=seat.player_id, currency=table.currency)
        transfer(
            debit_account=seat_acct, credit_account=wallet, amount=seat.stack, currency=table.currency,
            idempotency_key=key, kind="cash_out",
            cause=StreamAppend(et.table_stream(table.pk), None, [NewEvent(et.STOOD_UP, data)], {"actor": actor}),
        )  # fmt: skip
        project_new(et.table_stream(table.pk), [NewEvent(et.STOOD_UP, data)], {"actor": actor}, at=now,
                    using=[PokerSeatProjector(seats=[seat])])  # fmt: skip
    else:
        table_append(table, et.STOOD_UP, data, actor, seats=[seat])
    return moved


def stand_up(*, table_id: int, player_id: int, idempotency_key: str, now: datetime) -> SeatResult:
    """Leave the table: every chip back to the wallet, the seat freed.
    Refused while the player is still in the hand being played
    (``poker_in_hand``: fold or wait for the hand to end)."""
    request = {"table": table_id, "player": player_id}

    def run() -> SeatResult:
        table = lock_table(table_id)
        if table.tournament_id is not None:
            raise TournamentTable(table_id=table_id)
        seat = seat_of(table, player_id)
        if in_live_hand(table, seat):
            raise InHand(hand_id=table.current_hand_id)
        number = seat.seat_number
        moved = _free_seat(
            table, seat, reason="left", actor=f"user:{player_id}", key=f"{idempotency_key}:ledger", now=now
        )
        return SeatResult(table.pk, number, 0, False, moved)

    with transaction.atomic():
        return once(idempotency_key, "poker.stand_up", request, run, SeatResult)


def sit_out_seat(
    table: PokerTable, seat: PokerSeat, *, reason: str, actor: str, now: datetime, code: str | None = None
) -> None:
    """Sit the seat out (event ``poker_table.sat_out`` with ``reason``, and the
    refusal's ``code`` for ``responsible_gaming``); reserved for the table's
    reservation time, then freed with its chips back to the wallet."""
    reserved_until = now + timedelta(seconds=table.reservation_seconds)
    data = {"seat": seat.seat_number, "player_id": seat.player_id, "reason": reason,
            "reserved_until": iso(reserved_until), "at": iso(now)}  # fmt: skip
    if code is not None:
        data["code"] = code
    table_append(table, et.SAT_OUT, data, actor, seats=[seat])


def sit_out_unready(table: PokerTable, now: datetime) -> None:
    """Before a hand is dealt (seed 001 and issue #22): every seat that would be
    dealt in sits out, reserved, when its player is not present at the table
    (``disconnected``: "not part of games that start after disconnection", no
    blinds posted) or when responsible gaming stops them now (exclusion,
    cool-off, session or loss limit: ``responsible_gaming`` with the refusal's
    ``code``, also sent to them on the table's websocket feed)."""
    seats = eligible(table)
    away = presence.absent(family=presence.POKER, table_id=table.pk, player_ids=[s.player_id for s in seats], at=now)
    for seat in seats:
        if seat.player_id in away:
            sit_out_seat(table, seat, reason=DISCONNECTED, actor=DEALER, now=now)
            continue
        try:
            assert_may_wager(player_id=seat.player_id, amount=0, currency=table.currency, now=now)
        except ResponsibleGamingRefusal as refusal:
            sit_out_seat(table, seat, reason=RESPONSIBLE_GAMING, actor=DEALER, now=now, code=refusal.code)


def sit_out(*, table_id: int, player_id: int, now: datetime) -> SeatResult:
    """Sit out from the next hand (a hand the player is in is played on);
    the seat is reserved for the table's reservation time, then freed."""
    with transaction.atomic():
        table = lock_table(table_id)
        seat = seat_of(table, player_id)
        if not seat.sitting_out:
            sit_out_seat(table, seat, reason="player", actor=f"user:{player_id}", now=now)
        return SeatResult(table.pk, seat.seat_number, seat.stack, True, 0)


def sit_in(*, table_id: int, player_id: int, now: datetime) -> SeatResult:
    """Be dealt in again from the next hand (``poker_no_chips`` with an empty
    stack: add money first; the responsible-gaming refusals, e.g.
    ``self_excluded`` while cooling off). The thinking time bank is refilled."""
    with transaction.atomic():
        table = lock_table(table_id)
        seat = seat_of(table, player_id)
        if seat.stack <= 0:
            raise NoChips(table_id=table_id)
        if seat.sitting_out:
            assert_may_wager(player_id=player_id, amount=0, currency=table.currency, now=now)
            seat.time_bank_left = float(table.time_bank_seconds)  # pacing, not a projection
            seat.save(update_fields=["time_bank_left"])
            data = {"seat": seat.seat_number, "player_id": player_id, "at": iso(now)}
            table_append(table, et.SAT_IN, data, f"user:{player_id}", seats=[seat])
            maybe_start_soon(table, now)
        return SeatResult(table.pk, seat.seat_number, seat.stack, False, 0)


def rejoin(*, table_id: int, player_id: int, now: datetime) -> bool:
    """Seed 001: a player back at the table (their websocket connected again)
    whose seat sat out because they were disconnected, and is still reserved,
    sits in again from the next hand (``poker_table.sat_in`` with ``rejoined``).
    True if they did; nothing happens for any other seat (none, not sitting
    out, sat out for another reason, no chips, or responsible gaming refuses)."""
    waiting = PokerSeat.objects.filter(table_id=table_id, player_id=player_id, sitting_out=True,
                                       sat_out_reason=DISCONNECTED)  # fmt: skip
    if not waiting.exists():  # the common case: no lock taken
        return False
    with transaction.atomic():
        table = lock_table(table_id)
        seat = table.seats.filter(player_id=player_id).first()
        if seat is None or not seat.sitting_out or seat.sat_out_reason != DISCONNECTED or seat.stack <= 0:
            return False
        try:
            assert_may_wager(player_id=player_id, amount=0, currency=table.currency, now=now)
        except ResponsibleGamingRefusal:
            return False
        data = {"seat": seat.seat_number, "player_id": player_id, "rejoined": True, "at": iso(now)}
        table_append(table, et.SAT_IN, data, f"user:{player_id}", seats=[seat])
        maybe_start_soon(table, now)
        return True


def free_expired_seats(table: PokerTable, now: datetime) -> int:
    """Free the seats whose reservation ran out (chips back to the wallet),
    except a player's who is still in the hand being played."""
    freed = 0
    if table.tournament_id is not None:  # seed 001: unlimited time to re-join a tournament
        return 0
    expired = table.seats.filter(sitting_out=True, reserved_until__lte=now).order_by("seat_number")
    for seat in expired:
        if in_live_hand(table, seat):
            continue
        key = f"poker-free:{table.pk}:{seat.player_id}:{iso(seat.reserved_until)}"
        _free_seat(table, seat, reason="reservation_expired", actor=DEALER, key=key, now=now)
        freed += 1
    return freed
