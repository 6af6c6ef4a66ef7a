"""Texas hold'em hand aggregate: ``decide(state, command) -> [events]`` and
``apply(state, event) -> state``, both pure.

Positions: a hand's players are kept in *position order*, clockwise from the
first player left of the button (position 0) to the button (last). With three
or more players position 0 posts the small blind and 1 the big blind;
heads-up the button posts the small blind and acts first before the flop,
position 0 posts the big blind and acts first after it. Seat numbers grow
clockwise ("left").

``decide`` validates a command against the state and returns the events it
causes, including everything that follows automatically (closing a betting
round, returning an uncalled bet, the showdown, rake and pots); it raises a
``PokerError`` subclass and returns nothing when the command is refused.
Cards come in through commands (``DealHoleCards``, ``DealBoard``): the
shuffle is the caller's (``next_deal`` deals from a shuffled deck).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NamedTuple

from games.cards.deal import DealtCard
from games.poker.engine import errors
from games.poker.engine.events import (
    ActionTaken,
    AntePosted,
    BettingRoundEnded,
    BlindPosted,
    BoardDealt,
    Event,
    HandEnded,
    HandMucked,
    HandShown,
    HandStarted,
    HoleCardsDealt,
    PotAwarded,
    RakeTaken,
    UncalledBetReturned,
)
from games.poker.engine.rules import HandConfig, PotSplit, RakeRule, Reopening, Variant, allocate_rake

Strength = Callable[[Sequence[str]], int]
"""Hand strength of hole + board cards; higher is better, equal ties."""

RANKS = "23456789TJQKA"
SUITS = "shdc"
STREET_NAMES = ("preflop", "flop", "turn", "river")


def default_strength(cards: Sequence[str]) -> int:
    """The project's evaluator (``games.cards.evaluator.rank_of``)."""
    return _evaluator()(cards)


_EVALUATOR: list[Strength] = []


def _evaluator() -> Strength:
    if not _EVALUATOR:
        from games.cards.cards import FULL_DECK
        from games.cards.evaluator import rank7_indices, rank_indices

        index = {str(card): card.index for card in FULL_DECK}

        def strength(cards: Sequence[str]) -> int:
            if len(cards) == 7:
                a, b, c, d, e, f, g = cards
                return rank7_indices(index[a], index[b], index[c], index[d], index[e], index[f], index[g])
            return rank_indices([index[card] for card in cards])

        _EVALUATOR.append(strength)
    return _EVALUATOR[0]


class Phase(StrEnum):
    DEALING = "dealing"  # blinds are in; waiting for the hole cards
    BETTING = "betting"
    BOARD = "board"  # waiting for the next board cards
    SHOWDOWN = "showdown"  # betting is over; settlement events follow
    COMPLETE = "complete"


_BETTING, _SHOWDOWN, _COMPLETE = Phase.BETTING, Phase.SHOWDOWN, Phase.COMPLETE


class Action(StrEnum):
    FOLD = "fold"
    CHECK = "check"
    CALL = "call"
    BET = "bet"
    RAISE = "raise"
    ALL_IN = "all_in"


class Player(NamedTuple):
    seat: int
    player_id: str
    stack: int
    bet: int = 0  # this betting round
    committed: int = 0  # blinds and bets this hand, antes excluded, net of returns
    ante: int = 0
    folded: bool = False
    hole: tuple[str | None, ...] = ()
    # The round's high bet right after this player last called, bet or raised;
    # 0: only checked; -1: not yet acted.
    acted_at: int = -1
    shown: bool = False
    won: int = 0


class HandState(NamedTuple):
    hand_id: str
    config: HandConfig
    button: int
    players: tuple[Player, ...]
    phase: Phase = Phase.DEALING
    street: int = 0
    board: tuple[str, ...] = ()
    to_act: int = -1  # position, -1 when nobody is to act
    max_bet: int = 0
    full_raise: int = 0  # the last full bet/raise increment of the round
    raise_count: int = 0  # bets and raises this round (fixed-limit cap)
    last_aggressor: int = -1
    pots: tuple[int, ...] = ()
    rake: int = 0
    split_pots: int = 0  # pots shared by tied winners
    version: int = 0
    positions: Mapping[int, int] = {}  # seat -> position (never mutated)
    # Only under pokerkit's reopening rule (``Reopening.POKERKIT``):
    short_sum: int = 0  # pokerkit's consecutive short all-in increments, summed
    full_level: int = 0  # the round's high bet after its last raise pokerkit calls full

    def position_of(self, seat: int) -> int:
        try:
            return self.positions[seat]
        except KeyError:
            raise errors.UnknownSeat(f"no player in seat {seat}", seat=seat) from None

    @property
    def pot_total(self) -> int:
        """Every chip put in this hand (antes, blinds, bets, current bets)."""
        return sum(p.committed + p.ante for p in self.players)

    @property
    def stacks(self) -> tuple[int, ...]:
        return tuple(p.stack for p in self.players)

    @property
    def flop_seen(self) -> bool:
        return len(self.board) >= 3

    @property
    def acting_seat(self) -> int | None:
        return self.players[self.to_act].seat if self.to_act >= 0 else None


class SeatSpec(NamedTuple):
    seat: int
    player_id: str
    stack: int


@dataclass(frozen=True, slots=True)
class StartHand:
    hand_id: str
    config: HandConfig
    seats: tuple[SeatSpec, ...]
    button: int


@dataclass(frozen=True, slots=True)
class DealHoleCards:
    """Two cards per seat (``None`` for a card an imported history hides)."""

    cards: Mapping[int, tuple[str | None, ...]]


@dataclass(frozen=True, slots=True)
class DealBoard:
    cards: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Act:
    """``amount`` is the player's total bet for the round after a bet or
    raise ("raise to"); ignored for the other actions."""

    seat: int
    action: Action
    amount: int | None = None


Command = StartHand | DealHoleCards | DealBoard | Act


class LegalActions(NamedTuple):
    seat: int
    call_amount: int  # 0: may check
    can_raise: bool
    min_to: int  # minimum bet/raise-to (all-in if smaller); 0 when no raise
    max_to: int
    refusal: type[errors.PokerError] | None  # why raising is refused


# ---------------------------------------------------------------- apply


def apply(state: HandState | None, event: Event) -> HandState:
    """The state after ``event``. Pure; never validates (``decide`` did)."""
    if state is None:
        if not isinstance(event, HandStarted):
            raise TypeError("the first event of a hand is HandStarted")
        return _started(event)
    handler = _APPLY.get(type(event))
    if handler is None:
        raise TypeError(f"unknown event {event!r}")
    return handler(state, event)


# The handlers build states positionally: NamedTuple._replace is several
# times slower, and ``apply`` is the engine's hot path.


_tuple_new = tuple.__new__  # NamedTuple.__new__ without its Python-level frame


def _player(*fields: Any) -> Player:
    return _tuple_new(Player, fields)


def _evolve(
    s: HandState,
    players: tuple[Player, ...],
    phase: Phase,
    to_act: int,
    max_bet: int,
    full_raise: int,
    raise_count: int,
    last_aggressor: int,
) -> HandState:
    return _tuple_new(HandState, (
        s.hand_id, s.config, s.button, players, phase, s.street, s.board, to_act, max_bet, full_raise,
        raise_count, last_aggressor, s.pots, s.rake, s.split_pots, s.version + 1, s.positions, s.short_sum,
        s.full_level,
    ))  # fmt: skip


def _apply_action(s: HandState, e: ActionTaken) -> HandState:
    (hand_id, config, button, players, phase, street, board, _, max_bet, full_raise, raise_count, aggressor,
     pots, rake, split, version, positions, short_sum, full_level) = s  # fmt: skip
    i = positions[e.seat]
    seat, player_id, stack, bet, committed, ante, _, hole, acted_at, shown, won = players[i]
    if e.action == "fold":
        p = _tuple_new(Player, (seat, player_id, stack, bet, committed, ante, True, hole, acted_at, shown, won))
    elif e.action == "check":  # acted, but on no wager: acted_at 0
        p = _tuple_new(Player, (seat, player_id, stack, bet, committed, ante, False, hole, 0, shown, won))
    else:
        total = e.total
        if total > max_bet:
            increment = total - max_bet
            if config.reopening is Reopening.POKERKIT:
                # pokerkit: a raise is full when it is at least the round's largest
                # increment so far (which starts at 0, the blinds not counted).
                if increment >= full_raise:
                    full_level = total
                full_raise = max(full_raise, increment)
                short_sum = short_sum + increment if e.all_in else 0
                if short_sum >= full_raise:
                    short_sum = 0
            elif increment >= max(full_raise, config.street_min_bet(street)):
                full_raise = increment
            raise_count += 1
            aggressor = i
            max_bet = total
        amount = e.amount
        p = _tuple_new(
            Player, (seat, player_id, stack - amount, total, committed + amount, ante, False, hole, max_bet, shown, won)
        )
    players = (*players[:i], p, *players[i + 1 :])
    if e.action == "fold" and sum(1 for q in players if not q.folded) < 2:
        to_act = -1
    else:
        to_act = _next_actor(players, max_bet, i + 1)
    return _tuple_new(HandState, (
        hand_id, config, button, players, phase, street, board, to_act, max_bet,
        full_raise, raise_count, aggressor, pots, rake, split, version + 1, positions, short_sum, full_level,
    ))  # fmt: skip


def _apply_ante(s: HandState, e: AntePosted) -> HandState:
    i = s.positions[e.seat]
    seat, player_id, stack, bet, committed, ante, folded, hole, acted_at, shown, won = s.players[i]
    p = _tuple_new(Player, (seat, player_id, stack - e.amount, bet, committed, ante + e.amount, folded, hole,
                            acted_at, shown, won))  # fmt: skip
    players = (*s.players[:i], p, *s.players[i + 1 :])
    return _evolve(s, players, s.phase, s.to_act, s.max_bet, s.full_raise, s.raise_count, s.last_aggressor)


def _apply_blind(s: HandState, e: BlindPosted) -> HandState:
    i = s.positions[e.seat]
    seat, player_id, stack, bet, committed, ante, folded, hole, acted_at, shown, won = s.players[i]
    amount = e.amount
    p = _tuple_new(Player, (seat, player_id, stack - amount, bet + amount, committed + amount, ante, folded, hole,
                            acted_at, shown, won))  # fmt: skip
    players = (*s.players[:i], p, *s.players[i + 1 :])
    max_bet = max(s.max_bet, p.bet)
    return _evolve(s, players, s.phase, s.to_act, max_bet, s.full_raise, s.raise_count, s.last_aggressor)


def _apply_hole(s: HandState, e: HoleCardsDealt) -> HandState:
    i = s.positions[e.seat]
    p = s.players[i]
    p = Player(p.seat, p.player_id, p.stack, p.bet, p.committed, p.ante, p.folded, tuple(e.cards), p.acted_at)
    players = (*s.players[:i], p, *s.players[i + 1 :])
    if i == len(players) - 1 and all(q.hole for q in players):
        # Preflop the player after the largest blind or straddle opens.
        opener = max(range(len(players)), key=lambda k: (players[k].bet, k)) + 1
        # The big blind is the round's bet (when the table counts it towards the cap).
        raise_count = 1 if s.config.variant is Variant.FIXED_LIMIT and s.config.blind_is_bet else 0
        to_act = _next_actor(players, s.max_bet, opener)
        return _evolve(s, players, Phase.BETTING, to_act, s.max_bet, s.full_raise, raise_count, s.last_aggressor)
    return _evolve(s, players, s.phase, s.to_act, s.max_bet, s.full_raise, s.raise_count, s.last_aggressor)


def _holes_dealt(s: HandState, events: list[Event]) -> HandState:
    """The state after all the HoleCardsDealt ``events`` at once (equal to
    applying them one by one, without the states in between)."""
    dealt = [e for e in events if isinstance(e, HoleCardsDealt)]
    players = tuple(
        _player(p.seat, p.player_id, p.stack, p.bet, p.committed, p.ante, p.folded, e.cards, p.acted_at, p.shown, p.won)
        for p, e in zip(s.players, dealt, strict=True)
    )
    interim = s._replace(players=players[:-1] + s.players[-1:], version=s.version + len(dealt) - 1)
    return _apply_hole(interim, dealt[-1])


def _apply_uncalled(s: HandState, e: UncalledBetReturned) -> HandState:
    i = s.positions[e.seat]
    p = s.players[i]
    p = p._replace(stack=p.stack + e.amount, bet=p.bet - e.amount, committed=p.committed - e.amount)
    players = (*s.players[:i], p, *s.players[i + 1 :])
    return _evolve(s, players, s.phase, s.to_act, s.max_bet, s.full_raise, s.raise_count, s.last_aggressor)


def _apply_round_ended(s: HandState, e: BettingRoundEnded) -> HandState:
    players = tuple([
        _tuple_new(Player, (p[0], p[1], p[2], 0, p[4], p[5], p[6], p[7], -1, p[9], p[10])) for p in s.players
    ])  # fmt: skip
    alive = sum(1 for p in players if not p.folded)
    phase = Phase.BOARD if e.street < 3 and alive > 1 else Phase.SHOWDOWN
    return _evolve(s, players, phase, -1, 0, 0, 0, s.last_aggressor)._replace(short_sum=0, full_level=0)


def _apply_board(s: HandState, e: BoardDealt) -> HandState:
    players = s.players
    return _tuple_new(HandState, (
        s.hand_id, s.config, s.button, players, Phase.BETTING, e.street, s.board + tuple(e.cards),
        _next_actor(players, 0, 0), 0, 0, 0, -1, s.pots, s.rake, s.split_pots, s.version + 1, s.positions, 0, 0,
    ))  # fmt: skip


def _apply_shown(s: HandState, e: HandShown) -> HandState:
    i = s.positions[e.seat]
    p = s.players[i]
    p = Player(
        p.seat, p.player_id, p.stack, p.bet, p.committed, p.ante, p.folded, tuple(e.cards), p.acted_at, True, p.won
    )
    players = (*s.players[:i], p, *s.players[i + 1 :])
    return _evolve(s, players, Phase.SHOWDOWN, -1, s.max_bet, s.full_raise, s.raise_count, s.last_aggressor)


def _apply_mucked(s: HandState, e: HandMucked) -> HandState:
    return s._replace(phase=Phase.SHOWDOWN, version=s.version + 1)


def _apply_rake(s: HandState, e: RakeTaken) -> HandState:
    return s._replace(rake=e.amount, phase=Phase.SHOWDOWN, version=s.version + 1)


def _apply_pot(s: HandState, e: PotAwarded) -> HandState:
    players = s.players
    for seat, chips in e.winners:
        i = s.positions[seat]
        p = players[i]
        players = (*players[:i], p._replace(stack=p.stack + chips, won=p.won + chips), *players[i + 1 :])
    split = s.split_pots + (len(e.winners) > 1)
    return s._replace(players=players, pots=(*s.pots, e.amount), split_pots=split, version=s.version + 1)


def _apply_ended(s: HandState, e: HandEnded) -> HandState:
    return s._replace(phase=Phase.COMPLETE, to_act=-1, version=s.version + 1)


_APPLY: dict[type[Event], Callable[[HandState, Any], HandState]] = {
    ActionTaken: _apply_action,
    AntePosted: _apply_ante,
    BlindPosted: _apply_blind,
    HoleCardsDealt: _apply_hole,
    UncalledBetReturned: _apply_uncalled,
    BettingRoundEnded: _apply_round_ended,
    BoardDealt: _apply_board,
    HandShown: _apply_shown,
    HandMucked: _apply_mucked,
    RakeTaken: _apply_rake,
    PotAwarded: _apply_pot,
    HandEnded: _apply_ended,
}


def _started(event: HandStarted) -> HandState:
    rake = RakeRule(*event.rake) if event.rake is not None else None
    config = HandConfig(
        variant=Variant(event.variant),
        blinds_or_straddles=tuple(event.blinds_or_straddles),
        antes=tuple(event.antes),
        ante=event.ante,
        min_bet=event.min_bet,
        small_bet=event.small_bet,
        big_bet=event.big_bet,
        rake=rake,
        raise_cap=event.raise_cap,
        blind_is_bet=event.blind_is_bet,
        heads_up_uncapped=event.heads_up_uncapped,
        reopening=Reopening(event.reopening),
        pot_split=PotSplit(event.pot_split),
    )
    players = tuple(Player(seat, player_id, stack) for seat, player_id, stack in event.seats)
    positions = {p.seat: i for i, p in enumerate(players)}
    return HandState(event.hand_id, config, event.button, players, version=1, positions=positions)


def _next_actor(players: tuple[Player, ...], max_bet: int, start: int) -> int:
    """The next position from ``start`` that has to act, or -1. A player acts
    who is in the hand with chips and owes chips, or who has not acted this
    round while someone else with chips could still bet against them (the
    big blind's option included). Callers make sure two or more players are
    still in the hand (after a fold, ``_apply_action`` checks)."""
    n = len(players)
    for k in range(start, start + n):
        p = players[k % n]
        if p[6] or not p[2]:  # folded, or all-in
            continue
        if p[3] < max_bet:  # owes chips
            return k % n
        if p[8] < 0:  # has not acted: only if someone else could still bet
            for q in players:
                if q is not p and not q[6] and q[2]:
                    return k % n
    return -1


# ---------------------------------------------------------------- queries


def legal_actions(state: HandState) -> LegalActions | None:
    """What the player to act may do, or ``None`` when nobody is to act."""
    if state.phase is not Phase.BETTING or state.to_act < 0:
        return None
    i = state.to_act
    p = state.players[i]
    call = min(state.max_bet - p.bet, p.stack)
    refusal = _raise_refusal(state, i)
    if refusal is not None:
        return LegalActions(p.seat, call, False, 0, 0, refusal)
    min_to, max_to = _raise_bounds(state, i)
    return LegalActions(p.seat, call, True, min_to, max_to, None)


def _raise_refusal(state: HandState, i: int) -> type[errors.PokerError] | None:
    p = state.players[i]
    if p.stack <= state.max_bet - p.bet:
        return errors.NoOneToRaise  # the player can only call (all-in) or fold
    if not any(j != i and not q.folded and q.stack + q.bet > state.max_bet for j, q in enumerate(state.players)):
        return errors.NoOneToRaise
    config = state.config
    if config.variant is Variant.FIXED_LIMIT:
        cap = config.capped(players_in=sum(1 for q in state.players if not q.folded))
        if cap is not None and state.raise_count >= cap:
            return errors.RaiseCapReached
    # A short all-in does not reopen the betting to a player who has already
    # acted on a wager this round (called, bet or raised: ``acted_at > 0``)
    # unless the raises since then add up to a full raise. A player who only
    # checked (``acted_at == 0``) or has not acted (-1) has every option.
    if config.reopening is Reopening.POKERKIT:
        # pokerkit's rule: no raise facing less than its full-raise amount to call;
        # none by a player who acted since its last full raise while the short
        # all-ins since then fall short of one.
        if min(p.stack, state.max_bet - p.bet) < state.full_raise or (
            state.short_sum and p.acted_at >= state.full_level
        ):
            return errors.BettingNotReopened
        return None
    full = max(state.full_raise, config.street_min_bet(state.street))
    if p.acted_at > 0 and state.max_bet - p.acted_at < full:
        return errors.BettingNotReopened
    return None


def _raise_bounds(state: HandState, i: int) -> tuple[int, int]:
    p = state.players[i]
    config = state.config
    everything = p.stack + p.bet
    min_to = min(state.max_bet + max(state.full_raise, config.street_min_bet(state.street)), everything)
    if config.variant is Variant.FIXED_LIMIT:
        return min_to, min_to
    if config.variant is Variant.POT_LIMIT:
        pot_to = 2 * state.max_bet - p.bet + state.pot_total
        return min_to, min(everything, max(min_to, pot_to))
    return min_to, everything


# ---------------------------------------------------------------- decide


def decide(state: HandState | None, command: Command, *, strength: Strength = default_strength) -> list[Event]:
    """The events ``command`` causes. Raises a ``PokerError`` (and changes
    nothing) when it is refused."""
    return step(state, command, strength=strength)[1]


def step(
    state: HandState | None, command: Command, *, strength: Strength = default_strength
) -> tuple[HandState, list[Event]]:
    """``decide`` and the state its events lead to (``decide`` has to apply
    them to find what follows, so this saves applying them twice)."""
    if type(command) is Act and state is not None and state.phase is _BETTING:  # the hot path
        action = _act(state, command)
        events: list[Event] = [action]
        state = _apply_action(state, action)
        if state.to_act < 0:
            state = _advance(state, events, strength)
        return state, events
    events = []
    if isinstance(command, StartHand):
        if state is not None:
            raise errors.HandAlreadyStarted()
        return _start(command)
    if state is None:
        raise errors.HandNotStarted()
    if state.phase is Phase.COMPLETE:
        raise errors.HandComplete()
    if isinstance(command, Act):
        state = _emit(state, events, _act(state, command))
    elif isinstance(command, DealHoleCards):
        events.extend(_deal_hole(state, command))
        state = _holes_dealt(state, events)
    elif isinstance(command, DealBoard):
        state = _emit(state, events, _deal_board(state, command))
    else:
        raise TypeError(f"unknown command {command!r}")
    return _advance(state, events, strength), events


def _emit(state: HandState, events: list[Event], event: Event) -> HandState:
    events.append(event)
    return apply(state, event)


def _start(command: StartHand) -> tuple[HandState, list[Event]]:
    config = command.config
    seats = sorted(command.seats)  # by seat number (the first field)
    n = len(seats)
    if not 2 <= n <= 10:
        raise errors.InvalidHandSetup("a hand needs 2 to 10 players", code="poker_player_count")
    if len({s.seat for s in seats}) != n or len({s.player_id for s in seats}) != n:
        raise errors.InvalidHandSetup("seats and players must be distinct", code="poker_duplicate_seat")
    if any(s.stack <= 0 for s in seats):
        raise errors.InvalidHandSetup("every player dealt in needs chips", code="poker_empty_stack")
    if command.button not in {s.seat for s in seats}:
        raise errors.InvalidHandSetup("the button must be on a player dealt in", code="poker_button_seat")
    # Position order: left of the button first, the button last.
    cut = next((k for k, s in enumerate(seats) if s.seat > command.button), 0)
    ordered = seats[cut:] + seats[:cut]
    rake = config.rake
    started = HandStarted(
        hand_id=command.hand_id,
        variant=config.variant.value,
        button=command.button,
        seats=tuple((s.seat, s.player_id, s.stack) for s in ordered),
        blinds_or_straddles=config.blinds_or_straddles,
        antes=config.antes,
        ante=config.ante,
        min_bet=config.min_bet,
        small_bet=config.small_bet,
        big_bet=config.big_bet,
        raise_cap=config.raise_cap,
        blind_is_bet=config.blind_is_bet,
        heads_up_uncapped=config.heads_up_uncapped,
        reopening=config.reopening.value,
        pot_split=config.pot_split.value,
        rake=None if rake is None else (rake.percent_bp, rake.minimum, rake.cap, rake.no_flop_no_drop),
    )
    events: list[Event] = [started]
    players = tuple([_tuple_new(Player, (s.seat, s.player_id, s.stack, 0, 0, 0, False, (), -1, False, 0))
                     for s in ordered])  # fmt: skip
    positions = {p.seat: i for i, p in enumerate(players)}
    state = _tuple_new(HandState, (
        command.hand_id, config, command.button, players, Phase.DEALING, 0, (), -1, 0, 0, 0, -1, (), 0, 0, 1, positions,
        0, 0,
    ))  # fmt: skip
    for position, amount in enumerate(_ante_posts(config, [p.stack for p in state.players])):
        if amount:
            p = state.players[position]
            state = _emit(state, events, AntePosted(p.seat, amount, amount == p.stack))
    kinds = ("small", "big")
    for index, blind in enumerate(config.blinds_or_straddles):
        poster = _position_of_conventional(index, n)
        if poster is None or blind <= 0:
            continue
        p = state.players[poster]
        amount = min(blind, p.stack)
        if amount:
            posted = BlindPosted(p.seat, kinds[index] if index < 2 else "straddle", amount, amount == p.stack)
            events.append(posted)
            state = _apply_blind(state, posted)
    return state, events


def antes_due(config: HandConfig, players: int) -> tuple[int, ...]:
    """The ante each position owes (position order)."""
    if config.antes:
        return tuple(_conventional(config.antes, position, players) for position in range(players))
    return (config.ante,) * players


def antes_are_contributions(config: HandConfig, players: int) -> bool:
    """Whether the antes count as each player's contribution to the pots
    (RULES.md, "Antes in side pots"): when every player owes the same ante
    (tables, tournaments). A big-blind or button ante (one player posting
    for the table, only in imported histories) is dead money in the main
    pot instead. pokerkit's ``ante_trimming_status`` true and false."""
    due = antes_due(config, players)
    return due[0] > 0 and len(set(due)) == 1


def _ante_posts(config: HandConfig, stacks: Sequence[int]) -> list[int]:
    """What each position posts: its ante, or all it has. When the antes are
    contributions, no one posts more than the next largest post: that part
    could never be matched, so it is not taken (pokerkit trims it back)."""
    due = antes_due(config, len(stacks))
    posts = [min(ante, stack) for ante, stack in zip(due, stacks, strict=True)]
    if antes_are_contributions(config, len(stacks)):
        second = sorted(posts, reverse=True)[1]
        posts = [min(post, second) for post in posts]
    return posts


def _conventional(values: tuple[int, ...], position: int, n: int) -> int:
    """The entry of a (small blind, big blind, ...) ordered list for a position."""
    index = position if n > 2 else 1 - position
    return values[index] if index < len(values) else 0


def _position_of_conventional(index: int, n: int) -> int | None:
    if n == 2:
        return (1, 0)[index] if index < 2 else None
    return index if index < n else None


_CARDS = frozenset(rank + suit for rank in RANKS for suit in SUITS)


def _check_card(card: str | None) -> None:
    if card is not None and card not in _CARDS:
        raise errors.InvalidCards(f"not a card: {card!r}", card=str(card))


def _known_cards(state: HandState) -> set[str]:
    seen = {card for p in state.players for card in p.hole if card is not None}
    seen.update(state.board)
    return seen


def _deal_hole(state: HandState, command: DealHoleCards) -> list[Event]:
    if state.phase is not Phase.DEALING:
        raise errors.WrongPhase("hole cards are dealt once, after the blinds")
    by_seat = command.cards
    if len(by_seat) != len(state.players):
        raise errors.InvalidCards("hole cards are needed for exactly the players dealt in")
    seen: set[str] = set()
    events: list[Event] = []
    for p in state.players:  # dealing starts left of the button
        cards = by_seat.get(p.seat)
        if cards is None:
            raise errors.InvalidCards("hole cards are needed for exactly the players dealt in", seat=p.seat)
        if len(cards) != 2:
            raise errors.InvalidCards("hold'em deals two hole cards", seat=p.seat)
        for card in cards:
            if card is not None:
                if card not in _CARDS:
                    raise errors.InvalidCards(f"not a card: {card!r}", card=str(card))
                if card in seen:
                    raise errors.InvalidCards(f"card {card} dealt twice", card=card)
                seen.add(card)
        events.append(HoleCardsDealt(p.seat, tuple(cards)))
    return events


def _deal_board(state: HandState, command: DealBoard) -> Event:
    if state.phase is not Phase.BOARD:
        raise errors.WrongPhase("the board is dealt when a betting round has ended")
    cards = tuple(command.cards)
    street = state.street + 1
    if len(cards) != (3 if street == 1 else 1):
        raise errors.InvalidCards(f"the {STREET_NAMES[street]} is {3 if street == 1 else 1} card(s)")
    seen = _known_cards(state)
    for card in cards:
        _check_card(card)
        if card in seen:
            raise errors.InvalidCards(f"card {card} is already out", card=card)
        seen.add(card)
    return BoardDealt(street, cards)


def _act(state: HandState, command: Act) -> ActionTaken:
    if state.phase is not _BETTING:
        raise errors.WrongPhase("no betting round is open")
    i = state.positions.get(command.seat, -1)
    if i != state.to_act:  # the player to act is never folded nor all-in
        if i < 0:
            raise errors.UnknownSeat(f"no player in seat {command.seat}", seat=command.seat)
        if state.players[i].folded:
            raise errors.PlayerFolded(seat=command.seat)
        if state.players[i].stack == 0:
            raise errors.PlayerAllIn(seat=command.seat)
        raise errors.NotYourTurn(seat=command.seat, to_act=state.acting_seat)
    p = state.players[i]
    action = command.action  # an Action (a str enum): compared as a string
    to_call = state.max_bet - p.bet
    if action == "check":
        if to_call > 0:
            raise errors.CannotCheck(to_call=to_call)
        return ActionTaken(p.seat, "check", 0, p.bet, False)
    if action == "call":
        if to_call <= 0:
            raise errors.NothingToCall()
        amount = min(to_call, p.stack)
        return ActionTaken(p.seat, "call", amount, p.bet + amount, amount == p.stack)
    action = Action(action)
    if action is Action.FOLD:
        return ActionTaken(p.seat, "fold", 0, p.bet, False)
    if action is Action.ALL_IN:
        to = p.stack + p.bet
        if to <= state.max_bet:
            return ActionTaken(p.seat, "all_in", p.stack, to, True)
        _check_raise(state, i, to)
        return ActionTaken(p.seat, "all_in", p.stack, to, True)
    if action is Action.BET and state.max_bet > 0:
        raise errors.BetNotAllowed()
    if action is Action.RAISE and state.max_bet == 0:
        raise errors.RaiseNotAllowed()
    if command.amount is None:
        raise errors.AmountRequired()
    to = int(command.amount)
    _check_raise(state, i, to)
    return ActionTaken(p.seat, action.value, to - p.bet, to, to == p.stack + p.bet)


def _check_raise(state: HandState, i: int, to: int) -> None:
    p = state.players[i]
    everything = p.stack + p.bet
    if to > everything:
        raise errors.OverStack(amount=to, available=everything)
    refusal = _raise_refusal(state, i)
    if refusal is not None:
        raise refusal()
    min_to, max_to = _raise_bounds(state, i)
    if state.config.variant is Variant.FIXED_LIMIT:
        if to != min_to:
            raise errors.NotFixedLimitSize(amount=to, required=min_to)
        return
    if to < min_to:
        raise errors.BelowMinimumBet(amount=to, minimum=min_to)
    if to > max_to:
        raise errors.OverPotLimit(amount=to, maximum=max_to)


def _advance(state: HandState, events: list[Event], strength: Strength) -> HandState:
    """Run what follows by itself: close finished betting rounds, settle."""
    while state.to_act < 0 and state.phase is _BETTING:
        state = _close_round(state, events)
        if state.phase is _SHOWDOWN:
            return _settle(state, events, strength)
    return state


def _close_round(state: HandState, events: list[Event]) -> HandState:
    top, high, second = 0, -1, 0
    for i, p in enumerate(state.players):
        if p.bet > high:
            top, high, second = i, p.bet, max(second, high)
        elif p.bet > second:
            second = p.bet
    if high > second:
        state = _emit(state, events, UncalledBetReturned(state.players[top].seat, high - second))
    event = BettingRoundEnded(state.street)
    events.append(event)
    return _apply_round_ended(state, event)


class Pot(NamedTuple):
    amount: int
    eligible: tuple[int, ...]  # positions


def compute_pots(players: Sequence[Player], *, dead_antes: bool = False) -> list[Pot]:
    """Main pot then side pots from what each player put in, antes included
    (a player wins from each opponent at most what they matched), or with
    ``dead_antes`` the antes in the main pot whoever posted them (a big-blind
    ante: ``antes_are_contributions``). Pots with the same eligible players
    merge."""
    contributions = [p.committed if dead_antes else p.committed + p.ante for p in players]
    amount = sum(p.ante for p in players) if dead_antes else 0
    previous = 0
    pots: list[Pot] = []
    for level in sorted(set(contributions)):
        amount += sum(level - previous for c in contributions if c >= level)
        eligible = tuple(i for i, p in enumerate(players) if not p.folded and contributions[i] >= level)
        while pots and pots[-1].eligible == eligible:
            amount += pots.pop().amount
        if amount:
            pots.append(Pot(amount, eligible))
        amount = 0
        previous = level
    return pots


def _settle(state: HandState, events: list[Event], strength: Strength) -> HandState:
    """Showdown, rake and pots. The events are what ``apply`` replays; the
    state returned is built in one go and equals applying them one by one
    (a test holds it to that)."""
    if strength is default_strength:
        strength = _evaluator()
    players = state.players
    alive = [i for i, p in enumerate(players) if not p.folded]
    pots = compute_pots(players, dead_antes=not antes_are_contributions(state.config, len(players)))
    strengths: dict[int, int] = {}
    shown: set[int] = set()
    first = len(events)
    if len(alive) > 1:
        board = state.board
        for i in alive:
            hole = players[i].hole
            if None not in hole:
                strengths[i] = strength((*hole, *board))  # type: ignore[arg-type]
        shown = _showdown_order(state, alive, pots, strengths)
        for i in alive:
            p = players[i]
            events.append(HandShown(p.seat, p.hole, strengths[i]) if i in shown else HandMucked(p.seat))
        contenders = shown
    else:
        contenders = set(alive)
    rule = state.config.rake
    natural = [pot.amount for pot in pots]
    rake_total = rule.amount(sum(natural), flop_seen=len(state.board) >= 3) if rule is not None else 0
    per_pot = allocate_rake(rake_total, natural) if rake_total else (0,) * len(pots)
    awards = [_Award(pot.amount, per_pot[k], pot.eligible, _pot_winners(pot, contenders, strengths))
              for k, pot in enumerate(pots)]  # fmt: skip
    if state.config.pot_split is PotSplit.POKERKIT and len(alive) > 1:
        awards = _merge_after_killing(awards)
    amounts = [award.amount for award in awards]
    if rule is not None:
        events.append(RakeTaken(rake_total, tuple(award.rake for award in awards)))
    won = [0] * len(players)
    split = 0
    for index, award in enumerate(awards):
        winners = award.winners
        share, odd = divmod(award.amount - award.rake, len(winners))
        # Odd chips to the first winner left of the button (positions start there).
        paid = []
        for k, w in enumerate(winners):
            chips = share + odd if k == 0 else share
            won[w] += chips
            paid.append((players[w].seat, chips))
        split += len(winners) > 1
        eligible = tuple(players[i].seat for i in award.eligible)
        events.append(PotAwarded(index, award.amount, award.rake, eligible, tuple(paid)))
    final = tuple([
        _tuple_new(Player, (
            p.seat, p.player_id, p.stack + won[i], p.bet, p.committed, p.ante, p.folded, p.hole, p.acted_at,
            p.shown or i in shown, p.won + won[i],
        ))
        for i, p in enumerate(players)
    ])  # fmt: skip
    events.append(HandEnded(tuple((p.seat, p.stack) for p in final), rake_total))
    return state._replace(
        players=final,
        phase=Phase.COMPLETE,
        to_act=-1,
        pots=(*state.pots, *amounts),
        rake=rake_total if rule is not None else state.rake,
        split_pots=state.split_pots + split,
        version=state.version + len(events) - first,
    )


class _Award(NamedTuple):
    amount: int
    rake: int
    eligible: tuple[int, ...]  # positions
    winners: tuple[int, ...]  # positions, in position order


def _pot_winners(pot: Pot, contenders: set[int], strengths: dict[int, int]) -> tuple[int, ...]:
    """The best hands among the pot's contenders (shown, or the only one
    left); all its eligible players when only unknown hands are left (an
    imported history)."""
    winners = [i for i in pot.eligible if i in contenders]
    if len(winners) > 1:
        best = max(strengths[i] for i in winners)
        winners = [i for i in winners if strengths[i] == best]
    return tuple(winners) if winners else pot.eligible


def _merge_after_killing(awards: list[_Award]) -> list[_Award]:
    """``PotSplit.POKERKIT``: pokerkit kills the hands that win no part of
    any pot, then lists the pots again with only the hands left: neighbouring
    pots left with the same players merge into one, split once. A pot's
    winners are the best of the hands left in it, so a merged pot's winners
    are each of its parts' (the same players). A pot without a hand left (its
    hands unknown, shared among its eligible players) keeps them."""
    live = {i for award in awards for i in award.winners}
    merged: list[_Award] = []
    for award in awards:
        eligible = tuple(i for i in award.eligible if i in live) or award.eligible
        if merged and merged[-1].eligible == eligible:
            last = merged.pop()
            award = _Award(last.amount + award.amount, last.rake + award.rake, eligible, last.winners)
        merged.append(award._replace(eligible=eligible))
    return merged


def _showdown_order(state: HandState, alive: list[int], pots: list[Pot], strengths: dict[int, int]) -> set[int]:
    """Who shows: all hands when someone is all-in; otherwise the river's
    last aggressor (or the first player left of the button) shows first and
    each later player shows only a hand that can still win or tie a pot they
    are in (the rest muck)."""
    if any(state.players[i].stack == 0 for i in alive):
        return {i for i in alive if i in strengths}
    n = len(state.players)
    start = state.last_aggressor if state.last_aggressor >= 0 else 0
    shown: set[int] = set()
    if len(pots) == 1:  # the usual case: show what beats or ties the best so far
        best = -1
        for k in range(start, start + n):
            i = k % n
            if i in strengths and strengths[i] >= best:
                best = strengths[i]
                shown.add(i)
        return shown
    for k in range(n):
        i = (start + k) % n
        if i not in strengths or state.players[i].folded:
            continue
        for pot in pots:
            if i not in pot.eligible:
                continue
            rivals = [strengths[j] for j in pot.eligible if j in shown]
            if not rivals or strengths[i] >= max(rivals):
                shown.add(i)
                break
    return shown


# ---------------------------------------------------------------- helpers


def replay(events: Iterable[Event]) -> list[HandState]:
    """The state after each event, in order (the "Replay" button)."""
    states: list[HandState] = []
    state: HandState | None = None
    for event in events:
        state = apply(state, event)
        states.append(state)
    return states


def fold_events(events: Iterable[Event]) -> HandState:
    state: HandState | None = None
    for event in events:
        state = apply(state, event)
    if state is None:
        raise errors.HandNotStarted()
    return state


def next_deal(state: HandState, deck: Sequence[str]) -> DealHoleCards | DealBoard | None:
    """The deal a dealer makes next from a shuffled ``deck``, as a real table
    does: one card at a time round the table from position 0, twice; then a
    burn card before the flop, the turn and the river."""
    n = len(state.players)
    if state.phase is Phase.DEALING:
        return DealHoleCards({p.seat: (deck[i], deck[n + i]) for i, p in enumerate(state.players)})
    if state.phase is Phase.BOARD:
        base = 2 * n
        if state.street == 0:
            return DealBoard(tuple(deck[base + 1 : base + 4]))
        if state.street == 1:
            return DealBoard((deck[base + 5],))
        return DealBoard((deck[base + 7],))
    return None


def deal_order(state: HandState, deck: Sequence[str]) -> list[DealtCard]:
    """Which deck position went to whom so far, as ``next_deal`` deals: hole
    cards (``seat:<n>``, slots 0 and 1) one at a time round the table from
    position 0, twice; then a burn card (``burn``, slots 0 to 2) before the
    flop, the turn and the river (``board``, slots 0 to 4). Dealt cards are the
    state's, what the hand showed; a burn card, which nobody saw, is the deck's."""
    n = len(state.players)
    order: list[DealtCard] = []
    if all(p.hole for p in state.players):
        for i, p in enumerate(state.players):
            for slot, card in enumerate(p.hole):
                assert card is not None, "a dealt hand knows its hole cards"
                order.append(DealtCard(slot * n + i, card, f"seat:{p.seat}", slot))
    position, shown = 2 * n, 0
    for burn, count in enumerate((3, 1, 1)):  # flop, turn, river
        if len(state.board) < shown + count:
            break
        order.append(DealtCard(position, deck[position], "burn", burn))
        order += [DealtCard(position + 1 + k, state.board[shown + k], "board", shown + k) for k in range(count)]
        position, shown = position + 1 + count, shown + count
    return sorted(order)


def run(
    state: HandState | None,
    commands: Iterable[Command],
    *,
    strength: Strength = default_strength,
    events: list[Event] | None = None,
) -> HandState:
    """Decide and apply each command in turn (a convenience for callers that
    hold the state in memory); the events are appended to ``events``."""
    for command in commands:
        state, new = step(state, command, strength=strength)
        if events is not None:
            events.extend(new)
    assert state is not None
    return state
