"""The player's commands in a house-banked round: chips, undo, clear, repeat,
double, and decisions. Each ``decide_*`` validates against the round and the
player's state and returns the events (typed, in their envelopes) or raises a
``RoundError`` and returns nothing. Pure: ``now`` (ISO text), the balance and
new hold ids are inputs.

Legality has one source: ``check_decision`` is what ``decide_decision``
enforces, and ``offered_options`` offers exactly the options it accepts.

A chip, repeat or double must leave the balance able to cover the round's
smallest forced decision wager (``decision_reserve``; docs/cashier-and-
responsible-gaming.md): else ``decision_would_be_uncovered``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from casino.errors import DomainError
from games.house.round.errors import (
    AlreadyDecided,
    AlreadyDoubled,
    AnteRequired,
    BelowMinimum,
    BettingClosed,
    DecisionNotCovered,
    DecisionWouldBeUncovered,
    InsufficientBalance,
    InvalidChip,
    MandatoryWagerMissing,
    NoDecisionWindow,
    NothingToRepeat,
    NothingToUndo,
    NotInRound,
    RoundFull,
    RoundPaused,
    SpotNotOffered,
)
from games.house.round.events import BET_PLACED, BetPlaced, BetRemoved, DecisionMade, Event
from games.house.round.state import (
    BETTING,
    PER_SEAT_MAX,
    PlayerState,
    RoundConfig,
    RoundState,
    before,
    config_of,
)
from games.house.rules.bonus_spin import InvalidBonusSpinWager, wager_units
from games.house.rules.definitions import DecisionAfterCall, DecisionOption, DecisionPoint, GameDefinition, WagerKind


@dataclass(frozen=True)
class BetOutcome:
    events: list[Event]
    capped: bool = False
    doubled: tuple[str, ...] = ()


def _betting_open(state: RoundState, now: str) -> RoundConfig:
    config = config_of(state)
    if state.paused:
        raise RoundPaused()
    if state.phase != BETTING or not before(now, state.deadline):
        raise BettingClosed(phase=state.phase, deadline=state.deadline)
    return config


def _automatic(definition: GameDefinition, spot: str, amount: int) -> dict[str, int]:
    return {w.name: amount for w in definition.wagers if w.kind is WagerKind.AUTOMATIC and w.equals == spot}


def _chip(
    config: RoundConfig,
    totals: Mapping[str, int],
    spot: str,
    amount: int,
    hold_id: str,
    source: str,
) -> tuple[BetPlaced | None, bool]:
    """One chip on ``spot`` (capped at the spot maximum). Returns (event or None, capped)."""
    definition = config.definition
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise InvalidChip(amount=amount)
    limits = config.limits.get(spot)
    wager = definition.wager(spot) if limits is not None else None
    if limits is None or wager is None or wager.kind not in (WagerKind.REQUIRED, WagerKind.OPTIONAL):
        raise SpotNotOffered(spot=spot, offered=sorted(config.limits))
    if spot != "ante" and not totals.get("ante"):
        raise AnteRequired(spot=spot)
    current = totals.get(spot, 0)
    room = int(limits["max"]) - current
    capped = amount > room
    amount = min(amount, room)
    if amount <= 0:
        return None, True
    if current + amount < int(limits["min"]):
        raise BelowMinimum(spot=spot, minimum=limits["min"], total=current + amount)
    if spot == "bonus_spin":
        wager_units(current + amount, config.currency_unit)  # exactly 1, 2 or 5 units
    automatic = _automatic(definition, spot, amount)
    return BetPlaced(spot, amount, automatic, hold_id, source, capped), capped


def check_chip(config: RoundConfig, amount: object) -> None:
    """A placed chip is a positive whole amount and, when the round has a chip set,
    one of its denominations (seed 000:179): ``invalid_chip``. Double and repeat
    re-place amounts already placed and are not single chips (``_chip``)."""
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise InvalidChip(amount=amount, chips=list(config.chips))
    if config.chips and amount not in config.chips:
        raise InvalidChip(amount=amount, chips=list(config.chips))


def missing_mandatory(config: RoundConfig, totals: Mapping[str, int]) -> list[str]:
    """The round's mandatory side wagers (seed 002:13) a player with bets
    ``totals`` has not made; ``[]`` for a player without bets."""
    if not totals:
        return []
    return [spot for spot in config.mandatory_wagers if not totals.get(spot)]


def decision_reserve(definition: GameDefinition, ante: int) -> int:
    """What a player with ``ante`` on the Ante must keep to be able to take the
    round's smallest forced decision wager (``GameDefinition.forced_multiplier``
    x Ante): the balance, and the loss limits, must still cover it after the bets."""
    return definition.forced_multiplier * ante


def reserve_after(state: RoundState, player: PlayerState, events: Sequence[Event]) -> int:
    """``decision_reserve`` for the Ante the player has once ``events`` (chips) apply."""
    ante = player.totals().get("ante", 0)
    for event in events:
        if event.type == BET_PLACED:
            placed = BetPlaced.from_data(event.data)
            ante += placed.amount if placed.spot == "ante" else 0
    return decision_reserve(config_of(state).definition, ante)


def _check_cover(needed: int, reserve: int, balance: int) -> None:
    """The stakes ``needed`` and then the decision ``reserve`` must fit the balance."""
    if needed > balance:
        raise InsufficientBalance(needed=needed, balance=balance)
    if needed + reserve > balance:
        raise DecisionWouldBeUncovered(needed=needed, reserve=reserve, balance=balance)


def decide_place_chip(
    state: RoundState, player: PlayerState, *, spot: str, amount: int, balance: int, hold_id: str, now: str
) -> BetOutcome:
    config = _betting_open(state, now)
    check_chip(config, amount)
    totals = player.totals()
    event, capped = _chip(config, totals, spot, amount, hold_id, "chip")
    if event is None:
        return BetOutcome([], capped=True)
    ante = totals.get("ante", 0) + (event.amount if spot == "ante" else 0)
    _check_cover(event.held, decision_reserve(config.definition, ante), balance)
    return BetOutcome([event.event(player.player_id)], capped=capped)


def check_room(state: RoundState, player: PlayerState, *, others: int) -> None:
    """Per-seat mode deals every participant their own hand: a player without
    bets in the round joins it with a first chip only while fewer than the
    round's ``max_seats`` (at most ``PER_SEAT_MAX``, the deck's 22) ``others``
    hold bets in it, else ``round_full``. Shared mode has no limit. Counting the
    round's players with bets at every chip keeps the limit true when betting
    closes, so ``decide_close_betting`` never meets more hands than the deck has."""
    config = config_of(state)
    limit = min(config.max_seats, PER_SEAT_MAX)
    if config.hand_mode == "per_seat" and not player.chips and others >= limit:
        raise RoundFull(participants=others, limit=limit)


def betting_not_closed(state: RoundState, now: str) -> bool:
    """Bets of this round are not yet confirmed: its betting window is open, or
    paused with time left on it (it resumes with that time)."""
    if state.phase != BETTING or state.closed or state.voided:
        return False
    if state.paused:
        return (state.paused_remaining_ms or 0) > 0
    return before(now, state.deadline)


def decide_leave(state: RoundState, player: PlayerState, *, now: str) -> list[Event]:
    """The player gives up their seat. Seed 000 (Place Bets): leaving while
    betting time remains "will be interpreted as leaving the game, and your bets
    will therefore be declined for that particular game round". So while
    betting has not closed every chip is removed (``house_bet.removed``, reason
    ``leave``, its holds voided) and a per-seat round has the place free. Once
    betting closed nothing changes: "A round, once bets close, proceeds whether
    or not a player stays connected" (RULES.md), the wagers stay in play."""
    if not player.chips or not betting_not_closed(state, now):
        return []
    removed = BetRemoved(tuple(c.hold_id for c in player.chips), "leave", totals=player.totals())
    return [removed.event(player.player_id)]


def decide_undo(state: RoundState, player: PlayerState, *, now: str) -> BetOutcome:
    _betting_open(state, now)
    if not player.chips:
        raise NothingToUndo()
    last = player.chips[-1]
    removed = BetRemoved((last.hold_id,), "undo", spot=last.spot, amount=last.amount)
    return BetOutcome([removed.event(player.player_id)])


def decide_clear(state: RoundState, player: PlayerState, *, now: str) -> BetOutcome:
    _betting_open(state, now)
    if not player.chips:
        raise NothingToUndo()
    removed = BetRemoved(tuple(c.hold_id for c in player.chips), "clear", totals=player.totals())
    return BetOutcome([removed.event(player.player_id)])


def decide_repeat(
    state: RoundState,
    player: PlayerState,
    *,
    previous: Mapping[str, int],
    balance: int,
    hold_ids: Sequence[str],
    now: str,
) -> BetOutcome:
    """Place the previous round's bets (spot totals, ante first), each capped at its maximum.
    Refused whole when the balance does not cover them all, or when they would
    leave out a mandatory side wager (``mandatory_wager_missing``: the round
    would return them at betting close)."""
    config = _betting_open(state, now)
    if not previous:
        raise NothingToRepeat()
    totals = dict(player.totals())
    events: list[Event] = []
    capped_any = False
    ids = iter(hold_ids)
    needed = 0
    definition = config.definition
    # Spots the table no longer offers are left out (the rest is placed as before).
    placeable = [w.name for w in definition.wagers if w.name in previous and w.name in config.limits]
    for spot in placeable:
        event, capped = _chip(config, totals, spot, int(previous[spot]), next(ids), "repeat")
        capped_any |= capped
        if event is None:
            continue
        needed += event.held
        events.append(event.event(player.player_id))
        totals[spot] = totals.get(spot, 0) + event.amount
    missing = missing_mandatory(config, totals)
    if missing:
        raise MandatoryWagerMissing(missing=missing)
    _check_cover(needed, decision_reserve(definition, totals.get("ante", 0)), balance)
    return BetOutcome(events, capped=capped_any)


def decide_double(
    state: RoundState, player: PlayerState, *, balance: int, hold_ids: Sequence[str], now: str
) -> BetOutcome:
    """Double every current bet once per round, spots in the order first placed; when
    the balance runs out, the remaining spots stay as they are. A Bonus Spin
    wager that would not be 1, 2 or 5 units once doubled is left as it is."""
    config = _betting_open(state, now)
    if player.doubled:
        raise AlreadyDoubled()
    if not player.chips:
        raise NothingToUndo("no bets to double")
    totals = dict(player.totals())
    order: list[str] = []
    for chip in player.chips:
        if chip.spot not in order:
            order.append(chip.spot)
    events: list[Event] = []
    doubled: list[str] = []
    capped_any = False
    # The decision reserve of the current Ante stays out of reach; doubling the
    # Ante raises it by its own share.
    multiplier = config.definition.forced_multiplier
    left = balance - multiplier * totals.get("ante", 0)
    ids = iter(hold_ids)
    first_cost = None
    for spot in order:
        try:
            event, capped = _chip(config, totals, spot, totals[spot], next(ids), "double")
        except InvalidBonusSpinWager:
            continue
        capped_any |= capped
        if event is None:
            continue
        cost = event.held + (multiplier * event.amount if spot == "ante" else 0)
        first_cost = event.held if first_cost is None else first_cost
        if cost > left:
            break
        left -= cost
        events.append(event.event(player.player_id))
        doubled.append(spot)
    if not events:
        needed = first_cost if first_cost is not None else totals[order[0]]
        if needed <= balance:  # the stake fits, not with the decision reserve
            raise DecisionWouldBeUncovered(needed=needed, reserve=multiplier * totals.get("ante", 0), balance=balance)
        raise InsufficientBalance(needed=needed, balance=balance)
    return BetOutcome(events, capped=capped_any, doubled=tuple(doubled))


def check_decision(
    state: RoundState, player: PlayerState, *, option: str, balance: int, now: str
) -> tuple[DecisionPoint, DecisionOption, int]:
    """Raise what refuses ``option`` now, or return (decision point, option,
    amount to hold). The one legality check of decisions: ``decide_decision``
    and ``offered_options`` both call it."""
    config = config_of(state)
    if state.paused:
        raise RoundPaused()
    streets = {p.street for p in config.definition.decision_points}
    if state.phase not in streets or not before(now, state.deadline):
        raise NoDecisionWindow(phase=state.phase)
    if player.player_id not in state.participants:
        raise NotInRound()
    if player.done_deciding:
        raise DecisionAfterCall(street=state.phase, option=option)
    point = config.definition.decision_point(state.phase)
    chosen = point.option(option)
    if player.decided(point.street):
        raise AlreadyDecided(street=point.street)
    amount = chosen.multiplier * player.totals()["ante"]
    if amount > balance:
        raise DecisionNotCovered(option=option, amount=amount, balance=balance)
    return point, chosen, amount


def limit_exempt(state: RoundState, player: PlayerState, amount: int) -> bool:
    """A decision wager responsible gaming never refuses: at most the round's
    smallest forced decision wager, which the loss limits already made room for
    when the bets were placed (``decision_reserve``). Refusing it would leave
    only the fold, and lose the stakes already down."""
    return amount <= decision_reserve(config_of(state).definition, player.totals().get("ante", 0))


def offered_options(
    state: RoundState, player: PlayerState, *, balance: int, now: str, allowance: int | None = None
) -> list[str]:
    """The options ``decide_decision`` would accept from this player now (in the
    decision point's order); none outside a decision window. ``allowance``: the
    largest stake responsible gaming accepts now (``None``: no limit); an option
    above it is hidden unless ``limit_exempt`` (the bet services refuse exactly
    those). Only options whose timeout default is a check can be hidden by it:
    the forced wager that a fold is the alternative to is exempt."""
    if state.config is None:
        return []
    points = {p.street: p for p in state.config.definition.decision_points}
    point = points.get(state.phase)
    if point is None:
        return []
    offered = []
    for candidate in point.options:
        try:
            _, _, amount = check_decision(state, player, option=candidate.name, balance=balance, now=now)
        except DomainError:
            continue
        if allowance is not None and amount > allowance and not limit_exempt(state, player, amount):
            continue
        offered.append(candidate.name)
    return offered


def decide_decision(
    state: RoundState, player: PlayerState, *, option: str, balance: int, hold_id: str, now: str
) -> list[Event]:
    """Take ``option`` at the open decision point (a call/play held under ``hold_id``)."""
    point, chosen, amount = check_decision(state, player, option=option, balance=balance, now=now)
    made = DecisionMade(point.street, chosen.name, False, amount, chosen.folds, hold_id if amount else None, now)
    return [made.event(player.player_id)]
