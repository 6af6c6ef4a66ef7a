"""Operator controls of a poker hand: pause, resume, void (RULES.md,
"Malfunction voids all pays and play"; docs/poker.md, "Malfunction").

Each is keyword-only and one transaction that locks the table row first. A
voided hand returns what each player put in, ``poker_pot`` -> ``poker_seat``
(or the wallet of a player who has left); no rake, the pot at zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction

from casino.audit import operator_actor, record_operator_action
from casino.errors import required_reason
from games.poker import event_types as et
from games.poker.engine import errors as engine_errors
from games.poker.errors import HandNotPaused, HandPaused, HandVoided, NoHand, PotMismatch
from games.poker.models import PokerHand, PokerTable
from games.poker.projectors import project_hand
from games.poker.services.cards import is_sealed_deck, revealed_leaves, shred
from games.poker.services.tables import (
    BETWEEN,
    HAND,
    PAUSED,
    dealt_in_seats,
    forget_hand,
    hand_state,
    iso,
    lock_table,
    pot_account,
    seat_account,
    set_table,
)
from ledger.services import (
    EventRef,
    NewEvent,
    StreamAppend,
    TransferSpec,
    append_events,
    balance_of,
    player_accounts,
    read_stream,
    settle_batch,
)
from ledger.services.events import now as ledger_now
from ledger.services.projectors import events_of


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
    """Append the operator's event to the hand's stream and project it onto ``hand``."""
    recorded = append_events(
        stream_id=et.hand_stream(hand.hand_id),
        expected_version=hand.stream_version,
        events=[NewEvent(event_type, data)],
        metadata={"actor": actor, "correlation_id": hand.hand_id},
    )
    project_hand(recorded, hand=hand)


def pause_hand(*, table_id: int, actor: str, reason: str, now: datetime) -> HandControlResult:
    """Operator pause (malfunction): the actor's clock stops (what was left is
    recorded in ``poker_hand.paused``), the table has no deadline, so no dealer
    step runs and every action is refused (``poker_hand_paused``) until the hand
    is resumed or voided. Refusals: ``reason_required``,
    ``poker_table_not_found``, ``poker_no_hand``, ``poker_hand_complete``,
    ``poker_hand_voided``, ``poker_hand_paused`` (already paused)."""
    reason = required_reason(reason)
    with transaction.atomic():
        table = lock_table(table_id)
        hand = _hand_in_play(table)
        if table.phase == PAUSED:
            raise HandPaused(hand_id=hand.hand_id)
        remaining = None
        if hand.deadline is not None:
            remaining = max(0, int((hand.deadline - now).total_seconds() * 1000))
        data = {"reason": reason, "actor": actor, "at": iso(now), "seat": hand.actor_seat,
                "remaining_ms": remaining, "time_bank": hand.in_time_bank}  # fmt: skip
        _hand_append(hand, et.PAUSED, data, actor)  # the hand's deadline: none
        set_table(table, phase=PAUSED, deadline=None)
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
        table = lock_table(table_id)
        hand = _hand_in_play(table)
        if table.phase != PAUSED:
            raise HandNotPaused(hand_id=hand.hand_id, phase=table.phase)
        remaining = _last_pause(hand).get("remaining_ms")
        left = timedelta(milliseconds=remaining) if remaining is not None else timedelta(seconds=table.turn_seconds)
        deadline = now + left
        data = {"actor": actor, "at": iso(now), "seat": hand.actor_seat, "deadline": iso(deadline),
                "time_bank": hand.in_time_bank}  # fmt: skip
        _hand_append(hand, et.RESUMED, data, actor)  # the hand's deadline
        set_table(table, phase=HAND, deadline=deadline)
        return _control_result(table, hand)


def void_hand(*, table_id: int, actor: str, reason: str, now: datetime, automatic: bool = False) -> HandControlResult:
    """Void the hand in play or paused: every player gets back exactly the
    chips they put into it (``stack_before`` minus the engine's stack), from the
    hand's ``poker_pot`` to their ``poker_seat`` (to the wallet if they have
    left the seat dealt in since folding, also when they sat down again), with
    ``poker_hand.voided`` in one batch. No rake, no pot awarded; the pot account
    ends at zero; the next hand follows after the pause between hands. Refusals
    as ``pause_hand`` (a paused hand may be voided) and ``poker_pot_mismatch``
    (nothing changes). ``automatic``: the sweep's void of a hand whose dealer
    was gone too long (recorded as such)."""
    reason = required_reason(reason)
    with transaction.atomic():
        table = lock_table(table_id)
        hand = _hand_in_play(table)
        state, deck = hand_state(hand)  # the dealer's: the board's leaves are revealed below
        assert state is not None
        rows = list(hand.participants.order_by("seat_number"))
        pot = pot_account(hand_id=hand.hand_id, currency=table.currency)
        in_pot = balance_of(account_id=pot)
        refunds = {row.seat_number: row.stack_before - state.players[state.positions[row.seat_number]].stack
                   for row in rows}  # fmt: skip
        if any(amount < 0 for amount in refunds.values()) or sum(refunds.values()) != in_pot:
            raise PotMismatch(hand_id=hand.hand_id, pot=in_pot, refunds=sum(refunds.values()))
        # The seats dealt in that are still taken; a seat the player took after
        # leaving the dealt-in one is not in the hand: their refund goes to the wallet.
        seats = dealt_in_seats(hand)
        stream = et.hand_stream(hand.hand_id)
        cause = EventRef(stream, hand.stream_version + 1)
        legs: list[TransferSpec] = []
        returned: list[dict[str, Any]] = []
        for row in rows:
            amount = refunds[row.seat_number]
            to = "seat" if row.seat_number in seats else "wallet"
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
        voided, metadata = [NewEvent(et.VOIDED, data)], {"actor": actor, "correlation_id": hand.hand_id}
        sealed = is_sealed_deck(deck)
        if sealed and deck is not None:  # the board dealt so far; no hand was shown
            voided.append(NewEvent(et.CARDS_REVEALED, {"revealed": revealed_leaves(state=state, opened=deck),
                                                       "at": iso(now)}))  # fmt: skip
        settle_batch(
            idempotency_key=f"poker:{hand.hand_id}:void",
            currency=table.currency,
            appends=[StreamAppend(stream, hand.stream_version, voided, metadata)],
            transfers=legs,
        )
        # The hand voided, its players' stacks after = before, the refunds to the seats (the projectors).
        project_hand(events_of(stream_id=stream, first_version=hand.stream_version + 1, events=voided,
                               metadata=metadata, at=now), hand=hand, seats=seats)  # fmt: skip
        # Seed 001: the shuffled deck is not kept; the hands never shown stay unreadable.
        shred(hand.hand_id)
        transaction.on_commit(lambda: forget_hand(hand.hand_id))
        set_table(table, phase=BETWEEN, deadline=now + timedelta(seconds=table.between_hands_seconds))
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
