"""Poker hands (docs/poker.md, "Tables"): dealing a hand, the players'
actions, the dealer's step when the table's deadline passes, and the beat
sweeper.

Every use case is keyword-only and one transaction that locks the table row
first, so the dealer and the players of one table never interleave. The pure
engine (``games.poker.engine``) decides; this layer deals from a securely
shuffled deck, appends the events and moves the chips through the ledger in
one batch per step: antes, blinds and bets ``poker_seat`` -> the hand's
``poker_pot``; uncalled bets and pots won ``poker_pot`` -> ``poker_seat``; the
rake ``poker_pot`` -> the table's ``rake`` account. A finished hand's pot
account is back at zero. Player commands carry an idempotency key; dealer
steps are idempotent by the table's phase sequence (``advance_table`` with a
stale ``expected_seq`` does nothing). The game number, the row lock and the
scheduling of the next step come from ``games.tables.pacing``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction

from casino.responsible_gaming import note_wagers
from games.cards.shuffle import RandomSource, SecureRandomSource, shuffled_deck
from games.poker import event_types as et
from games.poker.engine import errors as engine_errors
from games.poker.engine.button import deal_draw, draw_for_button, next_button
from games.poker.engine.events import (
    ActionTaken,
    AntePosted,
    BlindPosted,
    Event,
    HoleCardsDealt,
    PotAwarded,
    RakeTaken,
    UncalledBetReturned,
)
from games.poker.engine.hand import (
    Act,
    Action,
    Command,
    HandState,
    Phase,
    SeatSpec,
    StartHand,
    legal_actions,
    next_deal,
    step,
)
from games.poker.engine.rules import HandConfig, RakeRule, Reopening, Variant, seed_rake_rule
from games.poker.errors import HandPaused, HandVoided, InvalidAction, NoHand, NotInHand, NotSeated, PokerTableNotFound
from games.poker.models import PokerHand, PokerSeat, PokerTable, RakeMode
from games.poker.projectors import project_hand
from games.poker.services.cards import deal_id as deal_id_of
from games.poker.services.cards import is_sealed_deck, revealed_leaves, sealed_hole_cards, shred
from games.poker.services.operator import void_hand
from games.poker.services.seats import DISCONNECTED, free_expired_seats, sit_out_seat, sit_out_unready
from games.poker.services.tables import (
    BETWEEN,
    DEALER,
    HAND,
    IDLE,
    PAUSED,
    WAITING,
    dealt_in_seats,
    eligible,
    hand_state,
    iso,
    lock_table,
    maybe_start_soon,
    once,
    pot_account,
    rake_account,
    remember_hand,
    seat_account,
    seat_of,
    seat_owner,
    set_table,
)
from games.poker.services.tournament_tables import check_tournament_player, prepare_tournament_hand, table_hand_done
from games.poker.store import act as store
from games.tables import pacing, presence
from games.tables.dealkeys import new_deal_key
from games.tables.fairness import SEALED_FIELD, DeckMismatch, OpenedDeck, open_committed_deck, shuffle_and_commit
from ledger.models import AccountKind
from ledger.services import (
    EventRef,
    NewEvent,
    StreamAppend,
    TransferSpec,
    append_events,
    count_stream_filtered,
)
from ledger.services.money import account_key
from ledger.services.postings import request_hash
from ledger.services.projectors import events_of
from ledger.services.small import settle_small_batch, small_batch_writes


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
        # The table's raise cap (fixed limit), the big blind counting as the preflop bet.
        raise_cap=table.raise_cap,
        blind_is_bet=True,
        heads_up_uncapped=table.heads_up_uncapped,
        reopening=Reopening.ACTED,
    )


def _money(events: Sequence[tuple[int, Event]], state: HandState, table: PokerTable, hand: PokerHand,
           stream: str, known: Mapping[str, int] | None = None) -> list[TransferSpec]:  # fmt: skip
    """The ledger legs of engine events (``(stream version, event)`` pairs).
    ``known``: account ids by key the caller read already (``games.poker.store.act``);
    an account not among them is looked up (and opened if new)."""
    currency = table.currency
    known = known or {}
    accounts: dict[int, int] = {}
    pot_id: list[int] = []  # looked up when the first leg needs it

    def pot() -> int:
        if not pot_id:
            found = known.get(account_key(AccountKind.POKER_POT.value, f"poker-hand:{hand.hand_id}", currency))
            pot_id.append(found or pot_account(hand_id=hand.hand_id, currency=currency))
        return pot_id[0]

    def seat_acct(seat: int) -> int:
        if seat not in accounts:
            pid = int(state.players[state.positions[seat]].player_id)
            owner = seat_owner(table_id=table.pk, player_id=pid)
            found = known.get(account_key(AccountKind.POKER_SEAT.value, owner, currency))
            accounts[seat] = found or seat_account(table_id=table.pk, player_id=pid, currency=currency)
        return accounts[seat]

    def rake() -> int:
        found = known.get(account_key(AccountKind.RAKE.value, f"poker-table:{table.pk}", currency))
        return found or rake_account(table_id=table.pk, currency=currency)

    legs: list[TransferSpec] = []
    for version, event in events:
        ref = EventRef(stream, version)
        if isinstance(event, AntePosted | BlindPosted | ActionTaken) and event.amount > 0:
            legs.append(TransferSpec(seat_acct(event.seat), pot(), event.amount, ref, "bet"))
        elif isinstance(event, UncalledBetReturned) and event.amount > 0:
            legs.append(TransferSpec(pot(), seat_acct(event.seat), event.amount, ref, "uncalled"))
        elif isinstance(event, RakeTaken) and event.amount > 0:
            legs.append(TransferSpec(pot(), rake(), event.amount, ref, "rake"))
        elif isinstance(event, PotAwarded):
            legs += [TransferSpec(pot(), seat_acct(seat), chips, ref, "pot") for seat, chips in event.winners if chips]
    return legs


def _play(
    table: PokerTable,
    hand: PokerHand,
    state: HandState | None,
    deck: OpenedDeck,
    commands: Sequence[Command],
    *,
    before: Sequence[NewEvent] = (),
    actor: str,
    key: str,
    now: datetime,
    seats: dict[int, PokerSeat] | None = None,
    accounts: dict[str, int] | None = None,
    head_hash: str | None = None,
) -> tuple[HandState, list[Event]]:
    """Decide ``commands``, deal whatever the dealer deals next, record the
    events with their money, and update the projections and the table's
    deadline. One ``settle_batch``: all or nothing. ``deck``: the hand's deck
    as the dealer opened it. Hole cards are recorded sealed for their players
    (``games.poker.services.cards``); when the hand is over, the leaves the
    table saw are recorded (``poker_hand.cards_revealed``) and the deal key is
    shredded, in the same transaction. ``accounts`` (ledger account ids by key) and
    ``head_hash`` (the hash of the stream's event at ``hand.stream_version``): read
    already in this transaction (``games.poker.store.act``), not read again."""
    stream = et.hand_stream(hand.hand_id)
    known = (hand.stream_version, state)  # the engine state the projector starts from
    new: list[NewEvent] = list(before)
    decided: list[tuple[int, Event]] = []

    sealed = is_sealed_deck(deck)

    def record(events: list[Event], after: HandState) -> None:
        hole = sealed_hole_cards(hand_id=hand.hand_id, state=after, opened=deck) if sealed and any(
            isinstance(event, HoleCardsDealt) for event in events) else {}  # fmt: skip
        for event in events:
            if isinstance(event, HoleCardsDealt) and sealed:
                new.append(NewEvent(event.type, hole[event.seat], et.HOLE_CARDS_SCHEMA))
            else:
                data = event.to_dict()
                del data["type"]
                new.append(NewEvent(event.type, data))
            decided.append((hand.stream_version + len(new), event))

    for command in commands:
        state, events = step(state, command)
        record(events, state)
    assert state is not None
    while state.phase in (Phase.DEALING, Phase.BOARD):
        deal = next_deal(state, deck.deck)
        assert deal is not None
        state, events = step(state, deal)
        record(events, state)
    ended = state.phase is Phase.COMPLETE
    if ended and sealed:
        # What the table saw, provable against the commitment; then the key goes (below).
        new.append(NewEvent(et.CARDS_REVEALED, {"revealed": revealed_leaves(state=state, opened=deck),
                                                "at": iso(now)}))  # fmt: skip
    if seats is None:
        seats = dealt_in_seats(hand)
    deadline = None
    if state.phase is not Phase.COMPLETE:
        away = table.tournament_id is not None and _away_in_tournament(table, seats.get(state.acting_seat or 0), now)
        # Seed 001: an absent tournament player is folded when their turn comes (at once).
        deadline = now if away else now + timedelta(seconds=table.turn_seconds)
        new.append(NewEvent(et.TURN, {"seat": state.acting_seat, "deadline": iso(deadline), "time_bank": False}))
    # ``at``: the step's time, which the hand's projection records (e.g. when it ended).
    metadata = {"actor": actor, "correlation_id": hand.hand_id, "at": iso(now)}
    if known[1] is None:
        metadata["currency"] = table.currency  # the deal: the chips' unit of the hand (its projection's)
    appends = [StreamAppend(stream, hand.stream_version, new, metadata, head_hash if hand.stream_version else None)]
    transfers = _money(decided, state, table, hand, stream, accounts)
    # A player's action (``act``): the batch goes out with the step's other writes, in one round trip.
    queued = store.deferring() and _queue_batch(key, table.currency, appends, transfers)
    if not queued:
        settle_small_batch(idempotency_key=key, currency=table.currency, appends=appends, transfers=transfers)
    recorded = events_of(stream_id=stream, first_version=hand.stream_version + 1, events=new, metadata=metadata,
                         at=now)  # fmt: skip
    # The hand row, its players, the table's; the engine's events as decided, not replayed.
    project_hand(recorded, hand=hand, state=known, table=table, seats=seats, decided=decided, after=state)
    if ended and sealed:
        shred(hand.hand_id)  # seed 001: the shuffled deck is not kept
    remember_hand(hand, state, deck)
    _project(table, state, deadline, now, seats)
    return state, [event for _, event in decided]


def _queue_batch(key: str, currency: str, appends: list[StreamAppend], transfers: list[TransferSpec]) -> bool:
    writes = small_batch_writes(idempotency_key=key, currency=currency, appends=appends, transfers=transfers)
    if writes is None:
        return False
    store.queue_batch(writes)
    return True


def _project(table: PokerTable, state: HandState, deadline: datetime | None, now: datetime,
             seats: dict[int, PokerSeat]) -> None:  # fmt: skip
    """The table's pacing after a step (the hand's rows and the seats' stacks
    are the projectors': ``project_hand``, which kept ``seats`` current)."""
    if state.phase is Phase.COMPLETE and table.tournament_id is not None:
        store.stop_deferring()  # the tournament's step reads the hand's rows
        table_hand_done(table, now)  # busts and balancing are the tournament's step
    elif state.phase is Phase.COMPLETE:
        broke = [seat for seat in seats.values() if seat.stack == 0 and not seat.sitting_out]
        if broke:
            store.stop_deferring()  # sitting a seat out writes its row again
        for seat in broke:
            sit_out_seat(table, seat, reason="no_chips", actor=DEALER, now=now)
        set_table(table, phase=BETWEEN, deadline=now + timedelta(seconds=table.between_hands_seconds))
    else:
        set_table(table, phase=HAND, deadline=deadline)


def _away_in_tournament(table: PokerTable, seat: PokerSeat | None, now: datetime) -> bool:
    """The tournament seat sits out or its player is not present."""
    if seat is None:
        return False
    return seat.sitting_out or not presence.is_present(
        family=presence.POKER, table_id=table.pk, player_id=seat.player_id, at=now
    )


def _start_hand(table: PokerTable, now: datetime, rng: RandomSource, deck: Sequence[str] | None) -> PokerHand | None:
    level = None
    if table.tournament_id is not None:
        # Seats are never freed and the away are dealt in (seed 001); the level's blinds.
        level = prepare_tournament_hand(table, now)
        if level is None:
            return None
    else:
        free_expired_seats(table, now)
        sit_out_unready(table, now)  # absent (seed 001) or stopped by responsible gaming: not dealt in
    seats = eligible(table)[:10]
    if not table.is_open or len(seats) < 2:
        set_table(table, phase=IDLE, deadline=None)
        return None
    # Shuffled and committed before the blinds (docs/fairness.md), sealed under the hand's own deal key.
    hand_id = pacing.game_number(table_code=table.code, now=now)
    deal_id = deal_id_of(hand_id)
    key = new_deal_key(deal_id=deal_id)
    shuffle = shuffle_and_commit(rng=rng, key=key, deal_id=deal_id, deck=deck)
    cards = open_committed_deck(commitment=shuffle.commitment, sealed_deck=shuffle.sealed_deck, key=key,
                                deal_id=deal_id)  # fmt: skip
    shuffled = {"commitment": shuffle.commitment, SEALED_FIELD: shuffle.sealed_deck, "table_id": table.pk,
                "at": iso(now)}  # fmt: skip
    if level is not None:
        shuffled["tournament_level"] = level  # the level the hand is dealt at
    before = [NewEvent(et.SHUFFLED, shuffled, et.SHUFFLED_SCHEMA)]
    numbers = [s.seat_number for s in seats]
    if table.button_seat is None:
        # First hand: high card for the button (suits break ties), from its own shuffled deck.
        draws = deal_draw(numbers, [str(card) for card in shuffled_deck(rng)])
        button = draw_for_button(draws)
        before.append(NewEvent(et.BUTTON_DRAWN, {"draws": {str(k): v for k, v in draws.items()}, "button": button}))
    else:
        button = next_button(table.button_seat, numbers)
    # The hand's row, its players and the table's hand columns are written by the
    # projectors from these events (``_play``: ``project_hand``).
    hand = PokerHand(hand_id=hand_id, table=table, stream_version=0)
    if table.tournament_id is None:  # tournament chips are no wager: the buy-in was
        note_wagers(player_ids=[s.player_id for s in seats], currency=table.currency, now=now)  # the play session
    start = StartHand(
        hand_id,
        hand_config(table, len(seats)),
        tuple(SeatSpec(s.seat_number, str(s.player_id), s.stack) for s in seats),
        button,
    )
    _play(table, hand, None, cards, [start], before=before, actor=DEALER, key=f"poker:{hand_id}:start", now=now,
          seats={s.seat_number: s for s in seats})  # fmt: skip
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
    ``poker_invalid_action``, ``deck_mismatch`` (``games.tables.fairness``)."""
    if action not in {a.value for a in Action}:
        raise InvalidAction(action=str(action))
    if amount is not None and (isinstance(amount, bool) or not isinstance(amount, int) or amount < 0):
        raise InvalidAction(amount=str(amount))
    request = {"table": table_id, "player": player_id, "action": action, "amount": amount}
    if connection.vendor == "postgresql" and type(table_id) is int:
        # The lean path: claim, lock and reads in one round trip (``games.poker.store.act``).
        digest = request_hash(ACT_COMMAND, request)
        with transaction.atomic():
            read = store.read_act(table_id=table_id, key=idempotency_key, command=ACT_COMMAND, digest=digest)
            if not read.claimed:
                return ActResult(**store.first_result(key=idempotency_key, command=ACT_COMMAND, digest=digest))
            if read.table is None:
                raise PokerTableNotFound(table_id=table_id)
            head_hash = read.head[1] if read.hand is not None and read.head is not None and read.head[0] == (
                read.hand.stream_version) else None  # fmt: skip
            # The hand's, the seats' and the table's UPDATEs and the result go in one round trip
            # (``_play`` sends them at once when the hand ends: the dealer's work then reads them).
            with store.deferred_writes():
                result = _act(read.table, read.hand, read.seats, player_id=player_id, action=action, amount=amount,
                              key=idempotency_key, now=now, accounts=read.accounts, head_hash=head_hash)  # fmt: skip
                store.save_result(key=idempotency_key, result=asdict(result))
            return result

    def run() -> ActResult:
        table = lock_table(table_id)
        hand = PokerHand.objects.filter(hand_id=table.current_hand_id).first() if table.current_hand_id else None
        # The seat rows dealt in; the player's is among them in the common case (one query for both).
        seats = dealt_in_seats(hand) if hand is not None else {}
        return _act(table, hand, seats, player_id=player_id, action=action, amount=amount, key=idempotency_key,
                    now=now)  # fmt: skip

    with transaction.atomic():
        return once(idempotency_key, ACT_COMMAND, request, run, ActResult)


ACT_COMMAND = "poker.act"


def _act(
    table: PokerTable,
    hand: PokerHand | None,
    seats: dict[int, PokerSeat],
    *,
    player_id: int,
    action: str,
    amount: int | None,
    key: str,
    now: datetime,
    accounts: dict[str, int] | None = None,
    head_hash: str | None = None,
) -> ActResult:
    """``act`` at the locked ``table``: its current ``hand`` (``None``: none) and the
    ``seats`` dealt into it, read in this transaction."""
    seat = next((s for s in seats.values() if s.player_id == player_id), None)
    if seat is None:
        try:
            seat = seat_of(table, player_id)
        except NotSeated:
            if table.tournament_id is not None:
                check_tournament_player(table, player_id)  # eliminated: its own refusal
            raise
    if hand is None:
        raise NoHand(table_id=table.pk)
    if table.phase == PAUSED:
        raise HandPaused(hand_id=hand.hand_id)
    if hand.status == "voided":
        raise HandVoided(hand_id=hand.hand_id)
    state, deck = hand_state(hand)
    assert state is not None
    if state.phase is Phase.COMPLETE:
        raise engine_errors.HandComplete(hand_id=hand.hand_id)
    if deck is None:  # the deal key is gone while the hand runs: nothing can be dealt from it
        raise DeckMismatch(hand_id=hand.hand_id)
    if seats.get(seat.seat_number) is None or seats[seat.seat_number].pk != seat.pk:  # e.g. taken after the deal
        raise NotInHand(hand_id=hand.hand_id)
    position = state.positions[seat.seat_number]
    thinking = hand.in_time_bank and not hand.in_disconnection_bank
    if thinking and state.acting_seat == seat.seat_number and hand.deadline is not None:
        # Acting inside the thinking time bank keeps what is left of it.
        seat.time_bank_left = max(0.0, (hand.deadline - now).total_seconds())
        seat.save(update_fields=["time_bank_left"])
    new_state, events = _play(
        table, hand, state, deck, [Act(seat.seat_number, Action(action), amount)],
        actor=f"user:{player_id}", key=f"{key}:ledger", now=now, seats=seats, accounts=accounts,
        head_hash=head_hash,
    )  # fmt: skip
    taken = events[0]
    assert isinstance(taken, ActionTaken)
    return ActResult(
        hand.hand_id, seat.seat_number, action, taken.amount, new_state.players[position].stack,
        new_state.phase.value, new_state.acting_seat, iso(hand.deadline),
    )  # fmt: skip


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
            table = lock_table(table_id)
        except PokerTableNotFound:
            return None
        if table.phase_seq != expected_seq or table.phase in (IDLE, PAUSED, WAITING):
            return None
        if table.deadline is not None and table.deadline > now:
            return None
        pacing.phase_ended(family="poker", phase=table.phase, deadline=table.deadline, now=now)
        if table.phase == BETWEEN:
            _start_hand(table, now, rng, deck)
            return table
        hand = PokerHand.objects.get(hand_id=table.current_hand_id)
        state, cards = hand_state(hand)
        assert state is not None
        if cards is None:
            raise DeckMismatch(hand_id=hand.hand_id)
        legal = legal_actions(state)
        if legal is None:  # cannot happen after a complete step; recover by moving on
            set_table(table, phase=BETWEEN, deadline=now)
            return table
        seats = dealt_in_seats(hand)
        seat = seats.get(legal.seat)
        away = seat is not None and not presence.is_present(
            family=presence.POKER, table_id=table.pk, player_id=seat.player_id, at=now
        )
        if table.tournament_id is not None and seat is not None and seat.sitting_out:
            away = True  # sitting out at a tournament table: folded at once, no time bank
        if (
            seat is not None
            and away
            and table.disconnection_bank_seconds > 0
            and not had_disconnection_bank(hand_id=hand.hand_id, seat_number=seat.seat_number)
        ):
            _start_time_bank(table, hand, seat, now, disconnection=True)
            return table
        if seat is not None and not away and not hand.in_time_bank and seat.time_bank_left > 0:
            _start_time_bank(table, hand, seat, now, disconnection=False)
            return table
        away_in_tournament = table.tournament_id is not None and seat is not None and (away or seat.sitting_out)
        # Seed 001: an away tournament player's cards "are folded when your turn comes".
        action = Action.CHECK if legal.call_amount == 0 and not away_in_tournament else Action.FOLD
        timed_out = NewEvent(et.TIMED_OUT, {"seat": legal.seat, "action": action.value, "at": iso(now),
                                            "disconnected": away})  # fmt: skip
        _play(
            table, hand, state, cards, [Act(legal.seat, action)], before=[timed_out], actor=DEALER,
            key=f"poker:{hand.hand_id}:timeout:{hand.stream_version}", now=now, seats=seats,
        )  # fmt: skip
        if seat is not None and not seat.sitting_out:
            sit_out_seat(table, seat, reason=DISCONNECTED if away else "timeout", actor=DEALER, now=now)
        return table


def had_disconnection_bank(*, hand_id: str, seat_number: int) -> bool:
    """Whether the seat was granted the disconnection time bank in this hand
    already (RULES.md: once per hand, seed 001 line 77). Read from the hand's
    own events (its ``poker_hand.turn`` with ``bank: "disconnection"``), so a
    restarted worker or a rebuilt projection decides the same."""
    granted = count_stream_filtered(
        stream_id=et.hand_stream(hand_id),
        types=[et.TURN],
        data_equals={"seat": str(seat_number), "bank": "disconnection"},
    )
    return granted > 0


def _start_time_bank(table: PokerTable, hand: PokerHand, seat: PokerSeat, now: datetime, *,
                     disconnection: bool) -> None:  # fmt: skip
    """The actor's turn ran out: more time from a bank (``poker_hand.turn`` with
    ``time_bank`` and ``bank``). ``disconnection``: they are not present, and get
    the table's disconnection time bank (seed 001), once per hand
    (``had_disconnection_bank``); otherwise what is left of their own thinking
    time bank, used up."""
    seconds = float(table.disconnection_bank_seconds) if disconnection else seat.time_bank_left
    deadline = now + timedelta(seconds=seconds)
    data = {"seat": seat.seat_number, "deadline": iso(deadline), "time_bank": True,
            "bank": "disconnection" if disconnection else "thinking"}  # fmt: skip
    recorded = append_events(
        stream_id=et.hand_stream(hand.hand_id),
        expected_version=hand.stream_version,
        events=[NewEvent(et.TURN, data)],
        metadata={"actor": DEALER, "correlation_id": hand.hand_id, "at": iso(now)},
    )
    project_hand(recorded, hand=hand, table=table)  # deadline, time banks, stream version
    if not disconnection:
        seat.time_bank_left = 0.0
        seat.save(update_fields=["time_bank_left"])
    set_table(table, phase=HAND, deadline=deadline)


def sweep(*, now: datetime) -> dict[str, int]:
    """Beat backstop: tables overdue by more than the grace are advanced,
    expired reservations at idle tables freed, ready idle tables started. A
    hand whose deadline passed more than ``CASINO_DEALER_GONE_VOID_SECONDS``
    ago had no dealer that long: RULES.md voids it ("dealer_gone", every chip
    returned) rather than time out players who could not act meanwhile. One
    table's failure does not keep the sweep from the others (``games.tables.pacing.sweep``)."""
    grace = timedelta(seconds=settings.CASINO_SWEEP_GRACE_SECONDS)
    gone = timedelta(seconds=settings.CASINO_DEALER_GONE_VOID_SECONDS)

    def sweep_one(table: PokerTable, done: dict[str, int]) -> None:
        if table.phase == HAND and table.deadline is not None and table.deadline < now - gone:
            # A refusal (moved on meanwhile: paused, finished) leaves nothing to void.
            void_hand(table_id=table.pk, actor="system", reason="dealer_gone", now=now, automatic=True)
            done["voided"] += 1
        elif table.phase == IDLE and table.tournament_id is None:  # a tournament's step starts its tables
            with transaction.atomic():
                locked = lock_table(table.pk)
                if locked.phase != IDLE:
                    return
                done["freed"] += free_expired_seats(locked, now)
                maybe_start_soon(locked, now)
                done["started"] += locked.phase != IDLE
        elif (
            table.deadline is not None
            and table.deadline < now - grace
            and advance_table(table_id=table.pk, expected_seq=table.phase_seq, now=now) is not None
        ):
            done["advanced"] += 1

    return pacing.sweep(
        family="poker", tables=PokerTable.objects.order_by("pk"), step=sweep_one,
        counts=("advanced", "freed", "started", "voided"),
    )  # fmt: skip
