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
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any

from django.db import transaction

from casino.responsible_gaming import assert_may_wager, note_wager
from games.house.models import HouseRound, HouseTable, PlayerRound
from games.house.round.commands import (
    BetOutcome,
    check_room,
    decide_clear,
    decide_decision,
    decide_double,
    decide_place_chip,
    decide_repeat,
    decide_undo,
    limit_exempt,
    reserve_after,
)
from games.house.round.errors import NotInRound, NotSeated, WrongPhase
from games.house.round.events import BET_PLACED, BetPlaced, BetRemoved, DecisionMade, Event
from games.house.round.state import PlayerState, RoundState, config_of
from games.house.services.rounds import TableTick
from games.house.store.cache import remember_player
from games.house.store.commands import (
    Accounts,
    CommandContext,
    read_command,
    save_decision,
    save_player,
    seat_and_bettors,
)
from games.house.store.commit import Money, Staged, stage
from games.house.store.rows import state_from_json
from games.house.store.streams import iso
from ledger.services.postings import pipelined


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


def _read(
    *, command: str, table_id: int, player_id: int, key: str, request: dict[str, Any], now: datetime, seated: bool
) -> tuple[Any, CommandContext | None]:
    """Claim ``key`` and read the command's context (``store.commands.read_command``):
    ``(first result, None)`` for a retry, ``(None, context)`` otherwise. ``seated``:
    refuse a player without a seat (``not_seated``). Raises ``WrongPhase`` when
    the table has no round."""
    retry, first, context, has_seat = read_command(
        command=command, table_id=table_id, player_id=player_id, key=key, request=request, now=now
    )
    if retry:
        return first, None
    if context is None:
        raise WrongPhase("no round at this table", table_id=table_id)
    if seated and not has_seat:
        raise NotSeated(table_id=table_id)
    return None, context


def _bet_command(
    *, command: str, table_id: int, player_id: int, idempotency_key: str, now: datetime, request: dict[str, Any],
    decide: Decide,
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
        staged: Staged | None = None
        if any(event.type == BET_PLACED for event in outcome.events):
            _check_room(table_id=table_id, round_row=round_row, state=state, player=player)
        if outcome.events:
            money = _bet_money(outcome.events, accounts)
            new_stake = sum(hold[4] for hold in money.open_holds)
            if new_stake:
                # Responsible gaming refuses new stakes (exclusion, cool-off,
                # session and loss limits, with room left for the round's
                # smallest forced decision and those pending at the player's
                # other tables); removing chips is always allowed.
                assert_may_wager(player_id=player_id, amount=new_stake, currency=round_row.currency, now=now,
                                 settings=context.settings, reserve=reserve_after(state, player, outcome.events),
                                 excluding=round_row.round_id)  # fmt: skip
                note_wager(player_id=player_id, currency=round_row.currency, now=now, settings=context.settings)
            staged = stage(
                round_row=round_row, state=state, players={player_id: row}, events=outcome.events, money=money,
                idempotency_key=idempotency_key, actor=f"user:{player_id}", now=now, project_players=False,
                head_hashes={player_id: context.head_hash} if context.head_hash else None, states={player_id: player},
            )  # fmt: skip
            changed = staged.players[player_id]
            remember_player(table_id, round_row.round_id, changed, context.incarnation)
            # Only this player's holds moved: the wallet changed by the stake difference.
            balance += player.staked - changed.staked
            player = changed
        result = BetResult(round_row.round_id, player.totals(), outcome.capped, balance, list(outcome.doubled))
        if staged is not None and staged.pipelinable:
            # The command's last write is sent first and the events and money
            # after it, in one pipeline: one round trip for both (a refusal of
            # either rolls both back with the transaction).
            with pipelined():
                save_player(row, changed, idempotency_key, result.as_json(), now)
                staged.write()
            return result
        if staged is not None:
            staged.write()
        save_player(row, changed, idempotency_key, result.as_json(), now)
        return result


def _check_room(*, table_id: int, round_row: HouseRound, state: RoundState, player: PlayerState) -> None:
    """A chip in a per-seat round: the seat is read again (and held: a leave
    waits for this command, then returns the chip) and the round's players with
    bets counted (``check_room``: ``round_full``). Per-seat tables only: a shared
    table has no limit, and its bet path keeps its one context query."""
    if config_of(state).hand_mode != "per_seat":
        return
    seated, others = seat_and_bettors(table_id=table_id, round_row=round_row, player_id=player.player_id)
    if not seated:
        raise NotSeated(table_id=table_id)
    check_room(state, player, others=others)


def _bet_money(events: list[Event], accounts: Accounts) -> Money:
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


# --- the bet commands' domain calls (shared with ``services.group``) -----------------------------

#: A bet command's decision on (round state, player state, wallet balance).
Decide = Callable[[RoundState, PlayerState, int], BetOutcome]


def chip_decider(*, spot: str, amount: int, now: datetime) -> Decide:
    hold_id = _new_ids(1)[0]
    at = iso(now)
    return lambda s, p, b: decide_place_chip(s, p, spot=spot, amount=amount, balance=b, hold_id=hold_id, now=at)


def undo_decider(*, now: datetime) -> Decide:
    at = iso(now)
    return lambda s, p, b: decide_undo(s, p, now=at)


def clear_decider(*, now: datetime) -> Decide:
    at = iso(now)
    return lambda s, p, b: decide_clear(s, p, now=at)


def repeat_decider(*, previous: dict[str, int], now: datetime) -> Decide:
    """``previous``: the bets to place again (``previous_bets``)."""
    ids, at = _new_ids(len(previous)), iso(now)
    return lambda s, p, b: decide_repeat(s, p, previous=previous, balance=b, hold_ids=ids, now=at)


def double_decider(*, now: datetime) -> Decide:
    ids, at = _new_ids(8), iso(now)
    return lambda s, p, b: decide_double(s, p, balance=b, hold_ids=ids, now=at)


def place_chip(
    *, table_id: int, player_id: int, spot: str, amount: int, idempotency_key: str, now: datetime
) -> BetResult:
    """Add one chip to ``spot`` (capped at its maximum: ``capped`` says so)."""
    return _bet_command(
        command="house.place_chip", table_id=table_id, player_id=player_id, idempotency_key=idempotency_key,
        now=now, request={"spot": spot, "amount": amount}, decide=chip_decider(spot=spot, amount=amount, now=now),
    )  # fmt: skip


def undo_bet(*, table_id: int, player_id: int, idempotency_key: str, now: datetime) -> BetResult:
    """Remove the last chip placed (repeatable, in reverse order)."""
    return _bet_command(
        command="house.undo_bet", table_id=table_id, player_id=player_id, idempotency_key=idempotency_key,
        now=now, request={}, decide=undo_decider(now=now),
    )  # fmt: skip


def clear_bets(*, table_id: int, player_id: int, idempotency_key: str, now: datetime) -> BetResult:
    """Remove every chip."""
    return _bet_command(
        command="house.clear_bets", table_id=table_id, player_id=player_id, idempotency_key=idempotency_key,
        now=now, request={}, decide=clear_decider(now=now),
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
    return _bet_command(
        command="house.repeat_bets", table_id=table_id, player_id=player_id, idempotency_key=idempotency_key,
        now=now, request={}, decide=repeat_decider(previous=previous, now=now),
    )  # fmt: skip


def double_bets(*, table_id: int, player_id: int, idempotency_key: str, now: datetime) -> BetResult:
    """Double every current bet once per round (in placing order while the balance lasts)."""
    return _bet_command(
        command="house.double_bets", table_id=table_id, player_id=player_id, idempotency_key=idempotency_key,
        now=now, request={}, decide=double_decider(now=now),
    )  # fmt: skip


def make_decision(*, table_id: int, player_id: int, option: str, idempotency_key: str, now: datetime) -> DecisionResult:
    """Take ``option`` at the open decision point. A call/play is held like a bet."""
    with transaction.atomic():
        first, context = _read(command="house.make_decision", table_id=table_id, player_id=player_id,
                               key=idempotency_key, request={"option": option}, now=now, seated=False)  # fmt: skip
        if context is None:
            return decision_from_stored(first)
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
            # (checking and folding stay possible), except the round's smallest
            # forced wager, which the limits made room for when the bets were placed.
            if not limit_exempt(state, player, made.amount):
                assert_may_wager(player_id=player_id, amount=made.amount, currency=round_row.currency, now=now,
                                 settings=context.settings, excluding=round_row.round_id)  # fmt: skip
            note_wager(player_id=player_id, currency=round_row.currency, now=now, settings=context.settings)
            money.open_holds.append((hold_id, accounts.wallet, accounts.held, accounts.house, made.amount, event))
        staged = stage(
            round_row=round_row, state=state, players={player_id: row}, events=events, money=money,
            idempotency_key=idempotency_key, actor=f"user:{player_id}", now=now, project_players=False,
            head_hashes={player_id: context.head_hash} if context.head_hash else None, states={player_id: player},
        )  # fmt: skip
        changed = staged.players[player_id]
        remember_player(table_id, round_row.round_id, changed, context.incarnation)
        result = DecisionResult(round_row.round_id, made.street, made.option, made.amount, balance - made.amount,
                                False, None)  # fmt: skip
        # The last write goes first, reading the tick as it stores it (the
        # table's row and the others': this command changes neither), and the
        # events and money after it, in one pipeline: one round trip for both.
        with pipelined() if staged.pipelinable else nullcontext():
            answer = save_decision(row, changed, idempotency_key, decision_stored(result), now, round_row=round_row,
                                   street=state.phase)  # fmt: skip
            staged.write()
        (current, phase, phase_seq, deadline), waiting = answer()
        tick = TableTick(table_id, current, current, phase, phase_seq, deadline)
        return replace(result, all_decided=not waiting, tick=tick)


def decision_stored(result: DecisionResult) -> dict[str, Any]:
    """A decision's result as stored under its idempotency key (JSON: the tick's deadline as ISO text)."""
    stored = asdict(result)
    if stored["tick"] and stored["tick"]["deadline"]:
        stored["tick"]["deadline"] = stored["tick"]["deadline"].isoformat()
    return stored


def decision_from_stored(first: dict[str, Any]) -> DecisionResult:
    """The ``DecisionResult`` a retry returns: ``decision_stored``'s inverse."""
    first = dict(first)
    tick = first.pop("tick")
    if tick is not None:
        tick["deadline"] = datetime.fromisoformat(tick["deadline"]) if tick["deadline"] else None
    return DecisionResult(**first, tick=TableTick(**tick) if tick else None)
