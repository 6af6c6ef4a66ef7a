"""The round's state and its folds: the configuration in force, each player's
chips and decisions, and ``apply_round`` / ``apply_player`` (replaying a stream
gives the same state). Pure: no Django, no clock (times are ISO-8601 text).

Two aggregates share one event vocabulary (``games.house.round.events``):

- ``RoundState`` (stream ``round-{id}``, the dealer side): configuration in force,
  phase, deadline, cards, decision windows, pause, settlement summary.
- ``PlayerState`` (stream ``round-{id}-player-{pid}``): that player's chips,
  decisions and settlements, so thousands of players never contend on one
  stream version.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, TypeVar

from games.house.round.errors import WrongPhase
from games.house.round.events import (
    BET_PLACED,
    BET_REMOVED,
    BETTING_CLOSED,
    CARDS_DEALT,
    CARDS_REVEALED,
    DECISION_MADE,
    OPENED,
    PAUSED,
    PLAYER_DECLINED,
    PLAYER_SETTLED,
    PLAYER_VOIDED,
    RESUMED,
    ROUND_CLOSED,
    SETTLED,
    SHUFFLED,
    VOIDED_EVENT,
    WHEEL_SPUN,
    WINDOW_OPENED,
    Event,
    RoundOpened,
)
from games.house.rules.definitions import DecisionTaken, GameDefinition
from games.house.rules.registry import game, pay_table

# Phases of a round (the table adds ``between`` and ``idle``).
BETTING = "betting"
CLOSED = "closed"
VOIDED = "voided"
PER_SEAT_MAX = (52 - 2 - 5) // 2  # seats the deck allows: 22


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
    # The chip denominations (ascending, minor units); (): any positive whole amount
    # (a round opened before chip sets, or a table row without one).
    chips: tuple[int, ...] = ()
    # Offered side bets every player must make (seed 002:13); checked when betting closes.
    mandatory_wagers: tuple[str, ...] = ()

    @property
    def definition(self) -> GameDefinition:
        return game(self.game)

    def opened(self, *, opened_at: str, betting_deadline: str, warning_at: str) -> RoundOpened:
        """The ``house_round.opened`` event recording this configuration (rules
        and pay tables in full, as in force now)."""
        definition = self.definition
        tables = {
            wager: {"number": number, "table": pay_table(self.game, wager, number).as_dict()}
            for wager, number in sorted(self.pay_tables.items())
        }
        return RoundOpened(
            round_id=self.round_id,
            table_id=self.table_id,
            table_code=self.table_code,
            game_number=self.game_number,
            game=self.game,
            rules_version=definition.rules_version,
            rules=definition.as_dict(),
            hand_mode=self.hand_mode,
            currency=self.currency,
            currency_unit=self.currency_unit,
            limits=self.limits,
            pay_tables=tables,
            wheel=self.wheel,
            progressives=self.progressives,
            durations={
                "betting": self.betting_seconds,
                "warning": self.warning_seconds,
                "decision": self.decision_seconds,
                "deal_pause": self.deal_pause_seconds,
                "between_rounds": self.between_rounds_seconds,
            },
            max_seats=self.max_seats,
            config_version=self.config_version,
            opened_at=opened_at,
            betting_deadline=betting_deadline,
            warning_at=warning_at,
            chips=self.chips,
            mandatory_wagers=self.mandatory_wagers,
        )

    @staticmethod
    def from_event_data(data: Mapping[str, Any]) -> RoundConfig:
        """The configuration from ``house_round.opened``'s stored data (read
        directly: this is the fold)."""
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
            chips=tuple(data.get("chips") or ()),
            mandatory_wagers=tuple(data.get("mandatory_wagers") or ()),
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


def _add_chip(totals: dict[str, int], chip: Chip) -> None:
    totals[chip.spot] = totals.get(chip.spot, 0) + chip.amount
    for name, amount in chip.automatic.items():
        totals[name] = totals.get(name, 0) + amount


def _chip_row(chip: Chip) -> list[Any]:
    return [chip.spot, chip.amount, chip.hold_id, dict(chip.automatic)]


def _chip_text(row: list[Any]) -> str:
    return json.dumps(row)


#: ``PlayerState``'s memos (instance entries, not fields): forgotten whenever the chips change.
_MEMOS = {"_totals": None, "_held": None, "_chip_rows": None, "_chip_texts": None}


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
    declined: bool = False  # not present at "No More Bets": bets returned, not in the round

    # ``totals``, ``staked`` and ``chip_rows`` are folds over every chip, asked
    # for several times per command on the same state: each is computed once per
    # state and kept in the instance (``_MEMOS``; not fields, so equality, ``repr``
    # and ``dataclasses.replace`` ignore them), and ``apply_player`` carries them
    # over a chip placed (one chip added, not the round's chips summed again):
    # a player's hundredth chip costs what their first did.

    def totals(self) -> dict[str, int]:
        """Per-wager stake placed so far (automatic wagers included); a new dict
        each call (the caller may change it)."""
        memo = self.__dict__.get("_totals")
        if memo is None:
            memo = {}
            for chip in self.chips:
                _add_chip(memo, chip)
            self.__dict__["_totals"] = memo
        return dict(memo)

    @property
    def staked(self) -> int:
        held = self.__dict__.get("_held")
        if held is None:
            held = self.__dict__["_held"] = sum(c.held for c in self.chips)
        return held + self.call_amount

    def chip_rows(self) -> list[list[Any]]:
        """Each chip as ``[spot, amount, hold id, automatic]`` (its stored form,
        ``games.house.store.rows.state_to_json``): a new outer list each call;
        the rows inside are shared between calls and must not be changed."""
        memo = self.__dict__.get("_chip_rows")
        if memo is None:
            memo = self.__dict__["_chip_rows"] = tuple(_chip_row(c) for c in self.chips)
        return list(memo)

    def chip_texts(self) -> tuple[str, ...]:
        """``chip_rows`` as JSON text, one per chip (a projection row's document
        is written as text: only the chips placed since are encoded)."""
        memo = self.__dict__.get("_chip_texts")
        if memo is None:
            memo = self.__dict__["_chip_texts"] = tuple(_chip_text(row) for row in self.chip_rows())
        return memo

    @property
    def done_deciding(self) -> bool:
        return self.folded or self.call_amount > 0

    def decided(self, street: str) -> bool:
        return any(d.street == street for d in self.decisions)

    def holds_in_play(self) -> dict[str, int]:
        """Hold id -> amount of every ledger hold carrying this player's wagers
        while they are in play: one per chip (with its automatic wagers) and the
        call/play. None once settled or voided (every hold was resolved)."""
        if self.settled or self.voided:
            return {}
        holds = {chip.hold_id: chip.held for chip in self.chips}
        if self.call_hold_id is not None:
            holds[self.call_hold_id] = self.call_amount
        return holds

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
    # The deal's commitment (public) and sealed salt and deck (games.tables.fairness);
    # None in rounds opened before deals were committed.
    commitment: str | None = None
    sealed_deck: Mapping[str, Any] | None = None
    participants: tuple[int, ...] = ()
    seats: Mapping[int, int] = field(default_factory=dict)
    hands: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # "shared" or "player:{id}"
    # The dealer's and the board's cards as the events have shown them so far:
    # ``None`` for a card still face down (``cards_dealt`` schema 2 records only
    # its deck position; ``cards_revealed`` shows it). The round's events never
    # hold a face-down card, so neither does a state replayed from them.
    dealer: tuple[str | None, ...] = ()
    board: tuple[str | None, ...] = ()
    # Deck positions of the dealer's and the board's cards (for the dealer
    # service, which opens the committed deck to reveal them).
    dealer_positions: tuple[int, ...] = ()
    board_positions: tuple[int, ...] = ()
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
    if kind == SHUFFLED:
        return replace(state, commitment=data["commitment"], sealed_deck=data["sealed_deck"])
    if kind == BETTING_CLOSED:
        seats = {int(k): v for k, v in data.get("seats", {}).items() if v is not None}
        return replace(state, participants=tuple(data["participants"]), seats=seats, deadline=None)
    if kind == CARDS_DEALT:
        # Schema 2 (an upcast schema 1 event has ``deck_position`` too, and its
        # face-down cards in the clear: they are kept as stored).
        hands = dict(state.hands)
        dealer, board = list(state.dealer), list(state.board)
        dealer_at, board_at = list(state.dealer_positions), list(state.board_positions)
        for card in data["cards"]:
            to = card["to"]
            if to == "dealer":
                dealer.append(card.get("card"))
                dealer_at.append(card["deck_position"])
            elif to == "board":
                board.append(card.get("card"))
                board_at.append(card["deck_position"])
            else:
                hands[to] = (*hands.get(to, ()), card["card"])
        return replace(
            state,
            hands=hands,
            dealer=tuple(dealer),
            board=tuple(board),
            dealer_positions=tuple(dealer_at),
            board_positions=tuple(board_at),
        )
    if kind == WINDOW_OPENED:
        return replace(state, phase=data["street"], phase_seq=state.phase_seq + 1, deadline=data["deadline"])
    if kind == CARDS_REVEALED:
        board, dealer = list(state.board), list(state.dealer)
        for card in data["cards"]:
            shown = board if card["to"] == "board" else dealer if card["to"] == "dealer" else None
            if shown is not None and card["position"] < len(shown):
                shown[card["position"]] = card["card"]
        board_revealed = state.board_revealed + sum(1 for c in data["cards"] if c["to"] == "board")
        dealer_revealed = state.dealer_revealed or any(c["to"] == "dealer" for c in data["cards"])
        return replace(
            state, board=tuple(board), dealer=tuple(dealer), board_revealed=board_revealed,
            dealer_revealed=dealer_revealed,
        )  # fmt: skip
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
    """Fold one player-stream event.

    Reads the stored data directly rather than decoding typed events
    (``games.house.round.events``): this is the showdown's hot path, tens of
    thousands of recorded events, where a constructor per event would cost."""
    kind, data = event.type, event.data
    changes: dict[str, Any] = {"version": state.version + 1}
    if kind == BET_PLACED:
        chip = Chip(data["spot"], data["amount"], data["hold_id"], dict(data.get("automatic", {})))
        changes["chips"] = (*state.chips, chip)
        changes["doubled"] = state.doubled or data.get("source") == "double"
        # The memos carried over: one chip added (those not computed stay so).
        known = state.__dict__
        totals = known.get("_totals")
        if totals is not None:
            totals = dict(totals)
            _add_chip(totals, chip)
        held, rows, texts = known.get("_held"), known.get("_chip_rows"), known.get("_chip_texts")
        row = _chip_row(chip)
        changes["_totals"] = totals
        changes["_held"] = None if held is None else held + chip.held
        changes["_chip_rows"] = None if rows is None else (*rows, row)
        changes["_chip_texts"] = None if texts is None else (*texts, _chip_text(row))
    elif kind == BET_REMOVED:
        removed = set(data["hold_ids"])
        changes["chips"] = tuple(c for c in state.chips if c.hold_id not in removed)
        changes |= _MEMOS
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
    elif kind == PLAYER_DECLINED:
        changes["chips"] = ()
        changes["declined"] = True
        changes |= _MEMOS
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


def config_of(state: RoundState) -> RoundConfig:
    """The round's configuration (``WrongPhase`` before it opens)."""
    if state.config is None:
        raise WrongPhase("round not opened", phase="")
    return state.config


# --- time helpers (ISO-8601 text in, so the domain stays clock-free) ----------------------------


def ms_between(start: str, end: str) -> int:
    return int((datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds() * 1000)


def plus_seconds(moment: str, seconds: float) -> str:
    return (datetime.fromisoformat(moment) + timedelta(seconds=seconds)).isoformat()


def before(now: str, deadline: str | None) -> bool:
    return deadline is not None and ms_between(now, deadline) > 0
