"""What a player may see of a poker table and its hands (REST and websocket).

Redaction (RULES.md; issue 7): a viewer sees their own hole cards (opened
from the copy sealed for them: ``games.poker.services.cards``), and another
player's only once that hand is shown at showdown (``HandShown``); mucked and
folded hands stay hidden in these views. Of the shuffled deck only its
commitment is shown. ``hand_fairness``, once the hand is over: the leaves the
table saw (board, shown hands) to everyone, and the requester's own hole cards'
leaves to them (docs/fairness.md); never a burn card, a folded or mucked hand
of anyone else, or the undealt rest. One function per view, used by every
interface.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Count, Q, Sum
from django.utils import timezone

from games.poker import event_types as et
from games.poker.engine.events import Event, HandStarted, HoleCardsDealt
from games.poker.engine.hand import (
    HandState,
    Phase,
    antes_are_contributions,
    compute_pots,
    deal_order,
    legal_actions,
    replay,
)
from games.poker.engine.rules import Variant
from games.poker.errors import HandNotFound
from games.poker.models import PokerHand, PokerSeat, PokerTable
from games.poker.services import cards as hand_cards
from games.poker.services.seats import RESPONSIBLE_GAMING
from games.poker.services.tables import PAUSED, engine_events, load_hand
from games.poker.tournament.clock import clock_seconds, level_now
from games.poker.tournament.models import EntryState, Tournament, TournamentEntry, TournamentState
from games.poker.tournament.rules.levels import seconds_to_next_level
from games.poker.tournament.services.core import ACTIVE
from games.poker.tournament.services.registration import get_tournament, registered_count, registration_open
from games.tables.fairness import SEALED_FIELD, DealNotCommitted, fairness_answer, is_plain
from ledger.legs import without_legs
from ledger.services import count_stream_filtered, read_stream_filtered
from tools.verify_deal import DECK_SIZE, MERKLE_ALGORITHM


def iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def table_summary(table: PokerTable) -> dict[str, Any]:
    """A lobby row: configuration and the table's phase."""
    return {
        "id": table.pk,
        "code": table.code,
        "name": table.name,
        "variant": table.variant,
        "max_seats": table.max_seats,
        "seated": table.seats.count(),
        "currency": table.currency,
        "small_blind": table.small_blind,
        "big_blind": table.big_blind,
        "ante": table.ante,
        "buy_in_min": table.buy_in_min,
        "buy_in_max": table.buy_in_max,
        "turn_seconds": table.turn_seconds,
        "time_bank_seconds": table.time_bank_seconds,
        "disconnection_bank_seconds": table.disconnection_bank_seconds,
        "reservation_seconds": table.reservation_seconds,
        "rake_mode": table.rake_mode,
        "no_flop_no_drop": table.no_flop_no_drop,
        "raise_cap": raise_cap_view(table),
        "is_open": table.is_open,
        "phase": table.phase,
        "phase_seq": table.phase_seq,
        "deadline": iso(table.deadline),
        "button_seat": table.button_seat,
        "current_hand_id": table.current_hand_id,
        "tournament_id": table.tournament_id,
    }


def raise_cap_view(table: PokerTable) -> dict[str, Any] | None:
    """The fixed-limit raise cap as players see it (``None``: not fixed limit)."""
    if table.variant != Variant.FIXED_LIMIT.value:
        return None
    raises = table.raise_cap - 1
    then = "no raise" if raises == 0 else f"{raises} raise{'s' if raises > 1 else ''}"
    text = f"a bet and {then} per betting round (before the flop the big blind is the bet)"
    if table.heads_up_uncapped:
        text += "; no cap when only two players are left in the hand"
    return {"bets_per_round": table.raise_cap, "heads_up_uncapped": table.heads_up_uncapped, "text": text}


def _viewer_seat(state: HandState, viewer_id: int) -> int | None:
    return next((p.seat for p in state.players if p.player_id == str(viewer_id)), None)


def hand_state_view(state: HandState, viewer_id: int) -> dict[str, Any]:
    """One state of a hand as ``viewer_id`` may see it."""
    mine = _viewer_seat(state, viewer_id)
    legal = legal_actions(state)
    view: dict[str, Any] = {
        "hand_id": state.hand_id,
        "phase": state.phase.value,
        "street": state.street,
        "board": list(state.board),
        "button": state.button,
        "pot": state.pot_total,
        "rake": state.rake,
        "actor_seat": state.acting_seat,
        "players": [
            {
                "seat": p.seat,
                "player_id": int(p.player_id) if p.player_id.isdigit() else p.player_id,
                "stack": p.stack,
                "bet": p.bet,
                "folded": p.folded,
                "all_in": p.stack == 0 and not p.folded,
                "cards": list(p.hole) if (p.seat == mine or p.shown) else None,
                "shown": p.shown,
                "won": p.won,
            }
            for p in state.players
        ],
        "pots": pots_view(state),
    }
    if legal is not None and legal.seat == mine:
        view["legal"] = {
            "call_amount": legal.call_amount,
            "can_check": legal.call_amount == 0,
            "can_raise": legal.can_raise,
            "min_to": legal.min_to,
            "max_to": legal.max_to,
        }
    return view


def pots_view(state: HandState) -> list[dict[str, Any]]:
    """The main pot, then the side pots, of the chips gathered in the middle
    (antes and the bets of the rounds already closed; the bets of the round in
    play are each player's ``bet``), each with the seats that can still win it:
    the engine's own ``compute_pots``, as the showdown splits them."""
    players = [p._replace(committed=p.committed - p.bet) for p in state.players]
    pots = compute_pots(players, dead_antes=not antes_are_contributions(state.config, len(players)))
    return [{"amount": pot.amount, "eligible": sorted(players[i].seat for i in pot.eligible)} for pot in pots]


def malfunction(recorded: Any, table_phase: str | None = None) -> dict[str, Any]:
    """What players are told of the operator's malfunction controls (RULES.md):
    ``paused`` (the table's phase is paused), ``voided`` and the ``reason`` of
    the last pause or void, ``refunds`` of a voided hand."""
    last = next((e for e in reversed(recorded) if e.type in (et.PAUSED, et.VOIDED)), None)
    voided = last is not None and last.type == et.VOIDED
    paused = table_phase == PAUSED and not voided
    return {
        "paused": paused,
        "voided": voided,
        "reason": last.data.get("reason") if last is not None and (paused or voided) else None,
        "refunds": list(last.data.get("refunds", [])) if voided and last is not None else None,
    }


def table_view(
    *, table_id: int, viewer_id: int, hand_loader: Callable[[PokerHand], tuple[Any, Any, Any]] | None = None
) -> dict[str, Any]:
    """The table, its seats and the current hand as ``viewer_id`` may see them.
    ``hand_loader(hand)``: ``load_hand``'s answer for the current hand (default:
    replayed from its stream; the websocket feed passes a cache keyed by the
    hand's ``stream_version``)."""
    table = PokerTable.objects.get(pk=table_id)
    names = dict(get_user_model().objects.filter(poker_seats__table=table).values_list("pk", "username"))
    seats = [
        {
            "seat": s.seat_number,
            "player_id": s.player_id,
            "username": names.get(s.player_id, ""),
            "stack": s.stack,
            "sitting_out": s.sitting_out,
            # Another player's responsible-gaming stop is not theirs to know.
            "sat_out_reason": (
                None if s.sat_out_reason == RESPONSIBLE_GAMING and s.player_id != viewer_id else s.sat_out_reason
            ),
            "reserved_until": iso(s.reserved_until),
            "time_bank_left": int(s.time_bank_left),
            "you": s.player_id == viewer_id,
        }
        for s in table.seats.order_by("seat_number")
    ]
    hand_view = None
    if table.current_hand_id:
        hand = PokerHand.objects.get(hand_id=table.current_hand_id)
        state, _, recorded = hand_loader(hand) if hand_loader is not None else load_hand(hand.hand_id)
        if state is not None:
            state = with_own_cards(state, recorded, hand.hand_id, viewer_id)
            hand_view = {
                **hand_state_view(state, viewer_id),
                "commitment": commitment(recorded),
                "deadline": iso(hand.deadline),
                "in_time_bank": hand.in_time_bank,
                "in_disconnection_bank": hand.in_disconnection_bank,
                "status": hand.status,
                "hand_number": hand.hand_number,
                **malfunction(recorded, table.phase),
            }
    return {
        "table": table_summary(table),
        "seats": seats,
        "hand": hand_view,
        "server_time": timezone.now().isoformat(),
    }


def public_table_event(event: dict[str, Any]) -> dict[str, Any]:
    """A table-stream event as every viewer may see it: a seat sat out for
    responsible gaming shows ``reason: null`` and no ``code`` (the player's own
    frame and views keep them: nobody else learns of another's exclusion or limits)."""
    if event.get("reason") != RESPONSIBLE_GAMING:
        return event
    return {**{k: v for k, v in event.items() if k != "code"}, "reason": None}


def with_own_cards(state: HandState, recorded: Sequence[Any], hand_id: str, viewer_id: int) -> HandState:
    """``state`` (hole cards unknown unless shown) with ``viewer_id``'s own hole
    cards, opened from the copy sealed for them (no other player's)."""
    seat = _viewer_seat(state, viewer_id)
    if seat is None:
        return state
    index = state.positions[seat]
    player = state.players[index]
    if None not in player.hole and player.hole:
        return state
    dealt = next((e.data for e in recorded if e.type == HoleCardsDealt.type and e.data.get("seat") == seat), None)
    own = hand_cards.own_copy(hand_id=hand_id, seat=seat, player_id=viewer_id, data=dealt) if dealt else None
    if own is None:
        return state
    players = (*state.players[:index], player._replace(hole=tuple(own["cards"])), *state.players[index + 1 :])
    return state._replace(players=players)


def redact_event(
    data: dict[str, Any], type_: str, viewer_seat: int | None, *, hand_id: str = "", viewer_id: int | None = None
) -> dict[str, Any] | None:
    """One stored event of a hand stream for a viewer (``None``: not shown at all).
    Hole cards: the viewer's own (``viewer_seat``; sealed ones opened with
    ``viewer_id``'s key, ``hand_id`` naming the hand), anyone else's ``null``;
    the sealed copy itself is never shown."""
    if type_ == et.SHUFFLED:
        # The commitment only: the sealed deck would give every card away. A
        # hand dealt before commitments has none, and the event is not shown.
        return None if data["commitment"] is None else {"type": type_, **redacted_shuffle(data)}
    data = dict(without_legs(data))  # the money legs: the ledger's record, not the table's news
    if type_ == HoleCardsDealt.type:
        sealed = data.pop(hand_cards.SEALED_HOLE, None)
        if data.get("seat") != viewer_seat:
            data["cards"] = [None for _ in data.get("cards", [])]
        elif sealed is not None:
            own = None
            if viewer_id is not None:
                own = hand_cards.own_copy(hand_id=hand_id, seat=int(data["seat"]), player_id=viewer_id,
                                          data={hand_cards.SEALED_HOLE: sealed})  # fmt: skip
            data["cards"] = list(own["cards"]) if own is not None else [None for _ in data.get("cards", [])]
    return {"type": type_, **data}


def redacted_shuffle(data: dict[str, Any]) -> dict[str, Any]:
    """``poker_hand.shuffled`` without its sealed salt and deck."""
    return {key: value for key, value in data.items() if key != SEALED_FIELD}


def commitment(recorded: Any) -> str | None:
    """The hand's published commitment (``None``: dealt before commitments)."""
    shuffled = next((e for e in recorded if e.type == et.SHUFFLED), None)
    return shuffled.data["commitment"] if shuffled is not None else None


def hand_fairness(*, hand_id: str, viewer_id: int | None = None) -> dict[str, Any]:
    """The hand's deal as ``viewer_id`` may know it (docs/fairness.md): the
    commitment; once the hand is complete or voided also ``revealed``, the
    leaves the table saw (board, shown hands: position, card, salt, proof, to,
    slot), and for a viewer who was dealt into the hand ``yours``, the leaves
    of their own hole cards (from the copy sealed for them). A hand recorded
    before sealed decks (scheme ``plain``) answers in its old shape
    (``games.tables.fairness.fairness_answer``). ``poker_hand_not_found``, ``deal_not_committed``."""
    if not PokerHand.objects.filter(hand_id=hand_id).exists():
        raise HandNotFound(hand_id=hand_id)
    state, _, recorded = load_hand(hand_id)
    shuffled: Mapping[str, Any] = next((e.data for e in recorded if e.type == et.SHUFFLED), {})
    ended = any(e.type == et.VOIDED for e in recorded) or (state is not None and state.phase is Phase.COMPLETE)
    sealed_deck = shuffled.get(SEALED_FIELD)
    commitment_ = shuffled.get("commitment")
    if commitment_ is None or sealed_deck is None:
        raise DealNotCommitted(game_number=hand_id)
    if is_plain(sealed_deck):
        return fairness_answer(
            game_number=hand_id,
            commitment=commitment_,
            sealed_deck=sealed_deck,
            ended=ended,
            deal_order=lambda deck: deal_order(state, deck) if state is not None else [],
        )
    answer: dict[str, Any] = {"game_number": hand_id, "algorithm": MERKLE_ALGORITHM, "commitment": commitment_,
                              "deck_size": DECK_SIZE}  # fmt: skip
    revealed = next((e.data for e in recorded if e.type == et.CARDS_REVEALED), None)
    if not ended or revealed is None:
        return answer
    answer["revealed"] = list(revealed["revealed"])
    seat = _viewer_seat(state, viewer_id) if state is not None and viewer_id is not None else None
    if seat is not None and viewer_id is not None:
        dealt = next((e.data for e in recorded if e.type == HoleCardsDealt.type and e.data.get("seat") == seat), None)
        own = hand_cards.own_copy(hand_id=hand_id, seat=seat, player_id=viewer_id, data=dealt) if dealt else None
        if own is not None:
            answer["yours"] = sorted(own["leaves"], key=lambda leaf: leaf["position"])
    return answer


# The fields of each seat event in a player's seat history, by type (docs/events.md, "Poker table").
SEAT_EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    et.SAT_DOWN: ("buy_in",),
    et.TOPPED_UP: ("amount",),
    et.SAT_OUT: ("reason", "code", "reserved_until"),
    et.SAT_IN: ("rejoined",),
    et.STOOD_UP: ("amount", "reason"),
}
# The events that say whether a seat is taken and whether it sits out.
SEAT_STATE_TYPES = (et.SAT_DOWN, et.SAT_OUT, et.SAT_IN, et.STOOD_UP)


def _seat_event(event: Any) -> dict[str, Any]:
    data = event.data
    row: dict[str, Any] = {"version": event.version, "recorded_at": iso(event.recorded_at), "type": event.type,
                           "seat": data["seat"], "at": data.get("at")}  # fmt: skip
    for name in SEAT_EVENT_FIELDS[event.type]:
        row[name] = data.get(name)
    if event.type == et.SAT_IN:
        row["rejoined"] = bool(data.get("rejoined", False))  # recorded only when true
    return row


def seat_history(*, table_id: int, player_id: int, limit: int, offset: int) -> dict[str, Any]:
    """One player's own seat events at a table (the ``poker_table.*`` events of
    ``poker-table-{id}`` whose ``player_id`` is theirs), oldest first, paged:
    sat down (``buy_in``), topped up (``amount``), sat out (``reason``; the
    refusal's ``code`` for ``responsible_gaming``, else ``null``;
    ``reserved_until``), sat in (``rejoined``: back after a disconnection), stood
    up (``amount`` returned to the wallet, ``reason``: ``left``,
    ``reservation_expired``). Only ``player_id``'s events are read: another
    player's are never in the answer (a player with none there gets an empty
    page). The caller checks the table exists and bounds ``limit`` and ``offset``."""
    stream = et.table_stream(table_id)
    mine = {"player_id": str(player_id)}
    types = et.TABLE_EVENT_TYPES
    events = read_stream_filtered(stream_id=stream, types=types, data_equals=mine, limit=limit, offset=offset)
    total = count_stream_filtered(stream_id=stream, types=types, data_equals=mine)
    return {"count": total, "limit": limit, "offset": offset, "results": [_seat_event(e) for e in events]}


def seats_at_deal(*, table_id: int, recorded: Sequence[Any], viewer_id: int) -> dict[str, Any]:
    """Who sat at the table when a hand was dealt, from the log only.
    ``dealt_in``: the seats of the hand's ``poker.hand_started`` (seat,
    player id, stack), by seat. ``sitting_out``: the seats taken at the deal
    whose last sit-out/sit-in event before it was a ``poker_table.sat_out``
    (seat, player id; ``reason`` and ``code`` for the viewer's own seat only,
    ``null`` for everyone else's). "Before the deal" is the table stream below
    the hand stream's first event: both are written under the table's row lock,
    the seats made to sit out at the deal in the same transaction just before
    the hand (``sit_out_unready``). ``recorded``: the hand stream's events."""
    started = next((e for e in recorded if e.type == HandStarted.type), None)
    dealt = sorted(
        ({"seat": seat, "player_id": int(pid) if pid.isdigit() else pid, "stack": stack}
         for seat, pid, stack in (started.data["seats"] if started is not None else [])),
        key=lambda row: row["seat"],
    )  # fmt: skip
    seats: dict[int, dict[str, Any]] = {}
    before = recorded[0].position if recorded else None
    if before is not None:
        for event in read_stream_filtered(stream_id=et.table_stream(table_id), types=SEAT_STATE_TYPES,
                                          before_position=before):  # fmt: skip
            data = event.data
            if event.type == et.STOOD_UP:
                seats.pop(data["seat"], None)
            elif event.type == et.SAT_OUT:
                seats[data["seat"]] = {"player_id": data["player_id"], "sitting_out": True,
                                       "reason": data.get("reason"), "code": data.get("code")}  # fmt: skip
            else:  # sat down, sat in
                seats[data["seat"]] = {"player_id": data["player_id"], "sitting_out": False}
    dealt_numbers = {row["seat"] for row in dealt}
    sitting_out = [
        {
            "seat": number,
            "player_id": seat["player_id"],
            "reason": seat["reason"] if seat["player_id"] == viewer_id else None,
            "code": seat["code"] if seat["player_id"] == viewer_id else None,
        }
        for number, seat in sorted(seats.items())
        if seat["sitting_out"] and number not in dealt_numbers
    ]
    return {"dealt_in": dealt, "sitting_out": sitting_out}


def may_recall_hand(*, hand_id: str, viewer_id: int) -> bool:
    """A player recalls (history, replay) the hands they were dealt into, and
    those dealt while their seat at the table sat out (``seats_at_deal``): the
    replay tells them why they were not in it. Neither shows them a hole card
    they were not dealt, unless shown at showdown."""
    from games.poker.models import PokerHandPlayer

    if PokerHandPlayer.objects.filter(hand__hand_id=hand_id, player_id=viewer_id).exists():
        return True
    table_id = PokerHand.objects.filter(hand_id=hand_id).values_list("table_id", flat=True).first()
    if table_id is None:
        return False
    _, _, recorded = load_hand(hand_id)
    away = seats_at_deal(table_id=table_id, recorded=recorded, viewer_id=viewer_id)["sitting_out"]
    return any(row["player_id"] == viewer_id for row in away)


def hand_history(*, hand_id: str, viewer_id: int) -> dict[str, Any]:
    """A played hand for one of its players: summary and every event, redacted;
    ``at_the_deal``: the seats dealt in and those sitting out (``seats_at_deal``)."""
    hand = PokerHand.objects.select_related("table").get(hand_id=hand_id)
    state, _, recorded = load_hand(hand_id, viewer_id=viewer_id)
    seat = _viewer_seat(state, viewer_id) if state is not None else None
    events = []
    for event in recorded:
        shown = redact_event(dict(event.data), event.type, seat, hand_id=hand_id, viewer_id=viewer_id)
        if shown is not None:
            events.append({"version": event.version, "recorded_at": iso(event.recorded_at), **shown})
    return {
        "hand_id": hand.hand_id,
        "game_number": hand.hand_id,
        "table": {"id": hand.table_id, "code": hand.table.code, "name": hand.table.name},
        "hand_number": hand.hand_number,
        "currency": hand.currency,
        "status": hand.status,
        "started_at": iso(hand.started_at),
        "ended_at": iso(hand.ended_at),
        "rake": hand.rake,
        "your_seat": seat,
        "at_the_deal": seats_at_deal(table_id=hand.table_id, recorded=recorded, viewer_id=viewer_id),
        **malfunction(recorded, hand.table.phase if hand.table.current_hand_id == hand_id else None),
        "final": hand_state_view(state, viewer_id) if state is not None else None,
        "events": events,
    }


def hand_replay(*, hand_id: str, viewer_id: int) -> dict[str, Any]:
    """The "Replay" button: the state after each of the engine's events of the
    hand, in order (a voided hand's steps stop where it was voided; ``voided``
    and ``reason`` say so). Each step's ``dealer``: the dealer's turn and
    timeout events recorded just before its engine event. ``at_the_deal``: the
    seats dealt in and those sitting out, with the viewer's own reason
    (``seats_at_deal``): why a seated player is not in the hand."""
    table_id = PokerHand.objects.values_list("table_id", flat=True).get(hand_id=hand_id)
    _, _, recorded = load_hand(hand_id)
    events: list[Event] = engine_events(recorded, hand_id=hand_id, viewer_id=viewer_id)
    states = replay(events)
    seat = _viewer_seat(states[-1], viewer_id) if states else None
    # The dealer's events before each engine event (turns and their time banks,
    # timeouts: why a fold was the dealer's, e.g. a disconnected player's).
    dealer: list[list[dict[str, Any]]] = [[]]
    for recorded_event in recorded:
        if recorded_event.type in et.ENGINE_EVENT_TYPES:
            dealer.append([])
        elif recorded_event.type in (et.TURN, et.TIMED_OUT):
            dealer[-1].append({"type": recorded_event.type, **recorded_event.data})
    steps = []
    for index, (event, state) in enumerate(zip(events, states, strict=True)):
        shown = redact_event(event.to_dict(), event.type, seat)
        steps.append({"step": index + 1, "dealer": dealer[index], "event": shown,
                      "state": hand_state_view(state, viewer_id)})  # fmt: skip
    told = malfunction(recorded)
    return {
        "hand_id": hand_id,
        "voided": told["voided"],
        "reason": told["reason"],
        "at_the_deal": seats_at_deal(table_id=table_id, recorded=recorded, viewer_id=viewer_id),
        "steps": steps,
    }


def hand_list_page(*, player_id: int, limit: int, offset: int) -> dict[str, Any]:
    """``GET /api/poker/hands/``: the player's hands, newest first; ``count``
    and the page ``results`` read the one list (as the house account history)."""
    from games.poker.models import PokerHandPlayer

    hands = PokerHandPlayer.objects.filter(player_id=player_id)
    rows = hands.select_related("hand", "hand__table").order_by("-started_at", "-id")[offset : offset + limit]
    results = [
        {
            "hand_id": row.hand.hand_id,
            "table": row.hand.table.code,
            "hand_number": row.hand.hand_number,
            "currency": row.hand.currency,
            "seat": row.seat_number,
            "stack_before": row.stack_before,
            "stack_after": row.stack_after,
            "net": None if row.stack_after is None else row.stack_after - row.stack_before,
            "status": row.hand.status,
            "started_at": iso(row.started_at),
        }
        for row in rows
    ]
    return {"count": hands.count(), "limit": limit, "offset": offset, "results": results}


def tournament_summary(tournament: Tournament, registered: int) -> dict[str, Any]:
    """A tournament in the lobby (amounts in minor units of ``currency``)."""
    return {
        "id": tournament.pk, "name": tournament.name, "kind": tournament.kind, "currency": tournament.currency,
        "buy_in": tournament.buy_in, "fee": tournament.fee, "guarantee": tournament.guarantee,
        "starting_chips": tournament.starting_chips, "registered": registered,
        "max_players": tournament.max_players, "start_at": iso(tournament.start_at),
        "late_registration_level": tournament.late_registration_level, "state": tournament.state,
        "registration_open": registration_open(tournament) and registered < tournament.max_players,
    }  # fmt: skip


def tournament_lobby(*, viewer_id: int) -> list[dict[str, Any]]:
    """Every tournament, oldest first, with its registered count (one query) and
    ``your_entry``: the viewer's own entry state there (``registered``, ``playing``,
    ``eliminated``, ``winner``), ``null`` without one that counts (one query)."""
    tournaments = Tournament.objects.annotate(
        registered=Count("entries", filter=~Q(entries__state=EntryState.UNREGISTERED))
    ).order_by("id")
    own = dict(
        TournamentEntry.objects.filter(player_id=viewer_id)
        .exclude(state=EntryState.UNREGISTERED)
        .values_list("tournament_id", "state")
    )
    return [{**tournament_summary(t, t.registered), "your_entry": own.get(t.pk)} for t in tournaments]


def tournament_view(*, tournament_id: int, viewer_id: int) -> dict[str, Any]:
    """The lobby summary plus the level schedule, the payout structure and the
    viewer's own registration (``null`` when they have none that counts)."""
    tournament = get_tournament(tournament_id=tournament_id)
    own = (
        TournamentEntry.objects.filter(tournament=tournament, player_id=viewer_id)
        .exclude(state=EntryState.UNREGISTERED)
        .first()
    )
    registration = None
    if own is not None:
        registration = {"entry_id": own.pk, "state": own.state, "buy_in": own.buy_in, "fee": own.fee,
                        "registered_at": iso(own.registered_at), "place": own.place, "prize": own.prize}  # fmt: skip
    return {
        **tournament_summary(tournament, registered_count(tournament)),
        "table_seats": tournament.table_seats, "current_level": tournament.current_level,
        "levels": tournament.levels, "payouts": tournament.payouts, "registration": registration,
    }  # fmt: skip


def _collected(tournament: Tournament) -> int:
    """The buy-ins in the prize pool: those of the entries that count (the pool
    account's balance until the finish pays it out, and unchanged after it)."""
    total = TournamentEntry.objects.filter(tournament=tournament, state__in=ACTIVE).aggregate(s=Sum("buy_in"))["s"]
    return int(total or 0)


def tournament_public_state(tournament: Tournament, now: datetime) -> dict[str, Any]:
    """What everyone may know of a tournament now (``GET tournaments/<id>/state/``
    without ``me``; the websocket's ``state`` frames): the level the clock is in
    and its blinds, the seconds to the next level (``null`` while the clock is
    stopped: paused, finished, cancelled, or at the last level), players left,
    the average stack, the prize pool and its payouts by place (the payout
    table with the current entrants), hand-for-hand, the final table and the
    open tables with their player counts. Registering: ``entrants`` and
    ``players_left`` are the registered players and there is no level yet."""
    registering = tournament.state == TournamentState.REGISTERING
    entrants = registered_count(tournament) if registering else tournament.entrants
    players_left = entrants if registering else tournament.players_left
    level: dict[str, Any] | None = None
    next_level_in: int | None = None
    clock = 0
    if tournament.started_at is not None:
        clock = clock_seconds(tournament, now)
        number, blinds = level_now(tournament, now)
        level = {"number": number, "small_blind": blinds.small_blind, "big_blind": blinds.big_blind,
                 "ante": blinds.ante, "duration_seconds": blinds.duration_seconds}  # fmt: skip
        if tournament.clock_started_at is not None:
            next_level_in = seconds_to_next_level(tournament.schedule(), clock)
    chips = entrants * tournament.starting_chips
    payouts = tournament.payout_structure().payouts(
        entrants=max(entrants, 1), collected=_collected(tournament), guarantee=tournament.guarantee
    )
    tables = (
        PokerTable.objects.filter(tournament=tournament, is_open=True)
        .annotate(players=Count("seats"))
        .order_by("table_number", "pk")
    )
    return {
        "id": tournament.pk, "name": tournament.name, "kind": tournament.kind, "state": tournament.state,
        "currency": tournament.currency, "starting_chips": tournament.starting_chips,
        "started_at": iso(tournament.started_at), "finished_at": iso(tournament.finished_at),
        "level": level, "clock_seconds": clock, "next_level_in": next_level_in,
        "entrants": entrants, "players_left": players_left, "chips_in_play": chips,
        "average_stack": chips // players_left if players_left else None,
        "prize_pool": {"amount": payouts.pool.amount, "collected": payouts.pool.collected,
                       "guarantee": tournament.guarantee, "overlay": payouts.pool.overlay},
        "payouts": [{"place": place, "amount": amount} for place, amount in enumerate(payouts.by_place, start=1)],
        "paid_places": payouts.paid_places,
        "hand_for_hand": tournament.hand_for_hand, "final_table_id": tournament.final_table_id,
        "tables": [{"id": t.pk, "number": t.table_number, "players": t.players} for t in tables],
        "server_time": iso(now),
    }  # fmt: skip


def tournament_me(tournament: Tournament, player_id: int) -> dict[str, Any] | None:
    """The player's own part of a tournament's state: their entry's state, their
    place and prize once out (or at the finish), and their table, seat and stack
    while they play (``None``: no entry that counts)."""
    entry = (
        TournamentEntry.objects.filter(tournament=tournament, player_id=player_id)
        .exclude(state=EntryState.UNREGISTERED)
        .first()
    )
    if entry is None:
        return None
    seat = None
    if entry.state == EntryState.PLAYING:
        seat = (
            PokerSeat.objects.filter(table__tournament=tournament, table__is_open=True, player_id=player_id)
            .values("table_id", "seat_number", "stack")
            .first()
        )
    return {
        "entry_id": entry.pk, "state": entry.state, "place": entry.place, "tied": entry.tied, "prize": entry.prize,
        "table_id": seat["table_id"] if seat else None, "seat": seat["seat_number"] if seat else None,
        "stack": seat["stack"] if seat else None,
    }  # fmt: skip


def tournament_standings(*, tournament_id: int, viewer_id: int) -> list[dict[str, Any]]:
    """``GET tournaments/<id>/standings/``: every entry that counts, the players
    still in first by their chips (what their tables show), then those out by
    place (``place``, ``tied``, ``prize`` once the field is known); ``username``
    as at the tables, ``you`` for the caller's own row. Nothing private: no
    wallet, no seat's reason, no hand."""
    tournament = get_tournament(tournament_id=tournament_id)
    entries = (
        TournamentEntry.objects.filter(tournament=tournament)
        .exclude(state=EntryState.UNREGISTERED)
        .values("player_id", "player__username", "state", "place", "tied", "prize")
    )
    stacks = dict(
        PokerSeat.objects.filter(table__tournament=tournament, table__is_open=True).values_list("player_id", "stack")
    )
    # In play by chips (most first), then the finishers by place; the registered (no chips yet) by name.
    ordered = sorted(
        entries,
        key=lambda e: (
            e["player_id"] not in stacks,
            -stacks.get(e["player_id"], 0),
            e["place"] or 0,
            e["player__username"],
        ),
    )
    return [
        {"username": e["player__username"], "state": e["state"], "chips": stacks.get(e["player_id"]),
         "place": e["place"], "tied": e["tied"], "prize": e["prize"], "you": e["player_id"] == viewer_id}
        for e in ordered
    ]  # fmt: skip


def tournament_state(*, tournament_id: int, viewer_id: int, now: datetime | None = None) -> dict[str, Any]:
    """``GET tournaments/<id>/state/`` and the websocket's snapshot: the public
    state and the viewer's own ``me``; ``tournament_not_found``."""
    tournament = get_tournament(tournament_id=tournament_id)
    now = now or timezone.now()
    return {**tournament_public_state(tournament, now), "me": tournament_me(tournament, viewer_id)}
