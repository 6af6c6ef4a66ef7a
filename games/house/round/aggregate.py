"""A house-banked round as a pure event-sourced aggregate (RULES.md, "Live house-banked tables").

No Django, no clock, no randomness: ``now`` (ISO text), the shuffled deck, new hold
ids and the wheel draw are inputs. Two aggregates share one event vocabulary:

- ``RoundState`` (stream ``round-{id}``, the dealer side): configuration in force,
  phase, deadline, cards, decision windows, pause, settlement summary.
- ``PlayerState`` (stream ``round-{id}-player-{pid}``): that player's chips,
  decisions and settlements, so thousands of players never contend on one
  stream version.

``decide_*`` functions validate a command and return the events (``Event``: type,
data, and ``stream`` = ``"round"`` or the player id); they raise a specific
``DomainError`` and return nothing on refusal. ``apply_round`` / ``apply_player``
fold events into state; replaying a stream gives the same state.

All cards of a round are dealt when betting closes (player hands face up, dealer
and board face down) and board/dealer cards are *revealed* street by street, so
the deck needs no storage between steps; redaction (``games.house.realtime.presenters``) never
shows a face-down card before its ``cards_revealed`` event.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, TypeVar

from casino.errors import DomainError
from games.cards.cards import Card, parse_card
from games.house.rules.bonus_spin import InvalidBonusSpinWager, WheelSegment, wager_units
from games.house.rules.definitions import (
    DecisionAfterCall,
    DecisionTaken,
    GameDefinition,
    InvalidCards,
    Play,
    RoundSettlement,
    WagerKind,
    WheelSpinRequired,
    bonus_spin_triggered,
    settle_round,
)
from games.house.rules.registry import game, pay_table

# Phases of a round (the table adds ``between`` and ``idle``).
BETTING = "betting"
CLOSED = "closed"
VOIDED = "voided"
PER_SEAT_MAX = (52 - 2 - 5) // 2  # seats the deck allows: 22

# Event types (catalogue: docs/events.md, "House-banked round").
OPENED = "house_round.opened"
BETTING_CLOSED = "house_round.betting_closed"
CARDS_DEALT = "house_round.cards_dealt"
WINDOW_OPENED = "house_round.decision_window_opened"
CARDS_REVEALED = "house_round.cards_revealed"
WHEEL_SPUN = "house_round.wheel_spun"
PROGRESSIVE_CONTRIBUTED = "house_round.progressive_contributed"
PROGRESSIVE_HIT = "house_round.progressive_hit"
SETTLED = "house_round.settled"
PAUSED = "house_round.paused"
RESUMED = "house_round.resumed"
VOIDED_EVENT = "house_round.voided"
ROUND_CLOSED = "house_round.closed"
BET_PLACED = "house_bet.placed"
BET_REMOVED = "house_bet.removed"
DECISION_MADE = "house_decision.made"
# Schema 1 only: one per wager before the player's ``house_player.settled``.
# Since schema 2 the wagers are inside ``house_player.settled``; kept so stored
# rounds still read (games.house.event_types, games.house.realtime.presenters.settled_wagers).
WAGER_SETTLED = "house_wager.settled"
PLAYER_SETTLED = "house_player.settled"
PLAYER_SETTLED_SCHEMA = 2
PLAYER_VOIDED = "house_player.voided"

ROUND_EVENT_TYPES = (
    OPENED,
    BETTING_CLOSED,
    CARDS_DEALT,
    WINDOW_OPENED,
    CARDS_REVEALED,
    WHEEL_SPUN,
    PROGRESSIVE_CONTRIBUTED,
    PROGRESSIVE_HIT,
    SETTLED,
    PAUSED,
    RESUMED,
    VOIDED_EVENT,
    ROUND_CLOSED,
)
PLAYER_EVENT_TYPES = (BET_PLACED, BET_REMOVED, DECISION_MADE, WAGER_SETTLED, PLAYER_SETTLED, PLAYER_VOIDED)


# --- errors -------------------------------------------------------------------------------------


class RoundError(DomainError):
    code = "round_error"
    http_status = 409


class WrongPhase(RoundError):
    """The command is not allowed in the round's current phase."""

    code = "wrong_phase"


class BettingClosed(RoundError):
    """Bets are accepted only while the betting window is open (server clock)."""

    code = "betting_closed"


class RoundPaused(RoundError):
    """The round is paused by the operator."""

    code = "round_paused"


class SpotNotOffered(RoundError):
    """The table offers no such betting spot."""

    code = "spot_not_offered"
    http_status = 400


class BelowMinimum(RoundError):
    """A spot's total must reach the table minimum for that spot."""

    code = "below_minimum"
    http_status = 400


class AnteRequired(RoundError):
    """Side bets need an Ante first."""

    code = "ante_required"
    http_status = 400


class InsufficientBalance(RoundError):
    """The player's balance does not cover the wager or decision."""

    code = "insufficient_balance"


class NothingToUndo(RoundError):
    code = "nothing_to_undo"


class NothingToRepeat(RoundError):
    code = "nothing_to_repeat"


class AlreadyDoubled(RoundError):
    """DOUBLE is allowed once per round."""

    code = "already_doubled"


class NotInRound(RoundError):
    """The player has no wagers in this round (a round in progress cannot be joined)."""

    code = "not_in_round"


class NoDecisionWindow(RoundError):
    """No decision window is open for this player now."""

    code = "no_decision_window"


class AlreadyDecided(RoundError):
    code = "already_decided"


class DecisionNotCovered(RoundError):
    """A decision whose amount the balance does not cover is not offered."""

    code = "decision_not_covered"


class TableFull(RoundError):
    """Per-seat mode: the deck limits the seats."""

    code = "table_full"


class InvalidAmount(RoundError):
    code = "invalid_chip"
    http_status = 400


# --- data ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    """An event to append: ``stream`` is ``"round"`` or a player id."""

    type: str
    data: Mapping[str, Any]
    stream: str | int = "round"


@dataclass(frozen=True)
class RoundConfig:
    """What a round opens with, recorded in ``house_round.opened``."""

    round_id: str
    table_id: int
    table_code: str
    game_number: str
    game: str
    hand_mode: str
    currency: str
    currency_unit: int
    limits: Mapping[str, Mapping[str, int]]
    pay_tables: Mapping[str, int]
    wheel: Mapping[str, Any]
    progressives: Mapping[str, Any]
    betting_seconds: int
    warning_seconds: int
    decision_seconds: int
    deal_pause_seconds: int
    between_rounds_seconds: int
    max_seats: int = PER_SEAT_MAX
    config_version: int = 0  # the table's configuration version (games.models.TableConfigVersion)

    @property
    def definition(self) -> GameDefinition:
        return game(self.game)

    def as_event_data(self) -> dict[str, Any]:
        definition = self.definition
        tables = {
            wager: {"number": number, "table": pay_table(self.game, wager, number).as_dict()}
            for wager, number in sorted(self.pay_tables.items())
        }
        return {
            "round_id": self.round_id,
            "table_id": self.table_id,
            "table_code": self.table_code,
            "game_number": self.game_number,
            "game": self.game,
            "rules_version": definition.rules_version,
            "rules": definition.as_dict(),
            "hand_mode": self.hand_mode,
            "currency": self.currency,
            "currency_unit": self.currency_unit,
            "limits": {k: dict(v) for k, v in self.limits.items()},
            "pay_tables": tables,
            "wheel": dict(self.wheel),
            "progressives": dict(self.progressives),
            "durations": {
                "betting": self.betting_seconds,
                "warning": self.warning_seconds,
                "decision": self.decision_seconds,
                "deal_pause": self.deal_pause_seconds,
                "between_rounds": self.between_rounds_seconds,
            },
            "max_seats": self.max_seats,
            "config_version": self.config_version,
        }

    @staticmethod
    def from_event_data(data: Mapping[str, Any]) -> RoundConfig:
        durations = data["durations"]
        return RoundConfig(
            round_id=data["round_id"],
            table_id=data["table_id"],
            table_code=data["table_code"],
            game_number=data["game_number"],
            game=data["game"],
            hand_mode=data["hand_mode"],
            currency=data["currency"],
            currency_unit=data["currency_unit"],
            limits=data["limits"],
            pay_tables={w: t["number"] for w, t in data["pay_tables"].items()},
            wheel=data["wheel"],
            progressives=data["progressives"],
            betting_seconds=durations["betting"],
            warning_seconds=durations["warning"],
            decision_seconds=durations["decision"],
            deal_pause_seconds=durations["deal_pause"],
            between_rounds_seconds=durations["between_rounds"],
            max_seats=data.get("max_seats", PER_SEAT_MAX),
            config_version=data.get("config_version", 0),
        )


@dataclass(frozen=True)
class Chip:
    """One placement: ``amount`` on ``spot`` plus ``automatic`` (e.g. ante_plus)
    equal amounts, all held together under ``hold_id``."""

    spot: str
    amount: int
    hold_id: str
    automatic: Mapping[str, int] = field(default_factory=dict)

    @property
    def held(self) -> int:
        return self.amount + sum(self.automatic.values())


@dataclass(frozen=True)
class PlayerState:
    player_id: int
    chips: tuple[Chip, ...] = ()
    doubled: bool = False
    decisions: tuple[DecisionTaken, ...] = ()
    call_amount: int = 0
    call_hold_id: str | None = None
    folded: bool = False
    settled: bool = False
    voided: bool = False
    returned: int = 0
    version: int = 0

    def totals(self) -> dict[str, int]:
        """Per-wager stake placed so far (automatic wagers included)."""
        totals: dict[str, int] = {}
        for chip in self.chips:
            totals[chip.spot] = totals.get(chip.spot, 0) + chip.amount
            for name, amount in chip.automatic.items():
                totals[name] = totals.get(name, 0) + amount
        return totals

    @property
    def staked(self) -> int:
        return sum(c.held for c in self.chips) + self.call_amount

    @property
    def done_deciding(self) -> bool:
        return self.folded or self.call_amount > 0

    def decided(self, street: str) -> bool:
        return any(d.street == street for d in self.decisions)

    def placed_stakes(self) -> dict[str, int]:
        """Stakes as ``settle_round`` takes them (automatic ones derived)."""
        return {k: v for k, v in self.totals().items() if k in {c.spot for c in self.chips}}


@dataclass(frozen=True)
class RoundState:
    config: RoundConfig | None = None
    phase: str = ""
    phase_seq: int = 0
    opened_at: str = ""
    deadline: str | None = None
    participants: tuple[int, ...] = ()
    seats: Mapping[int, int] = field(default_factory=dict)
    hands: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # "shared" or "player:{id}"
    dealer: tuple[str, ...] = ()
    board: tuple[str, ...] = ()
    board_revealed: int = 0
    dealer_revealed: bool = False
    paused: bool = False
    paused_remaining_ms: int | None = None
    wheel_spin: Mapping[str, Any] | None = None
    settled: bool = False
    closed: bool = False
    voided: bool = False
    version: int = 0

    def hand_of(self, player_id: int) -> tuple[str, ...]:
        assert self.config is not None
        key = "shared" if self.config.hand_mode == "shared" else f"player:{player_id}"
        return self.hands[key]


# --- apply --------------------------------------------------------------------------------------


def apply_round(state: RoundState, event: Event | Any) -> RoundState:
    """Fold one round-stream event (``Event`` or a ledger ``RecordedEvent``)."""
    kind, data = event.type, event.data
    state = replace(state, version=state.version + 1)
    if kind == OPENED:
        return replace(
            state,
            config=RoundConfig.from_event_data(data),
            phase=BETTING,
            phase_seq=state.phase_seq + 1,
            opened_at=data["opened_at"],
            deadline=data["betting_deadline"],
        )
    if kind == BETTING_CLOSED:
        seats = {int(k): v for k, v in data.get("seats", {}).items() if v is not None}
        return replace(state, participants=tuple(data["participants"]), seats=seats, deadline=None)
    if kind == CARDS_DEALT:
        hands = dict(state.hands)
        dealer, board = list(state.dealer), list(state.board)
        for card in data["cards"]:
            to = card["to"]
            if to == "dealer":
                dealer.append(card["card"])
            elif to == "board":
                board.append(card["card"])
            else:
                hands[to] = (*hands.get(to, ()), card["card"])
        return replace(state, hands=hands, dealer=tuple(dealer), board=tuple(board))
    if kind == WINDOW_OPENED:
        return replace(state, phase=data["street"], phase_seq=state.phase_seq + 1, deadline=data["deadline"])
    if kind == CARDS_REVEALED:
        board_revealed = state.board_revealed + sum(1 for c in data["cards"] if c["to"] == "board")
        dealer_revealed = state.dealer_revealed or any(c["to"] == "dealer" for c in data["cards"])
        return replace(state, board_revealed=board_revealed, dealer_revealed=dealer_revealed)
    if kind == WHEEL_SPUN:
        return replace(state, wheel_spin=dict(data))
    if kind == SETTLED:
        return replace(state, settled=True)
    if kind == PAUSED:
        return replace(state, paused=True, paused_remaining_ms=data["remaining_ms"], deadline=None)
    if kind == RESUMED:
        return replace(state, paused=False, paused_remaining_ms=None, deadline=data["deadline"])
    if kind == VOIDED_EVENT:
        return replace(state, voided=True, phase=VOIDED, phase_seq=state.phase_seq + 1, deadline=None, paused=False)
    if kind == ROUND_CLOSED:
        phase = VOIDED if state.voided else CLOSED
        return replace(state, closed=True, phase=phase, phase_seq=state.phase_seq + 1, deadline=None)
    return state


S = TypeVar("S")


def _evolve(state: S, changes: dict[str, Any]) -> S:
    """``dataclasses.replace`` for these frozen states without re-running
    ``__init__`` (they have no ``__post_init__`` and no slots): a showdown folds
    tens of thousands of player events, and ``replace`` was the costliest step."""
    new = object.__new__(type(state))
    new.__dict__.update(state.__dict__)
    new.__dict__.update(changes)
    return new


def apply_player(state: PlayerState, event: Event | Any) -> PlayerState:
    """Fold one player-stream event."""
    kind, data = event.type, event.data
    changes: dict[str, Any] = {"version": state.version + 1}
    if kind == BET_PLACED:
        chip = Chip(data["spot"], data["amount"], data["hold_id"], dict(data.get("automatic", {})))
        changes["chips"] = (*state.chips, chip)
        changes["doubled"] = state.doubled or data.get("source") == "double"
    elif kind == BET_REMOVED:
        removed = set(data["hold_ids"])
        changes["chips"] = tuple(c for c in state.chips if c.hold_id not in removed)
    elif kind == DECISION_MADE:
        changes["decisions"] = (*state.decisions, DecisionTaken(data["street"], data["option"], data["auto"]))
        changes["folded"] = state.folded or data["folds"]
        if data["amount"]:
            changes["call_amount"] = data["amount"]
            changes["call_hold_id"] = data["hold_id"]
    elif kind == PLAYER_SETTLED:
        changes["settled"] = True
        changes["returned"] = data["returned"]
    elif kind == PLAYER_VOIDED:
        changes["voided"] = True
        changes["returned"] = data["returned"]
    return _evolve(state, changes)


def replay_round(events: Sequence[Any]) -> RoundState:
    state = RoundState()
    for event in events:
        state = apply_round(state, event)
    return state


def replay_player(player_id: int, events: Sequence[Any]) -> PlayerState:
    state = PlayerState(player_id)
    for event in events:
        state = apply_player(state, event)
    return state


# --- time helpers (ISO-8601 text in, so the domain stays clock-free) ----------------------------


def _ms_between(start: str, end: str) -> int:
    return int((datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds() * 1000)


def _plus(moment: str, seconds: float) -> str:
    return (datetime.fromisoformat(moment) + timedelta(seconds=seconds)).isoformat()


def _before(now: str, deadline: str | None) -> bool:
    return deadline is not None and _ms_between(now, deadline) > 0


# --- dealer-side decisions ----------------------------------------------------------------------


def decide_open(config: RoundConfig, *, now: str) -> list[Event]:
    """Open a round: betting window from ``now`` for ``betting_seconds``."""
    data = config.as_event_data()
    data |= {
        "opened_at": now,
        "betting_deadline": _plus(now, config.betting_seconds),
        "warning_at": _plus(now, config.betting_seconds - config.warning_seconds),
    }
    return [Event(OPENED, data)]


def decide_close_betting(
    state: RoundState,
    players: Mapping[int, PlayerState],
    *,
    now: str,
    deck: Sequence[Card],
    seats: Mapping[int, int | None] | None = None,
) -> list[Event]:
    """Betting window over: record the participants (players with bets), deal every
    card of the round, and open the first decision window (or close an empty round)."""
    _require(state, BETTING)
    config = _config(state)
    participants = sorted(pid for pid, p in players.items() if p.chips)
    seat_numbers = {str(pid): (seats or {}).get(pid) for pid in participants}
    events = [Event(BETTING_CLOSED, {"at": now, "participants": participants, "seats": seat_numbers})]
    if not participants:
        return [*events, Event(ROUND_CLOSED, {"at": now, "reason": "no_bets"})]
    if config.hand_mode == "per_seat" and len(participants) > PER_SEAT_MAX:
        raise TableFull(participants=len(participants))
    if len({c.index for c in deck}) != len(deck):
        raise InvalidCards("the deck has duplicate cards")
    draw = iter(deck)
    dealt: list[dict[str, Any]] = []
    owners = ["shared"] if config.hand_mode == "shared" else [f"player:{pid}" for pid in participants]
    for owner in owners:
        for position in range(2):
            dealt.append({"to": owner, "position": position, "card": str(next(draw)), "face_up": True})
    for position in range(2):
        dealt.append({"to": "dealer", "position": position, "card": str(next(draw)), "face_up": False})
    for position in range(5):
        dealt.append({"to": "board", "position": position, "card": str(next(draw)), "face_up": False})
    events.append(Event(CARDS_DEALT, {"cards": dealt}))
    interim = state
    for event in events:
        interim = apply_round(interim, event)
    return events + _next_street(interim, players, now=now, after=None, pause=config.deal_pause_seconds)


# Board cards visible when a street's decision is taken (all three games).
STREET_REVEALS = {"preflop": 0, "flop": 3, "river": 5}


def _next_street(
    state: RoundState, players: Mapping[int, PlayerState], *, now: str, after: str | None, pause: int
) -> list[Event]:
    """Open the next decision window someone still needs, revealing its board
    cards; with none left, reveal everything (showdown follows in ``decide_showdown``)."""
    config = _config(state)
    definition = config.definition
    streets = [p.street for p in definition.decision_points]
    start = 0 if after is None else streets.index(after) + 1
    active = [pid for pid in state.participants if not players[pid].done_deciding]
    events: list[Event] = []
    revealed = state.board_revealed
    for street in streets[start:]:
        if not active:
            break
        show = STREET_REVEALS[street]
        if show > revealed:
            events.append(_reveal_board(state, revealed, show, street))
            revealed = show
        deadline = _plus(now, pause + config.decision_seconds)
        events.append(Event(WINDOW_OPENED, {"street": street, "opens_at": now, "deadline": deadline}))
        return events
    if revealed < 5:
        events.append(_reveal_board(state, revealed, 5, "showdown"))
    return events


def _reveal_board(state: RoundState, start: int, end: int, street: str) -> Event:
    cards = [{"to": "board", "position": i, "card": state.board[i]} for i in range(start, end)]
    return Event(CARDS_REVEALED, {"street": street, "cards": cards})


def auto_decisions(state: RoundState, players: Mapping[int, PlayerState], *, now: str) -> list[Event]:
    """The timeout default for every participant who has not decided on the open street."""
    config = _config(state)
    point = config.definition.decision_point(state.phase)
    option = point.option(point.timeout_default)
    return [
        Event(
            DECISION_MADE,
            {
                "street": point.street,
                "option": option.name,
                "auto": True,
                "amount": 0,
                "folds": option.folds,
                "hold_id": None,
                "at": now,
            },
            stream=pid,
        )
        for pid in state.participants
        if not players[pid].done_deciding and not players[pid].decided(point.street)
    ]


def decide_advance(state: RoundState, players: Mapping[int, PlayerState], *, now: str) -> list[Event]:
    """The open decision window is over (deadline passed, or everyone decided):
    timeout defaults for the rest, then the next window or the showdown reveal."""
    if state.closed or state.voided:
        raise WrongPhase(phase=state.phase)
    if state.paused:
        raise RoundPaused()
    config = _config(state)
    if state.phase not in {p.street for p in config.definition.decision_points}:
        raise WrongPhase(phase=state.phase)
    events = auto_decisions(state, players, now=now)
    after = dict(players)
    for event in events:
        pid = int(event.stream)
        after[pid] = apply_player(after[pid], event)
    return events + _next_street(state, after, now=now, after=state.phase, pause=0)


def needs_showdown(state: RoundState, players: Mapping[int, PlayerState]) -> bool:
    """Every board card revealed and no decision window still waiting for anyone: settle next."""
    if not state.participants or state.board_revealed < 5 or state.settled or state.voided or state.paused:
        return False
    return all_decided(state, players)


@dataclass(frozen=True)
class Showdown:
    events: list[Event]
    settlements: Mapping[int, RoundSettlement]
    contributions: Mapping[str, int]  # pool -> amount moved from the house this round
    hits: Mapping[str, Mapping[int, int]]  # pool -> player -> share
    resets: Mapping[str, int]  # pool -> reset amount added after a hit


def progressive_contributions(config: RoundConfig, players: Mapping[int, PlayerState]) -> dict[str, int]:
    """Per pool: floor(sum of STAX stakes x rate in basis points / 10 000)."""
    rates = config.progressives.get("contribution_bp", {})
    wager = config.definition.progressive_wager
    stax_total = sum(players[pid].totals().get(wager, 0) for pid in players) if wager else 0
    result = {}
    for pool in config.definition.progressive_pools:
        amount = stax_total * int(rates.get(pool, 0)) // 10_000
        if amount:
            result[pool] = amount
    return result


def decide_showdown(
    state: RoundState,
    players: Mapping[int, PlayerState],
    *,
    now: str,
    pool_balances: Mapping[str, int],
    wheel_segment: WheelSegment | None,
) -> Showdown:
    """Reveal the dealer, settle every participant's wagers, contribute to and pay
    the STAX pools. ``pool_balances`` are the pools before this round's
    contributions; ``wheel_segment`` the secure draw when the board triggers
    Bonus Spin Xtreme (one spin per round: the board is common to everyone)."""
    config = _config(state)
    if state.settled or state.voided or state.board_revealed < 5:
        raise WrongPhase(phase=state.phase)
    definition = config.definition
    dealer = [parse_card(c) for c in state.dealer]
    board = [parse_card(c) for c in state.board]
    events: list[Event] = [
        Event(
            CARDS_REVEALED,
            {
                "street": "showdown",
                "cards": [{"to": "dealer", "position": i, "card": c} for i, c in enumerate(state.dealer)],
            },
        )
    ]
    any_spin = any(players[pid].totals().get("bonus_spin") for pid in state.participants)
    if any_spin and bonus_spin_triggered(board):
        if wheel_segment is None:
            raise WheelSpinRequired()
        wheel = config.wheel
        events.append(
            Event(
                WHEEL_SPUN,
                {
                    "wheel": wheel.get("name", ""),
                    "version": wheel.get("version", ""),
                    "label": wheel_segment.label,
                    "multiple": wheel_segment.multiple,
                    "weight": wheel_segment.weight,
                },
            )
        )
    else:
        wheel_segment = None
    contributions = progressive_contributions(config, {p: players[p] for p in state.participants})
    if contributions:
        events.append(Event(PROGRESSIVE_CONTRIBUTED, {"pools": contributions}))
    tables = {w: pay_table(config.game, w, n) for w, n in config.pay_tables.items()}
    # First pass finds the progressive hits, so each pool can be shared out.
    provisional: dict[int, RoundSettlement] = {}
    memo: dict[Any, RoundSettlement] = {}
    for pid in state.participants:
        provisional[pid] = _settle(
            definition, tables, state, players[pid], dealer, board, {}, wheel_segment, config, memo
        )
    hitters: dict[str, list[int]] = {}
    for pid, settlement in provisional.items():
        for result in settlement.wagers:
            if result.progressive:
                hitters.setdefault(result.progressive, []).append(pid)
    hits: dict[str, dict[int, int]] = {}
    resets: dict[str, int] = {}
    reset_amounts = config.progressives.get("reset", {})
    for pool, pids in sorted(hitters.items()):
        balance = pool_balances.get(pool, 0) + contributions.get(pool, 0)
        share, remainder = divmod(balance, len(pids))
        hits[pool] = dict.fromkeys(pids, share)
        resets[pool] = int(reset_amounts.get(pool, 0))
        events.append(
            Event(
                PROGRESSIVE_HIT,
                {
                    "pool": pool,
                    "pool_balance": balance,
                    "hits": [{"player_id": pid, "share": share} for pid in pids],
                    "remainder_kept": remainder,
                    "reset_added": resets[pool],
                },
            )
        )
    settlements: dict[int, RoundSettlement] = {}
    settled_data: dict[int, dict[str, Any]] = {}
    for pid in state.participants:
        awards = {pool: hits[pool][pid] for pool in hits if pid in hits[pool]}
        settlement = (
            _settle(definition, tables, state, players[pid], dealer, board, awards, wheel_segment, config, memo)
            if awards
            else provisional[pid]
        )
        settlements[pid] = settlement
        # Players who share cards, stakes and decisions share one settlement
        # object (the memo above), so their events share one data mapping, built
        # once (event data is never changed once made; the ledger then encodes
        # it once too).
        data = settled_data.get(id(settlement))
        if data is None:
            data = settled_data[id(settlement)] = {**_player_settled_data(settlement), "at": now}
        events.append(Event(PLAYER_SETTLED, data, stream=pid))
    first = next(iter(settlements.values()))
    events.append(
        Event(
            SETTLED,
            {
                "dealer": {**_hand(first.dealer), "qualifies": first.dealer_qualifies},
                "board": list(state.board),
                "players": len(settlements),
                "staked": sum(s.staked for s in settlements.values()),
                "returned": sum(s.returned for s in settlements.values()),
                "at": now,
            },
        )
    )
    events.append(Event(ROUND_CLOSED, {"at": now, "reason": "settled"}))
    return Showdown(events, settlements, contributions, hits, resets)


def _player_settled_data(settlement: RoundSettlement) -> dict[str, Any]:
    """``house_player.settled`` (schema 2) without its time: the player's result
    with every wager's settlement inside (schema 1 had one ``house_wager.settled``
    event per wager before it; see ``games.house.event_types``)."""
    return {
        "result": settlement.result,
        "staked": settlement.staked,
        "returned": settlement.returned,
        "net": settlement.net,
        "player": _hand(settlement.player),
        "wagers": [
            {
                "wager": result.wager,
                "stake": result.stake,
                "outcome": result.outcome,
                "returned": result.returned,
                "rounding_kept": str(result.rounding_kept),
                "hand": result.hand,
                "progressive": result.progressive,
                "wheel": result.wheel,
            }
            for result in settlement.wagers
        ],
    }


def _hand(value: Any) -> dict[str, Any]:
    return {"category": value.category.value, "best_five": [str(c) for c in value.best_five]}


def _settle(
    definition: GameDefinition,
    tables: Mapping[str, Any],
    state: RoundState,
    player: PlayerState,
    dealer: list[Card],
    board: list[Card],
    awards: Mapping[str, int],
    wheel_segment: WheelSegment | None,
    config: RoundConfig,
    memo: dict[Any, RoundSettlement] | None = None,
) -> RoundSettlement:
    cards = state.hand_of(player.player_id)
    multiplier = player.call_amount // player.totals()["ante"] if player.call_amount else 0
    stakes = player.placed_stakes()
    # Settlement is a pure function of these: in shared-hand mode thousands of
    # players share the cards and most share their stakes and decisions, so
    # each distinct combination is evaluated once per showdown.
    key = (cards, tuple(sorted(stakes.items())), player.decisions, multiplier, player.folded,
           tuple(sorted(awards.items())))  # fmt: skip
    if memo is not None and key in memo:
        return memo[key]
    hand = [parse_card(c) for c in cards]
    play = Play(player.decisions, multiplier, player.folded)
    settlement = settle_round(
        definition,
        tables=tables,
        player=hand,
        dealer=dealer,
        board=board,
        stakes=stakes,
        decisions=play,
        progressive_awards=awards,
        wheel_spin=wheel_segment,
        currency_unit=config.currency_unit,
    )
    if memo is not None:
        memo[key] = settlement
    return settlement


def decide_pause(state: RoundState, *, actor: str, reason: str, now: str) -> list[Event]:
    if state.closed or state.voided or state.settled:
        raise WrongPhase(phase=state.phase)
    if state.paused:
        raise RoundPaused()
    remaining = max(0, _ms_between(now, state.deadline)) if state.deadline else 0
    return [
        Event(PAUSED, {"actor": actor, "reason": reason, "at": now, "phase": state.phase, "remaining_ms": remaining})
    ]


def decide_resume(state: RoundState, *, actor: str, now: str) -> list[Event]:
    if not state.paused or state.closed or state.voided:
        raise WrongPhase(phase=state.phase, paused=state.paused)
    deadline = _plus(now, (state.paused_remaining_ms or 0) / 1000)
    return [Event(RESUMED, {"actor": actor, "at": now, "deadline": deadline})]


def decide_void(
    state: RoundState, players: Mapping[int, PlayerState], *, actor: str, reason: str, now: str, automatic: bool
) -> list[Event]:
    """Void: every wager of the round (calls/plays included) goes back, nothing is paid."""
    if state.closed or state.voided or state.settled:
        raise WrongPhase(phase=state.phase)
    events = [Event(VOIDED_EVENT, {"actor": actor, "reason": reason, "automatic": automatic, "at": now})]
    for pid, player in sorted(players.items()):
        if player.staked:
            events.append(Event(PLAYER_VOIDED, {"returned": player.staked, "reason": reason, "at": now}, stream=pid))
    events.append(Event(ROUND_CLOSED, {"at": now, "reason": "voided"}))
    return events


# --- player-side decisions ----------------------------------------------------------------------


@dataclass(frozen=True)
class BetOutcome:
    events: list[Event]
    capped: bool = False
    doubled: tuple[str, ...] = ()


def _betting_open(state: RoundState, now: str) -> RoundConfig:
    config = _config(state)
    if state.paused:
        raise RoundPaused()
    if state.phase != BETTING or not _before(now, state.deadline):
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
) -> tuple[Event | None, bool]:
    """One chip on ``spot`` (capped at the spot maximum). Returns (event or None, capped)."""
    definition = config.definition
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise InvalidAmount(amount=amount)
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
    data = {"spot": spot, "amount": amount, "automatic": automatic, "hold_id": hold_id, "source": source}
    data["capped"] = capped
    return Event(BET_PLACED, data), capped


def _held(event: Event) -> int:
    return int(event.data["amount"]) + sum(event.data["automatic"].values())


def decide_place_chip(
    state: RoundState, player: PlayerState, *, spot: str, amount: int, balance: int, hold_id: str, now: str
) -> BetOutcome:
    config = _betting_open(state, now)
    event, capped = _chip(config, player.totals(), spot, amount, hold_id, "chip")
    if event is None:
        return BetOutcome([], capped=True)
    if _held(event) > balance:
        raise InsufficientBalance(needed=_held(event), balance=balance)
    return BetOutcome([Event(event.type, event.data, player.player_id)], capped=capped)


def decide_undo(state: RoundState, player: PlayerState, *, now: str) -> BetOutcome:
    _betting_open(state, now)
    if not player.chips:
        raise NothingToUndo()
    last = player.chips[-1]
    data = {"hold_ids": [last.hold_id], "spot": last.spot, "amount": last.amount, "reason": "undo"}
    return BetOutcome([Event(BET_REMOVED, data, player.player_id)])


def decide_clear(state: RoundState, player: PlayerState, *, now: str) -> BetOutcome:
    _betting_open(state, now)
    if not player.chips:
        raise NothingToUndo()
    data = {"hold_ids": [c.hold_id for c in player.chips], "totals": player.totals(), "reason": "clear"}
    return BetOutcome([Event(BET_REMOVED, data, player.player_id)])


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
    Refused whole when the balance does not cover them all."""
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
        needed += _held(event)
        events.append(Event(event.type, event.data, player.player_id))
        totals[spot] = totals.get(spot, 0) + event.data["amount"]
    if needed > balance:
        raise InsufficientBalance(needed=needed, balance=balance)
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
    left = balance
    ids = iter(hold_ids)
    for spot in order:
        try:
            event, capped = _chip(config, totals, spot, totals[spot], next(ids), "double")
        except InvalidBonusSpinWager:
            continue
        capped_any |= capped
        if event is None:
            continue
        if _held(event) > left:
            break
        left -= _held(event)
        events.append(Event(event.type, event.data, player.player_id))
        doubled.append(spot)
    if not events:
        raise InsufficientBalance(needed=totals[order[0]], balance=balance)
    return BetOutcome(events, capped=capped_any, doubled=tuple(doubled))


def offered_options(state: RoundState, player: PlayerState, *, balance: int) -> list[str]:
    """The options this player may take now (those the balance covers)."""
    config = _config(state)
    if state.paused or player.player_id not in state.participants or player.done_deciding:
        return []
    try:
        point = config.definition.decision_point(state.phase)
    except DomainError:
        return []
    if player.decided(point.street):
        return []
    ante = player.totals().get("ante", 0)
    return [o.name for o in point.options if o.multiplier * ante <= balance]


def decide_decision(
    state: RoundState, player: PlayerState, *, option: str, balance: int, hold_id: str, now: str
) -> list[Event]:
    config = _config(state)
    if state.paused:
        raise RoundPaused()
    streets = {p.street for p in config.definition.decision_points}
    if state.phase not in streets or not _before(now, state.deadline):
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
    data = {
        "street": point.street,
        "option": chosen.name,
        "auto": False,
        "amount": amount,
        "folds": chosen.folds,
        "hold_id": hold_id if amount else None,
        "at": now,
    }
    return [Event(DECISION_MADE, data, player.player_id)]


def all_decided(state: RoundState, players: Mapping[int, PlayerState]) -> bool:
    """Every participant has decided on the open street (or is done): advance early."""
    return all(players[pid].done_deciding or players[pid].decided(state.phase) for pid in state.participants)


def _require(state: RoundState, phase: str) -> None:
    if state.paused:
        raise RoundPaused()
    if state.phase != phase or state.closed:
        raise WrongPhase(phase=state.phase, expected=phase)


def _config(state: RoundState) -> RoundConfig:
    if state.config is None:
        raise WrongPhase("round not opened", phase="")
    return state.config
