"""Poker table services: seats, chips, hands, pacing (docs/poker.md, "Tables").

Every function is keyword-only and runs in one transaction that locks the
table row first, so the dealer and the players of one table never
interleave. The pure engine (``games.poker.engine``) decides; this layer
deals from a securely shuffled deck, appends the events and moves the chips
through the ledger in the same transaction:

- sit down / add money: wallet -> the player's ``poker_seat`` account;
  stand up or a freed seat: ``poker_seat`` -> wallet;
- antes, blinds and bets: ``poker_seat`` -> the hand's ``poker_pot``;
  uncalled bets and pots won: ``poker_pot`` -> ``poker_seat``; the rake:
  ``poker_pot`` -> the table's ``rake`` account. A finished hand's pot
  account is back at zero;
- a voided hand (operator malfunction control, ``void_hand``): what each
  player put in, ``poker_pot`` -> ``poker_seat``; no rake, the pot at zero.

Player commands carry an idempotency key: a retry returns the first result
and changes nothing. Dealer steps are idempotent by the table's phase
sequence (``advance_table`` with a stale ``expected_seq`` does nothing).
Whenever the table's deadline changes, ``games.poker.advance`` is enqueued
for it once the transaction commits (the house tables' dealer mechanism).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from django.db import connection, transaction

from casino.audit import operator_actor, record_operator_action
from casino.errors import DomainError, required_reason
from casino.responsible_gaming import assert_may_wager
from games.cards.shuffle import RandomSource, SecureRandomSource, shuffled_deck
from games.house.models import HouseRound
from games.poker import event_types as et
from games.poker.engine import errors as engine_errors
from games.poker.engine.button import deal_draw, draw_for_button, next_button
from games.poker.engine.events import (
    ActionTaken,
    AntePosted,
    BlindPosted,
    Event,
    PotAwarded,
    RakeTaken,
    UncalledBetReturned,
    event_from_dict,
)
from games.poker.engine.hand import (
    Act,
    Action,
    Command,
    HandState,
    Phase,
    SeatSpec,
    StartHand,
    apply,
    legal_actions,
    next_deal,
    step,
)
from games.poker.engine.rules import HandConfig, RakeRule, Variant, seed_rake_rule
from games.poker.errors import (
    AlreadySeated,
    BuyInOutOfRange,
    HandNotPaused,
    HandPaused,
    HandVoided,
    InHand,
    InvalidAction,
    InvalidSeat,
    NoChips,
    NoHand,
    NotInHand,
    NotSeated,
    PokerTableClosed,
    PokerTableNotFound,
    PotMismatch,
    SeatTaken,
)
from games.poker.models import PokerHand, PokerHandPlayer, PokerSeat, PokerTable, RakeMode
from ledger.models import AccountKind
from ledger.services import (
    EventRef,
    NewEvent,
    StreamAppend,
    TransferSpec,
    append_events,
    balance_of,
    ensure_account,
    player_accounts,
    read_stream,
    settle_batch,
    transfer,
)
from ledger.services.events import now as ledger_now
from ledger.services.postings import claim, record_result, request_hash

log = logging.getLogger(__name__)

IDLE, HAND, BETWEEN, PAUSED = "idle", "hand", "between", "paused"
DEALER = "dealer"
R = TypeVar("R")


# --- accounts ---------------------------------------------------------------------------------


def seat_account(*, table_id: int, player_id: int, currency: str) -> int:
    """The player's chips at the table (``poker_seat``)."""
    return ensure_account(
        kind=AccountKind.POKER_SEAT, owner=f"poker-table:{table_id}:player:{player_id}", currency=currency
    )


def pot_account(*, hand_id: str, currency: str) -> int:
    """The hand's pot (``poker_pot``): zero again once the hand is over."""
    return ensure_account(kind=AccountKind.POKER_POT, owner=f"poker-hand:{hand_id}", currency=currency)


def rake_account(*, table_id: int, currency: str) -> int:
    return ensure_account(kind=AccountKind.RAKE, owner=f"poker-table:{table_id}", currency=currency)


# --- results ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeatResult:
    table_id: int
    seat_number: int
    stack: int
    sitting_out: bool
    moved: int  # chips moved by this command (buy-in, top-up, cash-out)


@dataclass(frozen=True)
class ActResult:
    hand_id: str
    seat_number: int
    action: str
    amount: int  # chips the player added
    stack: int
    phase: str
    actor_seat: int | None
    deadline: str | None


# --- helpers ----------------------------------------------------------------------------------


def iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def get_table(*, table_id: int) -> PokerTable:
    try:
        return PokerTable.objects.get(pk=table_id)
    except (PokerTable.DoesNotExist, ValueError, TypeError):
        raise PokerTableNotFound(table_id=table_id) from None


def _lock(table_id: int) -> PokerTable:
    try:
        return PokerTable.objects.select_for_update().get(pk=table_id)
    except (PokerTable.DoesNotExist, ValueError, TypeError):
        raise PokerTableNotFound(table_id=table_id) from None


def _once(key: str, command: str, request: Mapping[str, Any], run: Callable[[], R], make: Callable[..., R]) -> R:
    """Run ``run`` once per idempotency key (inside the caller's transaction)."""
    with connection.cursor() as cursor:
        first = claim(cursor, key=key, command=command, digest=request_hash(command, request), at=ledger_now())
    if first is not None:
        return make(**first)
    result = run()
    with connection.cursor() as cursor:
        record_result(cursor, key=key, result=asdict(result))  # type: ignore[call-overload]
    return result


def schedule(table: PokerTable) -> None:
    """Enqueue ``games.poker.advance`` for the table's deadline once the
    transaction commits (nothing is scheduled if it rolls back)."""
    if table.deadline is None:
        return
    table_id, seq, deadline = table.pk, table.phase_seq, table.deadline

    def enqueue() -> None:
        from games.poker.tasks import advance_poker_table_task

        advance_poker_table_task.apply_async(args=(table_id, seq), eta=deadline)

    transaction.on_commit(enqueue)


def _set_table(table: PokerTable, *, phase: str, deadline: datetime | None, **fields: Any) -> None:
    table.phase = phase
    table.phase_seq += 1
    table.deadline = deadline
    for name, value in fields.items():
        setattr(table, name, value)
    PokerTable.objects.filter(pk=table.pk).update(phase=phase, phase_seq=table.phase_seq, deadline=deadline, **fields)
    schedule(table)


def _table_append(table: PokerTable, event_type: str, data: dict[str, Any], actor: str) -> None:
    append_events(
        stream_id=et.table_stream(table.pk),
        expected_version=None,
        events=[NewEvent(event_type, data)],
        metadata={"actor": actor},
    )


def _eligible(table: PokerTable) -> list[PokerSeat]:
    """Seats dealt into the next hand: not sitting out, with chips."""
    return list(table.seats.filter(sitting_out=False, stack__gt=0).order_by("seat_number"))


def _maybe_start_soon(table: PokerTable, now: datetime) -> None:
    """An idle table with two players ready deals after the pause between hands."""
    if table.phase == IDLE and table.is_open and len(_eligible(table)) >= 2:
        _set_table(table, phase=BETWEEN, deadline=now + timedelta(seconds=table.between_hands_seconds))


def _current_hand(table: PokerTable) -> PokerHand | None:
    if not table.current_hand_id:
        return None
    hand = PokerHand.objects.filter(hand_id=table.current_hand_id).first()
    return hand if hand is not None and hand.status == "playing" else None


def _seat_of(table: PokerTable, player_id: int) -> PokerSeat:
    seat = PokerSeat.objects.filter(table=table, player_id=player_id).first()
    if seat is None:
        raise NotSeated(table_id=table.pk)
    return seat


def load_hand(hand_id: str) -> tuple[HandState | None, list[str], list[Any]]:
    """(engine state, deck, every recorded event) of a hand, from its stream."""
    recorded = read_stream(stream_id=et.hand_stream(hand_id))
    state: HandState | None = None
    deck: list[str] = []
    for event in recorded:
        if event.type in et.ENGINE_EVENT_TYPES:
            state = apply(state, event_from_dict({"type": event.type, **event.data}))
        elif event.type == et.SHUFFLED:
            deck = list(event.data["deck"])
    return state, deck, recorded


def engine_events(recorded: Sequence[Any]) -> list[Event]:
    """The engine's events of a hand stream (the hand history proper)."""
    return [event_from_dict({"type": e.type, **e.data}) for e in recorded if e.type in et.ENGINE_EVENT_TYPES]


def _in_live_hand(table: PokerTable, player_id: int) -> bool:
    """Dealt into the running hand and not folded."""
    hand = _current_hand(table)
    if hand is None or str(player_id) not in {str(p) for p in hand.players.values()}:
        return False
    state, _, _ = load_hand(hand.hand_id)
    if state is None:
        return False
    return any(p.player_id == str(player_id) and not p.folded for p in state.players)


# --- seats and chips ----------------------------------------------------------------------------


def _chips_in(
    table: PokerTable, player_id: int, amount: int, event_type: str, data: dict[str, Any], *, key: str, now: datetime
) -> None:
    """Wallet -> seat account, caused by the table event (buy-in or top-up).
    Responsible gaming refuses it like a stake (exclusion, limits)."""
    assert_may_wager(player_id=player_id, amount=amount, currency=table.currency, now=now)
    transfer(
        debit_account=player_accounts(player_id=player_id, currency=table.currency).wallet,
        credit_account=seat_account(table_id=table.pk, player_id=player_id, currency=table.currency),
        amount=amount,
        currency=table.currency,
        idempotency_key=key,
        kind="buy_in" if event_type == et.SAT_DOWN else "top_up",
        cause=StreamAppend(
            et.table_stream(table.pk), None, [NewEvent(event_type, data)], {"actor": f"user:{player_id}"}
        ),
    )


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
        table = _lock(table_id)
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
        seat = PokerSeat.objects.create(
            table=table, player_id=player_id, seat_number=seat_number, stack=buy_in,
            time_bank_left=float(table.time_bank_seconds), joined_at=now,
        )  # fmt: skip
        _maybe_start_soon(table, now)
        return SeatResult(table.pk, seat.seat_number, seat.stack, seat.sitting_out, buy_in)

    with transaction.atomic():
        return _once(idempotency_key, "poker.sit_down", request, run, SeatResult)


def top_up(*, table_id: int, player_id: int, amount: int, idempotency_key: str, now: datetime) -> SeatResult:
    """Add ``amount`` chips from the wallet between hands (not while dealt into
    the hand being played): the stack may not exceed the maximum buy-in.
    Refusals: ``poker_not_seated``, ``poker_in_hand``,
    ``poker_buy_in_out_of_range``, ``insufficient_funds``."""
    request = {"table": table_id, "player": player_id, "amount": amount}

    def run() -> SeatResult:
        table = _lock(table_id)
        seat = _seat_of(table, player_id)
        if amount <= 0 or seat.stack + amount > table.buy_in_max:
            raise BuyInOutOfRange(amount=amount, stack=seat.stack, maximum=table.buy_in_max)
        hand = _current_hand(table)
        if hand is not None and player_id in hand.players.values():
            raise InHand(hand_id=hand.hand_id)
        data = {"seat": seat.seat_number, "player_id": player_id, "amount": amount, "at": iso(now)}
        _chips_in(table, player_id, amount, et.TOPPED_UP, data, key=f"{idempotency_key}:ledger", now=now)
        seat.stack += amount
        seat.save(update_fields=["stack"])
        _maybe_start_soon(table, now)
        return SeatResult(table.pk, seat.seat_number, seat.stack, seat.sitting_out, amount)

    with transaction.atomic():
        return _once(idempotency_key, "poker.top_up", request, run, SeatResult)


def _free_seat(table: PokerTable, seat: PokerSeat, *, reason: str, actor: str, key: str, now: datetime) -> int:
    """Chips back to the wallet, the seat freed. Returns the chips moved."""
    data = {"seat": seat.seat_number, "player_id": seat.player_id, "amount": seat.stack, "reason": reason,
            "at": iso(now)}  # fmt: skip
    if seat.stack > 0:
        wallet = player_accounts(player_id=seat.player_id, currency=table.currency).wallet
        seat_acct = seat_account(table_id=table.pk, player_id=seat.player_id, currency=table.currency)
        transfer(
            debit_account=seat_acct, credit_account=wallet, amount=seat.stack, currency=table.currency,
            idempotency_key=key, kind="cash_out",
            cause=StreamAppend(et.table_stream(table.pk), None, [NewEvent(et.STOOD_UP, data)], {"actor": actor}),
        )  # fmt: skip
    else:
        _table_append(table, et.STOOD_UP, data, actor)
    moved = seat.stack
    seat.delete()
    return moved


def stand_up(*, table_id: int, player_id: int, idempotency_key: str, now: datetime) -> SeatResult:
    """Leave the table: every chip back to the wallet, the seat freed.
    Refused while the player is still in the hand being played
    (``poker_in_hand``: fold or wait for the hand to end)."""
    request = {"table": table_id, "player": player_id}

    def run() -> SeatResult:
        table = _lock(table_id)
        seat = _seat_of(table, player_id)
        if _in_live_hand(table, player_id):
            raise InHand(hand_id=table.current_hand_id)
        number = seat.seat_number
        moved = _free_seat(
            table, seat, reason="left", actor=f"user:{player_id}", key=f"{idempotency_key}:ledger", now=now
        )
        return SeatResult(table.pk, number, 0, False, moved)

    with transaction.atomic():
        return _once(idempotency_key, "poker.stand_up", request, run, SeatResult)


def _sit_out(table: PokerTable, seat: PokerSeat, *, reason: str, actor: str, now: datetime) -> None:
    seat.sitting_out = True
    seat.reserved_until = now + timedelta(seconds=table.reservation_seconds)
    seat.save(update_fields=["sitting_out", "reserved_until"])
    data = {"seat": seat.seat_number, "player_id": seat.player_id, "reason": reason,
            "reserved_until": iso(seat.reserved_until), "at": iso(now)}  # fmt: skip
    _table_append(table, et.SAT_OUT, data, actor)


def sit_out(*, table_id: int, player_id: int, now: datetime) -> SeatResult:
    """Sit out from the next hand (a hand the player is in is played on);
    the seat is reserved for the table's reservation time, then freed."""
    with transaction.atomic():
        table = _lock(table_id)
        seat = _seat_of(table, player_id)
        if not seat.sitting_out:
            _sit_out(table, seat, reason="player", actor=f"user:{player_id}", now=now)
        return SeatResult(table.pk, seat.seat_number, seat.stack, True, 0)


def sit_in(*, table_id: int, player_id: int, now: datetime) -> SeatResult:
    """Be dealt in again from the next hand (``poker_no_chips`` with an empty
    stack: add money first). The time bank is refilled."""
    with transaction.atomic():
        table = _lock(table_id)
        seat = _seat_of(table, player_id)
        if seat.stack <= 0:
            raise NoChips(table_id=table_id)
        if seat.sitting_out:
            seat.sitting_out = False
            seat.reserved_until = None
            seat.time_bank_left = float(table.time_bank_seconds)
            seat.save(update_fields=["sitting_out", "reserved_until", "time_bank_left"])
            data = {"seat": seat.seat_number, "player_id": player_id, "at": iso(now)}
            _table_append(table, et.SAT_IN, data, f"user:{player_id}")
            _maybe_start_soon(table, now)
        return SeatResult(table.pk, seat.seat_number, seat.stack, False, 0)


def free_expired_seats(table: PokerTable, now: datetime) -> int:
    """Free the seats whose reservation ran out (chips back to the wallet),
    except a player's who is still in the hand being played."""
    freed = 0
    expired = table.seats.filter(sitting_out=True, reserved_until__lte=now).order_by("seat_number")
    for seat in expired:
        if _in_live_hand(table, seat.player_id):
            continue
        key = f"poker-free:{table.pk}:{seat.player_id}:{iso(seat.reserved_until)}"
        _free_seat(table, seat, reason="reservation_expired", actor=DEALER, key=key, now=now)
        freed += 1
    return freed


# --- hands ----------------------------------------------------------------------------------------


def game_number_for(table: PokerTable, now: datetime) -> str:
    """``CODE-YYYYMMDD-HHMMSS`` (GMT), ``-2``, ``-3``... when taken (unique
    across poker hands and house rounds)."""
    base = f"{table.code}-{now.astimezone(UTC):%Y%m%d-%H%M%S}"
    number, n = base, 1
    while PokerHand.objects.filter(hand_id=number).exists() or HouseRound.objects.filter(game_number=number).exists():
        n += 1
        number = f"{base}-{n}"
    return number


def rake_rule(table: PokerTable, players: int) -> RakeRule | None:
    if table.rake_mode == RakeMode.NONE:
        return None
    if table.rake_mode == RakeMode.CUSTOM:
        return RakeRule(table.rake_percent_bp, table.rake_minimum, table.rake_cap, table.no_flop_no_drop)
    return seed_rake_rule(
        Variant(table.variant),
        players=players,
        small_blind=table.small_blind,
        currency=table.currency,
        no_flop_no_drop=table.no_flop_no_drop,
    )


def hand_config(table: PokerTable, players: int) -> HandConfig:
    return HandConfig(
        variant=Variant(table.variant),
        blinds_or_straddles=(table.small_blind, table.big_blind),
        ante=table.ante,
        rake=rake_rule(table, players),
    )


def _money(events: Sequence[tuple[int, Event]], state: HandState, table: PokerTable, hand: PokerHand,
           stream: str) -> list[TransferSpec]:  # fmt: skip
    """The ledger legs of engine events (``(stream version, event)`` pairs)."""
    currency = table.currency
    pot = pot_account(hand_id=hand.hand_id, currency=currency)
    accounts: dict[int, int] = {}

    def seat_acct(seat: int) -> int:
        if seat not in accounts:
            pid = int(state.players[state.positions[seat]].player_id)
            accounts[seat] = seat_account(table_id=table.pk, player_id=pid, currency=currency)
        return accounts[seat]

    legs: list[TransferSpec] = []
    for version, event in events:
        ref = EventRef(stream, version)
        if isinstance(event, AntePosted | BlindPosted | ActionTaken) and event.amount > 0:
            legs.append(TransferSpec(seat_acct(event.seat), pot, event.amount, ref, "bet"))
        elif isinstance(event, UncalledBetReturned) and event.amount > 0:
            legs.append(TransferSpec(pot, seat_acct(event.seat), event.amount, ref, "uncalled"))
        elif isinstance(event, RakeTaken) and event.amount > 0:
            legs.append(TransferSpec(pot, rake_account(table_id=table.pk, currency=currency), event.amount, ref,
                                     "rake"))  # fmt: skip
        elif isinstance(event, PotAwarded):
            legs += [TransferSpec(pot, seat_acct(seat), chips, ref, "pot") for seat, chips in event.winners if chips]
    return legs


def _play(
    table: PokerTable,
    hand: PokerHand,
    state: HandState | None,
    deck: Sequence[str],
    commands: Sequence[Command],
    *,
    before: Sequence[NewEvent] = (),
    actor: str,
    key: str,
    now: datetime,
) -> tuple[HandState, list[Event]]:
    """Decide ``commands``, deal whatever the dealer deals next, record the
    events with their money, and update the projections and the table's
    deadline. One ``settle_batch``: all or nothing."""
    stream = et.hand_stream(hand.hand_id)
    new: list[NewEvent] = list(before)
    decided: list[tuple[int, Event]] = []

    def record(events: list[Event]) -> None:
        for event in events:
            data = event.to_dict()
            del data["type"]
            new.append(NewEvent(event.type, data))
            decided.append((hand.stream_version + len(new), event))

    for command in commands:
        state, events = step(state, command)
        record(events)
    assert state is not None
    while state.phase in (Phase.DEALING, Phase.BOARD):
        deal = next_deal(state, deck)
        assert deal is not None
        state, events = step(state, deal)
        record(events)
    deadline = None
    if state.phase is not Phase.COMPLETE:
        deadline = now + timedelta(seconds=table.turn_seconds)
        new.append(NewEvent(et.TURN, {"seat": state.acting_seat, "deadline": iso(deadline), "time_bank": False}))
    settle_batch(
        idempotency_key=key,
        currency=table.currency,
        appends=[StreamAppend(stream, hand.stream_version, new, {"actor": actor, "correlation_id": hand.hand_id})],
        transfers=_money(decided, state, table, hand, stream),
    )
    hand.stream_version += len(new)
    _project(table, hand, state, deadline, now)
    return state, [event for _, event in decided]


def _project(table: PokerTable, hand: PokerHand, state: HandState, deadline: datetime | None, now: datetime) -> None:
    seats = {s.player_id: s for s in table.seats.all()}
    for p in state.players:
        seat = seats.get(int(p.player_id))
        if seat is not None and seat.stack != p.stack:
            seat.stack = p.stack
            seat.save(update_fields=["stack"])
    hand.phase = state.phase.value
    hand.actor_seat = state.acting_seat
    hand.deadline = deadline
    hand.in_time_bank = False
    hand.pot = state.pot_total
    if state.phase is Phase.COMPLETE:
        hand.status = "complete"
        hand.rake = state.rake
        hand.ended_at = now
        for row in hand.participants.all():
            row.stack_after = state.players[state.positions[row.seat_number]].stack
            row.save(update_fields=["stack_after"])
    hand.save()
    if state.phase is Phase.COMPLETE:
        for seat in seats.values():
            if seat.stack == 0 and not seat.sitting_out:
                _sit_out(table, seat, reason="no_chips", actor=DEALER, now=now)
        _set_table(table, phase=BETWEEN, deadline=now + timedelta(seconds=table.between_hands_seconds))
    else:
        _set_table(table, phase=HAND, deadline=deadline)


def _start_hand(table: PokerTable, now: datetime, rng: RandomSource, deck: Sequence[str] | None) -> PokerHand | None:
    free_expired_seats(table, now)
    seats = _eligible(table)[:10]
    if not table.is_open or len(seats) < 2:
        _set_table(table, phase=IDLE, deadline=None)
        return None
    cards = list(deck) if deck is not None else [str(card) for card in shuffled_deck(rng)]
    hand_id = game_number_for(table, now)
    before = [NewEvent(et.SHUFFLED, {"deck": cards, "table_id": table.pk, "at": iso(now)})]
    numbers = [s.seat_number for s in seats]
    if table.button_seat is None:
        # First hand: high card for the button (suits break ties), from its own shuffled deck.
        draws = deal_draw(numbers, [str(card) for card in shuffled_deck(rng)])
        button = draw_for_button(draws)
        before.append(NewEvent(et.BUTTON_DRAWN, {"draws": {str(k): v for k, v in draws.items()}, "button": button}))
    else:
        button = next_button(table.button_seat, numbers)
    hand = PokerHand.objects.create(
        hand_id=hand_id, table=table, hand_number=table.hands_played + 1, currency=table.currency,
        players={str(s.seat_number): s.player_id for s in seats}, started_at=now,
    )  # fmt: skip
    PokerHandPlayer.objects.bulk_create(
        PokerHandPlayer(hand=hand, player_id=s.player_id, seat_number=s.seat_number, stack_before=s.stack,
                        started_at=now)
        for s in seats
    )  # fmt: skip
    PokerTable.objects.filter(pk=table.pk).update(
        current_hand_id=hand_id, button_seat=button, hands_played=table.hands_played + 1
    )
    table.current_hand_id, table.button_seat, table.hands_played = hand_id, button, table.hands_played + 1
    start = StartHand(
        hand_id,
        hand_config(table, len(seats)),
        tuple(SeatSpec(s.seat_number, str(s.player_id), s.stack) for s in seats),
        button,
    )
    _play(table, hand, None, cards, [start], before=before, actor=DEALER, key=f"poker:{hand_id}:start", now=now)
    return hand


def act(
    *,
    table_id: int,
    player_id: int,
    action: str,
    amount: int | None = None,
    idempotency_key: str,
    now: datetime,
) -> ActResult:
    """The player's action in the hand being played: fold, check, call, bet,
    raise (``amount`` = total bet for the round, "raise to") or all_in.
    Refusals: the engine's (``poker_not_your_turn``, ``poker_below_minimum``,
    ``poker_over_stack``, ``poker_not_fixed_limit_size``,
    ``poker_player_folded``, ...) and ``poker_not_seated``, ``poker_no_hand``,
    ``poker_hand_paused``, ``poker_hand_voided``, ``poker_not_in_hand``,
    ``poker_invalid_action``."""
    if action not in {a.value for a in Action}:
        raise InvalidAction(action=str(action))
    if amount is not None and (isinstance(amount, bool) or not isinstance(amount, int) or amount < 0):
        raise InvalidAction(amount=str(amount))
    request = {"table": table_id, "player": player_id, "action": action, "amount": amount}

    def run() -> ActResult:
        table = _lock(table_id)
        seat = _seat_of(table, player_id)
        hand = PokerHand.objects.filter(hand_id=table.current_hand_id).first() if table.current_hand_id else None
        if hand is None:
            raise NoHand(table_id=table_id)
        if table.phase == PAUSED:
            raise HandPaused(hand_id=hand.hand_id)
        if hand.status == "voided":
            raise HandVoided(hand_id=hand.hand_id)
        state, deck, _ = load_hand(hand.hand_id)
        assert state is not None
        if state.phase is Phase.COMPLETE:
            raise engine_errors.HandComplete(hand_id=hand.hand_id)
        position = state.positions.get(seat.seat_number)
        if position is None or state.players[position].player_id != str(player_id):
            raise NotInHand(hand_id=hand.hand_id)
        if hand.in_time_bank and state.acting_seat == seat.seat_number and hand.deadline is not None:
            # Acting inside the time bank keeps what is left of it.
            seat.time_bank_left = max(0.0, (hand.deadline - now).total_seconds())
            seat.save(update_fields=["time_bank_left"])
        new_state, events = _play(
            table, hand, state, deck, [Act(seat.seat_number, Action(action), amount)],
            actor=f"user:{player_id}", key=f"{idempotency_key}:ledger", now=now,
        )  # fmt: skip
        taken = events[0]
        assert isinstance(taken, ActionTaken)
        return ActResult(
            hand.hand_id, seat.seat_number, action, taken.amount, new_state.players[position].stack,
            new_state.phase.value, new_state.acting_seat, iso(hand.deadline),
        )  # fmt: skip

    with transaction.atomic():
        return _once(idempotency_key, "poker.act", request, run, ActResult)


def advance_table(
    *,
    table_id: int,
    expected_seq: int,
    now: datetime,
    rng: RandomSource | None = None,
    deck: Sequence[str] | None = None,
) -> PokerTable | None:
    """The dealer's step when the table's deadline passes: deal the next hand
    (after the pause between hands), or run the actor's clock out: first the
    time bank, then the action is check if allowed, else fold, and the player
    sits out. ``None`` and no change when ``expected_seq`` is stale, the
    deadline is not due or the hand is paused. ``deck`` (tests only) replaces the shuffle."""
    rng = rng or SecureRandomSource()
    with transaction.atomic():
        try:
            table = _lock(table_id)
        except PokerTableNotFound:
            return None
        if table.phase_seq != expected_seq or table.phase in (IDLE, PAUSED):
            return None
        if table.deadline is not None and table.deadline > now:
            return None
        if table.phase == BETWEEN:
            _start_hand(table, now, rng, deck)
            return table
        hand = PokerHand.objects.get(hand_id=table.current_hand_id)
        state, cards, _ = load_hand(hand.hand_id)
        assert state is not None
        legal = legal_actions(state)
        if legal is None:  # cannot happen after a complete step; recover by moving on
            _set_table(table, phase=BETWEEN, deadline=now)
            return table
        seat = PokerSeat.objects.filter(table=table, seat_number=legal.seat).first()
        if seat is not None and not hand.in_time_bank and seat.time_bank_left > 0:
            _start_time_bank(table, hand, seat, now)
            return table
        action = Action.CHECK if legal.call_amount == 0 else Action.FOLD
        timed_out = NewEvent(et.TIMED_OUT, {"seat": legal.seat, "action": action.value, "at": iso(now)})
        _play(
            table, hand, state, cards, [Act(legal.seat, action)], before=[timed_out], actor=DEALER,
            key=f"poker:{hand.hand_id}:timeout:{hand.stream_version}", now=now,
        )  # fmt: skip
        if seat is not None and not seat.sitting_out:
            _sit_out(table, seat, reason="timeout", actor=DEALER, now=now)
        return table


def _start_time_bank(table: PokerTable, hand: PokerHand, seat: PokerSeat, now: datetime) -> None:
    deadline = now + timedelta(seconds=seat.time_bank_left)
    append_events(
        stream_id=et.hand_stream(hand.hand_id),
        expected_version=hand.stream_version,
        events=[NewEvent(et.TURN, {"seat": seat.seat_number, "deadline": iso(deadline), "time_bank": True})],
        metadata={"actor": DEALER, "correlation_id": hand.hand_id},
    )
    hand.stream_version += 1
    hand.deadline = deadline
    hand.in_time_bank = True
    hand.save(update_fields=["stream_version", "deadline", "in_time_bank"])
    seat.time_bank_left = 0.0
    seat.save(update_fields=["time_bank_left"])
    _set_table(table, phase=HAND, deadline=deadline)


def sweep(*, now: datetime) -> dict[str, int]:
    """Beat backstop: tables overdue by more than the grace are advanced,
    expired reservations at idle tables freed, ready idle tables started. A
    hand whose deadline passed more than ``CASINO_DEALER_GONE_VOID_SECONDS``
    ago had no dealer that long: RULES.md voids it ("dealer_gone", every chip
    returned) rather than time out players who could not act meanwhile."""
    from django.conf import settings

    grace = timedelta(seconds=settings.CASINO_SWEEP_GRACE_SECONDS)
    gone = timedelta(seconds=settings.CASINO_DEALER_GONE_VOID_SECONDS)
    done = {"advanced": 0, "freed": 0, "started": 0, "voided": 0, "failed": 0}
    for table in PokerTable.objects.order_by("pk"):
        try:
            _sweep_table(table, now, grace, gone, done)
        except DomainError as exc:  # a refused step (paused meanwhile): not a crash
            log.info("poker sweep: table %s: %s", table.code, exc.code)
        except Exception:
            # One table's failure (a bug, a lost connection) must not keep the
            # sweep from the tables after it; its step rolled back, and the next
            # sweep tries it again.
            log.exception("poker sweep: table %s failed", table.code)
            done["failed"] += 1
    return done


def _sweep_table(table: PokerTable, now: datetime, grace: timedelta, gone: timedelta, done: dict[str, int]) -> None:
    """One table of ``sweep``; adds what it did to ``done``."""
    if table.phase == HAND and table.deadline is not None and table.deadline < now - gone:
        try:
            void_hand(table_id=table.pk, actor="system", reason="dealer_gone", now=now, automatic=True)
            done["voided"] += 1
        except DomainError as exc:  # moved on meanwhile (paused, finished): nothing to void
            log.info("poker sweep: table %s: %s", table.code, exc.code)
        return
    if table.phase == IDLE:
        with transaction.atomic():
            locked = _lock(table.pk)
            if locked.phase != IDLE:
                return
            done["freed"] += free_expired_seats(locked, now)
            _maybe_start_soon(locked, now)
            done["started"] += locked.phase != IDLE
    elif (
        table.deadline is not None
        and table.deadline < now - grace
        and advance_table(table_id=table.pk, expected_seq=table.phase_seq, now=now) is not None
    ):
        done["advanced"] += 1


# --- malfunction: pause, resume, void (RULES.md, "Malfunction voids all pays and play") -----------


@dataclass(frozen=True)
class HandControlResult:
    table_id: int
    hand_id: str
    phase: str  # the table's: paused, hand, between
    phase_seq: int
    deadline: str | None
    status: str  # the hand's: playing | voided


def _control_result(table: PokerTable, hand: PokerHand) -> HandControlResult:
    return HandControlResult(table.pk, hand.hand_id, table.phase, table.phase_seq, iso(table.deadline), hand.status)


def _hand_in_play(table: PokerTable) -> PokerHand:
    """The table's hand being played (or paused), locked; ``poker_no_hand``,
    ``poker_hand_complete`` or ``poker_hand_voided`` otherwise."""
    hand = None
    if table.current_hand_id:
        hand = PokerHand.objects.select_for_update().filter(hand_id=table.current_hand_id).first()
    if hand is None:
        raise NoHand(table_id=table.pk)
    if hand.status == "complete":
        raise engine_errors.HandComplete(hand_id=hand.hand_id)
    if hand.status == "voided":
        raise HandVoided(hand_id=hand.hand_id)
    if table.phase not in (HAND, PAUSED):
        raise NoHand(table_id=table.pk, phase=table.phase)
    return hand


def _hand_append(hand: PokerHand, event_type: str, data: dict[str, Any], actor: str) -> None:
    append_events(
        stream_id=et.hand_stream(hand.hand_id),
        expected_version=hand.stream_version,
        events=[NewEvent(event_type, data)],
        metadata={"actor": actor, "correlation_id": hand.hand_id},
    )
    hand.stream_version += 1


def pause_hand(*, table_id: int, actor: str, reason: str, now: datetime) -> HandControlResult:
    """Operator pause (malfunction): the actor's clock stops (what was left is
    recorded in ``poker_hand.paused``), the table has no deadline, so no dealer
    step runs and every action is refused (``poker_hand_paused``) until the hand
    is resumed or voided. Refusals: ``reason_required``,
    ``poker_table_not_found``, ``poker_no_hand``, ``poker_hand_complete``,
    ``poker_hand_voided``, ``poker_hand_paused`` (already paused)."""
    reason = required_reason(reason)
    with transaction.atomic():
        table = _lock(table_id)
        hand = _hand_in_play(table)
        if table.phase == PAUSED:
            raise HandPaused(hand_id=hand.hand_id)
        remaining = None
        if hand.deadline is not None:
            remaining = max(0, int((hand.deadline - now).total_seconds() * 1000))
        data = {"reason": reason, "actor": actor, "at": iso(now), "seat": hand.actor_seat,
                "remaining_ms": remaining, "time_bank": hand.in_time_bank}  # fmt: skip
        _hand_append(hand, et.PAUSED, data, actor)
        hand.deadline = None
        hand.save(update_fields=["stream_version", "deadline"])
        _set_table(table, phase=PAUSED, deadline=None)
        return _control_result(table, hand)


def _last_pause(hand: PokerHand) -> Mapping[str, Any]:
    paused = [e for e in read_stream(stream_id=et.hand_stream(hand.hand_id)) if e.type == et.PAUSED]
    return paused[-1].data if paused else {}


def resume_hand(*, table_id: int, actor: str, now: datetime) -> HandControlResult:
    """Resume a paused hand: the actor's clock restarts with what it had left
    when paused (the full turn time if nothing was recorded), the dealer step
    is scheduled again. Refusals: ``poker_table_not_found``, ``poker_no_hand``,
    ``poker_hand_complete``, ``poker_hand_voided``, ``poker_hand_not_paused``."""
    with transaction.atomic():
        table = _lock(table_id)
        hand = _hand_in_play(table)
        if table.phase != PAUSED:
            raise HandNotPaused(hand_id=hand.hand_id, phase=table.phase)
        remaining = _last_pause(hand).get("remaining_ms")
        left = timedelta(milliseconds=remaining) if remaining is not None else timedelta(seconds=table.turn_seconds)
        deadline = now + left
        data = {"actor": actor, "at": iso(now), "seat": hand.actor_seat, "deadline": iso(deadline),
                "time_bank": hand.in_time_bank}  # fmt: skip
        _hand_append(hand, et.RESUMED, data, actor)
        hand.deadline = deadline
        hand.save(update_fields=["stream_version", "deadline"])
        _set_table(table, phase=HAND, deadline=deadline)
        return _control_result(table, hand)


def void_hand(*, table_id: int, actor: str, reason: str, now: datetime, automatic: bool = False) -> HandControlResult:
    """Void the hand in play or paused: every player gets back exactly the
    chips they put into it (``stack_before`` minus the engine's stack), from the
    hand's ``poker_pot`` to their ``poker_seat`` (to the wallet if they have
    left the table since folding), with ``poker_hand.voided`` in one batch. No
    rake, no pot awarded; the pot account ends at zero; the next hand follows
    after the pause between hands. Refusals as ``pause_hand`` (a paused hand
    may be voided) and ``poker_pot_mismatch`` (nothing changes). ``automatic``:
    the sweep's void of a hand whose dealer was gone too long (recorded as such)."""
    reason = required_reason(reason)
    with transaction.atomic():
        table = _lock(table_id)
        hand = _hand_in_play(table)
        state, _, _ = load_hand(hand.hand_id)
        assert state is not None
        stacks = {int(p.player_id): p.stack for p in state.players}
        rows = list(hand.participants.order_by("seat_number"))
        pot = pot_account(hand_id=hand.hand_id, currency=table.currency)
        in_pot = balance_of(account_id=pot)
        refunds = {row.player_id: row.stack_before - stacks[row.player_id] for row in rows}
        if any(amount < 0 for amount in refunds.values()) or sum(refunds.values()) != in_pot:
            raise PotMismatch(hand_id=hand.hand_id, pot=in_pot, refunds=sum(refunds.values()))
        seats = {s.player_id: s for s in table.seats.all()}
        stream = et.hand_stream(hand.hand_id)
        cause = EventRef(stream, hand.stream_version + 1)
        legs: list[TransferSpec] = []
        returned: list[dict[str, Any]] = []
        for row in rows:
            amount = refunds[row.player_id]
            to = "seat" if row.player_id in seats else "wallet"
            if amount:
                credit = (
                    seat_account(table_id=table.pk, player_id=row.player_id, currency=table.currency)
                    if to == "seat"
                    else player_accounts(player_id=row.player_id, currency=table.currency).wallet
                )
                legs.append(TransferSpec(pot, credit, amount, cause, "void_refund"))
            returned.append({"seat": row.seat_number, "player_id": row.player_id, "amount": amount, "to": to})
        data = {"reason": reason, "actor": actor, "at": iso(now), "street": state.street, "pot": in_pot,
                "refunds": returned, "automatic": automatic}  # fmt: skip
        settle_batch(
            idempotency_key=f"poker:{hand.hand_id}:void",
            currency=table.currency,
            appends=[StreamAppend(stream, hand.stream_version, [NewEvent(et.VOIDED, data)],
                                  {"actor": actor, "correlation_id": hand.hand_id})],
            transfers=legs,
        )  # fmt: skip
        hand.stream_version += 1
        for row in rows:
            seat = seats.get(row.player_id)
            if seat is not None and refunds[row.player_id]:
                seat.stack += refunds[row.player_id]
                seat.save(update_fields=["stack"])
            row.stack_after = row.stack_before
            row.save(update_fields=["stack_after"])
        hand.status = "voided"
        hand.ended_at = now
        hand.deadline = None
        hand.actor_seat = None
        hand.in_time_bank = False
        hand.save()
        _set_table(table, phase=BETWEEN, deadline=now + timedelta(seconds=table.between_hands_seconds))
        return _control_result(table, hand)


def operator_hand_control(
    *, table_id: int, operator: Any, action: str, reason: str = "", now: datetime | None = None
) -> HandControlResult:
    """An operator pauses, resumes or voids the table's hand (``action``), and the
    ``operator.action`` (``hand.<action>``, the operator's identity, the reason) is
    recorded in the same transaction. Used by the admin site and the operator REST
    API alike; refusals as ``pause_hand``, ``resume_hand``, ``void_hand``."""
    actor, now = operator_actor(operator), now or ledger_now()
    with transaction.atomic():
        if action == "pause":
            result = pause_hand(table_id=table_id, actor=actor, reason=reason, now=now)
        elif action == "resume":
            result = resume_hand(table_id=table_id, actor=actor, now=now)
        elif action == "void":
            result = void_hand(table_id=table_id, actor=actor, reason=reason, now=now)
        else:
            raise ValueError(f"unknown hand control {action!r}")
        code = PokerTable.objects.filter(pk=table_id).values_list("code", flat=True).first() or ""
        record_operator_action(
            operator=operator, action=f"hand.{action}", target=f"poker-hand:{result.hand_id}", reason=reason,
            details={"table": code, "hand_id": result.hand_id}, metadata={"table_id": table_id},
        )  # fmt: skip
    return result
