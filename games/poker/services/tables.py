"""The poker table's own pieces the other services share: its ledger accounts,
the row lock, the idempotent command wrapper, the phase and its deadline, and
reads of the table's hand (docs/poker.md, "Tables").

Everything here runs inside the caller's transaction; the functions that take
a ``PokerTable`` expect it locked (``lock_table``) by that transaction.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Any, TypeVar

from django.db import connection, models, transaction

from games.poker import event_types as et
from games.poker.engine.events import Event, HandStarted, HoleCardsDealt, event_from_dict
from games.poker.engine.hand import HandState, Phase, apply
from games.poker.errors import NotSeated, PokerTableNotFound
from games.poker.models import PokerHand, PokerSeat, PokerTable
from games.poker.projectors import PokerSeatProjector
from games.poker.services.cards import SEALED_HOLE, dealer_hole_cards, open_deck, own_copy
from games.poker.store.act import save_table_phase
from games.tables import pacing
from games.tables.fairness import SEALED_FIELD, OpenedDeck, is_plain, open_committed_deck
from ledger.models import AccountKind
from ledger.services import NewEvent, append_events, ensure_account, read_stream
from ledger.services.events import now as ledger_now
from ledger.services.postings import claim, record_result, request_hash
from ledger.services.projectors import apply_events

IDLE, HAND, BETWEEN, PAUSED = "idle", "hand", "between", "paused"
# A tournament table whose hand is over, waiting for the tournament's step
# (busts, balancing, hand-for-hand) before it deals again (no deadline).
WAITING = "waiting"
DEALER = "dealer"
R = TypeVar("R")
RowT = TypeVar("RowT", bound=models.Model)


def seat_owner(*, table_id: int, player_id: int) -> str:
    """The owner of the player's ``poker_seat`` account at the table: one account
    per table and player, whichever seat they take."""
    return f"poker-table:{table_id}:player:{player_id}"


def seat_account(*, table_id: int, player_id: int, currency: str) -> int:
    """The player's chips at the table (``poker_seat``)."""
    return ensure_account(
        kind=AccountKind.POKER_SEAT, owner=seat_owner(table_id=table_id, player_id=player_id), currency=currency
    )


def pot_account(*, hand_id: str, currency: str) -> int:
    """The hand's pot (``poker_pot``): zero again once the hand is over."""
    return ensure_account(kind=AccountKind.POKER_POT, owner=f"poker-hand:{hand_id}", currency=currency)


def rake_account(*, table_id: int, currency: str) -> int:
    return ensure_account(kind=AccountKind.RAKE, owner=f"poker-table:{table_id}", currency=currency)


def iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def get_row(model: type[RowT], pk: object, *, missing: Callable[[], Exception]) -> RowT:
    """The ``model`` row whose primary key is ``pk``, not locked; ``missing()``
    is raised when there is none or ``pk`` is not an id (as ``lock_table``)."""
    try:
        return model._default_manager.get(pk=pk)
    except (model.DoesNotExist, ValueError, TypeError):  # type: ignore[attr-defined]
        raise missing() from None


def get_table(*, table_id: int) -> PokerTable:
    return get_row(PokerTable, table_id, missing=lambda: PokerTableNotFound(table_id=table_id))


def lock_table(table_id: int) -> PokerTable:
    """The table row locked until the transaction ends (``games.tables.pacing.lock_table``);
    call inside ``transaction.atomic()`` before touching any of the table's rows.
    ``poker_table_not_found`` when there is no such table."""
    return pacing.lock_table(PokerTable, table_id, missing=lambda: PokerTableNotFound(table_id=table_id))


def once(key: str, command: str, request: Mapping[str, Any], run: Callable[[], R], make: Callable[..., R]) -> R:
    """Run ``run`` once per idempotency key (inside the caller's transaction): a
    retry with the same key and request gets the first result, rebuilt by
    ``make``, and changes nothing."""
    with connection.cursor() as cursor:
        first = claim(cursor, key=key, command=command, digest=request_hash(command, request), at=ledger_now())
    if first is not None:
        return make(**first)
    result = run()
    with connection.cursor() as cursor:
        record_result(cursor, key=key, result=asdict(result))  # type: ignore[call-overload]
    return result


def schedule(table: PokerTable) -> None:
    """Enqueue ``games.poker.advance`` for the table's deadline, carrying its
    phase sequence, once the transaction commits (``games.tables.pacing``)."""
    pacing.schedule_advance(
        task=pacing.POKER_ADVANCE, table_id=table.pk, expected_seq=table.phase_seq, deadline=table.deadline
    )


def set_table(table: PokerTable, *, phase: str, deadline: datetime | None, **fields: Any) -> None:
    """Move the locked table to ``phase`` with ``deadline`` (the next phase
    sequence) and schedule its advance for that deadline."""
    table.phase = phase
    table.phase_seq += 1
    table.deadline = deadline
    for name, value in fields.items():
        setattr(table, name, value)
    if fields or connection.vendor != "postgresql":
        PokerTable.objects.filter(pk=table.pk).update(phase=phase, phase_seq=table.phase_seq, deadline=deadline,
                                                      **fields)  # fmt: skip
    else:
        save_table_phase(table_id=table.pk, phase=phase, phase_seq=table.phase_seq, deadline=deadline)
    schedule(table)


def table_append(
    table: PokerTable, event_type: str, data: dict[str, Any], actor: str, *, seats: Sequence[PokerSeat] = ()
) -> None:
    """Append one event to the table's stream (``poker-table-{id}``) and apply it
    with the projectors (``seats``: the rows the caller holds, kept current)."""
    recorded = append_events(
        stream_id=et.table_stream(table.pk),
        expected_version=None,
        events=[NewEvent(event_type, data)],
        metadata={"actor": actor},
    )
    apply_events(recorded, using=[PokerSeatProjector(seats=seats, table=table)])


def eligible(table: PokerTable) -> list[PokerSeat]:
    """Seats dealt into the next hand: not sitting out, with chips. At a
    tournament table every seat with chips (seed 001: a player away is dealt
    in, posts the blinds and antes, and is folded when their turn comes)."""
    seats = table.seats.filter(stack__gt=0)
    if table.tournament_id is None:
        seats = seats.filter(sitting_out=False)
    return list(seats.order_by("seat_number"))


def maybe_start_soon(table: PokerTable, now: datetime) -> None:
    """An idle table with two players ready deals after the pause between hands."""
    if table.phase == IDLE and table.is_open and len(eligible(table)) >= 2:
        set_table(table, phase=BETWEEN, deadline=now + timedelta(seconds=table.between_hands_seconds))


def current_hand(table: PokerTable) -> PokerHand | None:
    """The table's hand while it is being played (``None`` once it is over or voided)."""
    if not table.current_hand_id:
        return None
    hand = PokerHand.objects.filter(hand_id=table.current_hand_id).first()
    return hand if hand is not None and hand.status == "playing" else None


def seat_of(table: PokerTable, player_id: int) -> PokerSeat:
    """The player's seat at the table; ``poker_not_seated`` without one."""
    seat = PokerSeat.objects.filter(table=table, player_id=player_id).first()
    if seat is None:
        raise NotSeated(table_id=table.pk)
    return seat


def load_hand(
    hand_id: str, *, viewer_id: int | None = None, dealer: bool = False
) -> tuple[HandState | None, list[str], list[Any]]:
    """(engine state, deck, every recorded event) of a hand, from its stream.

    Hole cards sealed at rest (``games.poker.services.cards``) are unknown
    (``None``) in the state unless they were shown, except: ``viewer_id``'s own,
    opened with that player's key (their views and history); with ``dealer``,
    every seat's, read from the deck opened with the hand's deal key while the
    hand runs (the dealer service only; ``deck`` is then the deck, else ``[]``
    for a sealed deck). A legacy hand (deck and hole cards in the clear) reads as recorded."""
    state, opened, recorded = _load(hand_id, viewer_id=viewer_id, dealer=dealer)
    return state, list(opened.deck) if opened is not None else [], recorded


def _load(
    hand_id: str, *, viewer_id: int | None, dealer: bool
) -> tuple[HandState | None, OpenedDeck | None, list[Any]]:
    recorded = read_stream(stream_id=et.hand_stream(hand_id))
    state: HandState | None = None
    opened: OpenedDeck | None = None
    for event in recorded:
        if event.type in et.ENGINE_EVENT_TYPES:
            data = event.data
            if event.type == HoleCardsDealt.type and state is not None and SEALED_HOLE in data:
                data = _hole_cards_known(hand_id, state, data, opened if dealer else None, viewer_id)
            state = apply(state, event_from_dict({"type": event.type, **data}))
        elif event.type == et.SHUFFLED:
            sealed_deck = event.data[SEALED_FIELD]
            if is_plain(sealed_deck):
                opened = open_committed_deck(commitment=event.data["commitment"], sealed_deck=sealed_deck, key=None,
                                             deal_id="")  # fmt: skip
            elif dealer:
                opened = open_deck(hand_id=hand_id, commitment=event.data["commitment"], sealed_deck=sealed_deck)
    return state, opened, recorded


def _hole_cards_known(
    hand_id: str, state: HandState, data: Mapping[str, Any], opened: OpenedDeck | None, viewer_id: int | None
) -> Mapping[str, Any]:
    """A sealed ``poker.hole_cards_dealt`` with the cards the reader may know:
    the dealer's from the open deck, the viewer's own from their copy."""
    seat = int(data["seat"])
    if opened is not None:
        return {**data, "cards": list(dealer_hole_cards(state, seat, opened))}
    player = state.players[state.positions[seat]].player_id
    if viewer_id is not None and player == str(viewer_id):
        own = own_copy(hand_id=hand_id, seat=seat, player_id=viewer_id, data=data)
        if own is not None:
            return {**data, "cards": own["cards"]}
    return data


# The engine state of recent hands, by hand id, at the stream version it was read or
# committed at: an action need not replay the whole hand stream. Only committed
# versions are remembered (``remember_hand`` and ``hand_state`` wait for the commit),
# and a hit needs the hand row's version, read under the table lock, to match: any
# other process's write moves the version on, and the hand is read again. A state
# read or decided in a transaction that is rolled back is never remembered: its hand
# id and version may come back with other events (the same table code at the same
# second; SQLite hands the rolled-back ids out again, and with a tournament's id its
# tables' codes), and would then be taken for that other hand.
# These are the dealer's states (every seat's hole cards): a hand is forgotten
# when it is over, as its deal key is shredded.
_HAND_CACHE: OrderedDict[str, tuple[int, HandState, OpenedDeck | None]] = OrderedDict()
HAND_CACHE_SIZE = 1024


def _cache_put(hand_id: str, version: int, state: HandState, deck: OpenedDeck | None) -> None:
    _HAND_CACHE[hand_id] = (version, state, deck)
    _HAND_CACHE.move_to_end(hand_id)
    while len(_HAND_CACHE) > HAND_CACHE_SIZE:
        _HAND_CACHE.popitem(last=False)


def hand_state(hand: PokerHand) -> tuple[HandState | None, OpenedDeck | None]:
    """(engine state, deck) of ``hand`` at its row's ``stream_version`` as the
    dealer holds it (call with the table locked): from the cache when it holds
    that version, else from the stream, the deck and every hole card opened
    with the deal key (``None`` and unknown hole cards once the hand is over).
    A state read from the stream is remembered once the transaction commits."""
    cached = _HAND_CACHE.get(hand.hand_id)
    if cached is not None and cached[0] == hand.stream_version:
        return cached[1], cached[2]
    hand_id, version = hand.hand_id, hand.stream_version
    state, deck, _ = _load(hand_id, viewer_id=None, dealer=True)
    if state is not None and state.phase is not Phase.COMPLETE:
        loaded = state
        transaction.on_commit(lambda: _cache_put(hand_id, version, loaded, deck))
    return state, deck


def remember_hand(hand: PokerHand, state: HandState, deck: OpenedDeck | None) -> None:
    """Remember ``state`` at the hand's new version once the transaction commits
    (a hand over is forgotten: the dealer holds its cards no longer)."""
    hand_id, version = hand.hand_id, hand.stream_version
    if state.phase is Phase.COMPLETE:
        transaction.on_commit(lambda: forget_hand(hand_id))
    else:
        transaction.on_commit(lambda: _cache_put(hand_id, version, state, deck))


def forget_hand(hand_id: str) -> None:
    _HAND_CACHE.pop(hand_id, None)


def engine_events(recorded: Sequence[Any], *, hand_id: str = "", viewer_id: int | None = None) -> list[Event]:
    """The engine's events of a hand stream (the hand history proper). Hole
    cards sealed at rest are unknown (``None``) except ``viewer_id``'s own,
    opened with their key (``hand_id`` names the hand)."""
    events: list[Event] = []
    players: dict[int, str] = {}
    for e in recorded:
        if e.type not in et.ENGINE_EVENT_TYPES:
            continue
        data = e.data
        if e.type == HandStarted.type:
            players = {int(seat): str(player) for seat, player, _ in data["seats"]}
        elif e.type == HoleCardsDealt.type and viewer_id is not None and SEALED_HOLE in data:
            seat = int(data["seat"])
            if players.get(seat) == str(viewer_id):
                own = own_copy(hand_id=hand_id, seat=seat, player_id=viewer_id, data=data)
                data = {**data, "cards": own["cards"]} if own is not None else data
        events.append(event_from_dict({"type": e.type, **data}))
    return events


def dealt_in_seats(hand: PokerHand) -> dict[int, PokerSeat]:
    """The seat rows dealt into ``hand`` that are still taken, by seat number: the
    only seats the hand's steps may touch. A seat taken after the deal is not in the
    hand, also when its player was dealt in at a seat they have left since (found by
    player id, that seat would get the old hand's stack: issue #20)."""
    return {seat.seat_number: seat for seat in PokerSeat.objects.filter(hand_players__hand=hand)}


def dealt_in(hand: PokerHand, seat: PokerSeat) -> bool:
    """``seat`` (this row, not its player) was dealt into ``hand``."""
    return hand.participants.filter(seat=seat).exists()


def in_live_hand(table: PokerTable, seat: PokerSeat) -> bool:
    """``seat`` was dealt into the running hand and its player has not folded."""
    hand = current_hand(table)
    if hand is None or not dealt_in(hand, seat):
        return False
    state, _, _ = load_hand(hand.hand_id)
    return state is not None and not state.players[state.positions[seat.seat_number]].folded
