"""The house-banked round's events: type names, schema versions, and one frozen
dataclass per event type with its (de)serialiser (catalogue: docs/events.md,
"House-banked round"; upcasters: ``games.house.event_types``).

``to_data`` writes the stored JSON object and ``from_data`` reads it back:
``cls.from_data(data).to_data() == data`` for every stored event (a field that
older events lack is ``None`` here and left out again). Commands build these
classes; ``Event`` is the envelope the store appends (type, data, stream).

Folding (``games.house.round.state``) reads the data mappings directly and
does not build these classes: a showdown folds tens of thousands of recorded
player events, and a constructor per event would cost there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

# Event types.
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


@dataclass(frozen=True, slots=True)
class Event:
    """An event to append: ``stream`` is ``"round"`` or a player id; ``data`` is
    the stored JSON object (made by a ``HouseEvent``'s ``to_data``)."""

    type: str
    data: Mapping[str, Any]
    stream: str | int = "round"


@dataclass(frozen=True, slots=True)
class HouseEvent:
    """One typed house event. Subclasses set ``type`` and implement both ways."""

    type: ClassVar[str] = ""
    schema: ClassVar[int] = 1

    def to_data(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Self:
        raise NotImplementedError

    def event(self, stream: str | int = "round") -> Event:
        """The envelope to append to ``stream`` ("round" or a player id)."""
        return Event(self.type, self.to_data(), stream)


# --- parts of events ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CardAt:
    """A card and where it goes: ``to`` is ``shared``, ``player:{id}``, ``dealer`` or
    ``board``. ``face_up`` only in ``cards_dealt`` (``None``: not recorded)."""

    to: str
    position: int
    card: str
    face_up: bool | None = None

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"to": self.to, "position": self.position, "card": self.card}
        if self.face_up is not None:
            data["face_up"] = self.face_up
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> CardAt:
        return cls(data["to"], data["position"], data["card"], data.get("face_up"))


@dataclass(frozen=True, slots=True)
class SettledWager:
    """One wager's settlement (``rounding_kept``: a fraction as text, e.g. ``"1/2"``)."""

    wager: str
    stake: int
    outcome: str
    returned: int
    rounding_kept: str
    hand: str | None
    progressive: str | None
    wheel: str | None

    def to_data(self) -> dict[str, Any]:
        return {
            "wager": self.wager,
            "stake": self.stake,
            "outcome": self.outcome,
            "returned": self.returned,
            "rounding_kept": self.rounding_kept,
            "hand": self.hand,
            "progressive": self.progressive,
            "wheel": self.wheel,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> SettledWager:
        return cls(
            data["wager"],
            data["stake"],
            data["outcome"],
            data["returned"],
            data["rounding_kept"],
            data["hand"],
            data["progressive"],
            data["wheel"],
        )


def _cards(items: Any) -> tuple[CardAt, ...]:
    return tuple(CardAt.from_data(c) for c in items)


# --- round stream -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RoundOpened(HouseEvent):
    """The configuration in force, recorded as it was (rules and pay tables in
    full). ``max_seats`` and ``config_version`` are ``None`` in rounds recorded
    before they existed."""

    type: ClassVar[str] = OPENED
    round_id: str
    table_id: int
    table_code: str
    game_number: str
    game: str
    rules_version: Any
    rules: Mapping[str, Any]
    hand_mode: str
    currency: str
    currency_unit: int
    limits: Mapping[str, Mapping[str, int]]
    pay_tables: Mapping[str, Mapping[str, Any]]  # wager -> {number, table}
    wheel: Mapping[str, Any]
    progressives: Mapping[str, Any]
    durations: Mapping[str, int]
    max_seats: int | None
    config_version: int | None
    opened_at: str
    betting_deadline: str
    warning_at: str

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "round_id": self.round_id,
            "table_id": self.table_id,
            "table_code": self.table_code,
            "game_number": self.game_number,
            "game": self.game,
            "rules_version": self.rules_version,
            "rules": self.rules,
            "hand_mode": self.hand_mode,
            "currency": self.currency,
            "currency_unit": self.currency_unit,
            "limits": {k: dict(v) for k, v in self.limits.items()},
            "pay_tables": dict(self.pay_tables),
            "wheel": dict(self.wheel),
            "progressives": dict(self.progressives),
            "durations": dict(self.durations),
        }
        if self.max_seats is not None:
            data["max_seats"] = self.max_seats
        if self.config_version is not None:
            data["config_version"] = self.config_version
        data["opened_at"] = self.opened_at
        data["betting_deadline"] = self.betting_deadline
        data["warning_at"] = self.warning_at
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> RoundOpened:
        return cls(
            round_id=data["round_id"],
            table_id=data["table_id"],
            table_code=data["table_code"],
            game_number=data["game_number"],
            game=data["game"],
            rules_version=data["rules_version"],
            rules=data["rules"],
            hand_mode=data["hand_mode"],
            currency=data["currency"],
            currency_unit=data["currency_unit"],
            limits=data["limits"],
            pay_tables=data["pay_tables"],
            wheel=data["wheel"],
            progressives=data["progressives"],
            durations=data["durations"],
            max_seats=data.get("max_seats"),
            config_version=data.get("config_version"),
            opened_at=data["opened_at"],
            betting_deadline=data["betting_deadline"],
            warning_at=data["warning_at"],
        )


@dataclass(frozen=True, slots=True)
class BettingWindowClosed(HouseEvent):
    """``seats``: player id (as text) -> seat number, or ``None`` at shared tables."""

    type: ClassVar[str] = BETTING_CLOSED
    at: str
    participants: tuple[int, ...]
    seats: Mapping[str, int | None] | None = None

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"at": self.at, "participants": list(self.participants)}
        if self.seats is not None:
            data["seats"] = dict(self.seats)
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> BettingWindowClosed:
        return cls(data["at"], tuple(data["participants"]), data.get("seats"))


@dataclass(frozen=True, slots=True)
class CardsDealt(HouseEvent):
    """Every card of the round: player hands face up, dealer and board face down."""

    type: ClassVar[str] = CARDS_DEALT
    cards: tuple[CardAt, ...]

    def to_data(self) -> dict[str, Any]:
        return {"cards": [c.to_data() for c in self.cards]}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> CardsDealt:
        return cls(_cards(data["cards"]))


@dataclass(frozen=True, slots=True)
class DecisionWindowOpened(HouseEvent):
    type: ClassVar[str] = WINDOW_OPENED
    street: str
    opens_at: str
    deadline: str

    def to_data(self) -> dict[str, Any]:
        return {"street": self.street, "opens_at": self.opens_at, "deadline": self.deadline}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> DecisionWindowOpened:
        return cls(data["street"], data["opens_at"], data["deadline"])


@dataclass(frozen=True, slots=True)
class CardsRevealed(HouseEvent):
    type: ClassVar[str] = CARDS_REVEALED
    street: str
    cards: tuple[CardAt, ...]

    def to_data(self) -> dict[str, Any]:
        return {"street": self.street, "cards": [c.to_data() for c in self.cards]}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> CardsRevealed:
        return cls(data["street"], _cards(data["cards"]))


@dataclass(frozen=True, slots=True)
class WheelSpun(HouseEvent):
    type: ClassVar[str] = WHEEL_SPUN
    wheel: str
    version: str
    label: str
    multiple: int
    weight: int

    def to_data(self) -> dict[str, Any]:
        return {"wheel": self.wheel, "version": self.version, "label": self.label, "multiple": self.multiple,
                "weight": self.weight}  # fmt: skip

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> WheelSpun:
        return cls(data["wheel"], data["version"], data["label"], data["multiple"], data["weight"])


@dataclass(frozen=True, slots=True)
class ProgressiveContributed(HouseEvent):
    """``pools``: pool -> minor units moved from the house into it."""

    type: ClassVar[str] = PROGRESSIVE_CONTRIBUTED
    pools: Mapping[str, int]

    def to_data(self) -> dict[str, Any]:
        return {"pools": dict(self.pools)}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> ProgressiveContributed:
        return cls(data["pools"])


@dataclass(frozen=True, slots=True)
class ProgressiveHit(HouseEvent):
    """``hits``: (player id, share) pairs."""

    type: ClassVar[str] = PROGRESSIVE_HIT
    pool: str
    pool_balance: int
    hits: tuple[tuple[int, int], ...]
    remainder_kept: int
    reset_added: int

    def to_data(self) -> dict[str, Any]:
        return {
            "pool": self.pool,
            "pool_balance": self.pool_balance,
            "hits": [{"player_id": pid, "share": share} for pid, share in self.hits],
            "remainder_kept": self.remainder_kept,
            "reset_added": self.reset_added,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> ProgressiveHit:
        hits = tuple((h["player_id"], h["share"]) for h in data["hits"])
        return cls(data["pool"], data["pool_balance"], hits, data["remainder_kept"], data["reset_added"])


@dataclass(frozen=True, slots=True)
class RoundSettled(HouseEvent):
    """``dealer``: {category, best_five, qualifies}; totals over every player."""

    type: ClassVar[str] = SETTLED
    dealer: Mapping[str, Any]
    board: tuple[str, ...]
    players: int
    staked: int
    returned: int
    at: str

    def to_data(self) -> dict[str, Any]:
        return {"dealer": dict(self.dealer), "board": list(self.board), "players": self.players,
                "staked": self.staked, "returned": self.returned, "at": self.at}  # fmt: skip

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> RoundSettled:
        return cls(data["dealer"], tuple(data["board"]), data["players"], data["staked"], data["returned"],
                   data["at"])  # fmt: skip


@dataclass(frozen=True, slots=True)
class Paused(HouseEvent):
    type: ClassVar[str] = PAUSED
    actor: str
    reason: str
    at: str
    phase: str
    remaining_ms: int

    def to_data(self) -> dict[str, Any]:
        return {"actor": self.actor, "reason": self.reason, "at": self.at, "phase": self.phase,
                "remaining_ms": self.remaining_ms}  # fmt: skip

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Paused:
        return cls(data["actor"], data["reason"], data["at"], data["phase"], data["remaining_ms"])


@dataclass(frozen=True, slots=True)
class Resumed(HouseEvent):
    type: ClassVar[str] = RESUMED
    actor: str
    at: str
    deadline: str

    def to_data(self) -> dict[str, Any]:
        return {"actor": self.actor, "at": self.at, "deadline": self.deadline}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Resumed:
        return cls(data["actor"], data["at"], data["deadline"])


@dataclass(frozen=True, slots=True)
class RoundVoided(HouseEvent):
    """``automatic``: the dealer voided it (e.g. the dealer is gone), not an operator."""

    type: ClassVar[str] = VOIDED_EVENT
    actor: str
    reason: str
    automatic: bool
    at: str

    def to_data(self) -> dict[str, Any]:
        return {"actor": self.actor, "reason": self.reason, "automatic": self.automatic, "at": self.at}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> RoundVoided:
        return cls(data["actor"], data["reason"], data["automatic"], data["at"])


@dataclass(frozen=True, slots=True)
class RoundClosed(HouseEvent):
    """``reason``: ``settled``, ``voided`` or ``no_bets``."""

    type: ClassVar[str] = ROUND_CLOSED
    at: str
    reason: str

    def to_data(self) -> dict[str, Any]:
        return {"at": self.at, "reason": self.reason}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> RoundClosed:
        return cls(data["at"], data["reason"])


# --- player streams -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BetPlaced(HouseEvent):
    """``amount`` on ``spot`` plus the ``automatic`` wagers it brings (e.g. ante ->
    ante_plus), all held under ``hold_id``. ``source``: chip, repeat or double."""

    type: ClassVar[str] = BET_PLACED
    spot: str
    amount: int
    automatic: Mapping[str, int]
    hold_id: str
    source: str
    capped: bool

    @property
    def held(self) -> int:
        """What the hold takes from the wallet."""
        return self.amount + sum(self.automatic.values())

    def to_data(self) -> dict[str, Any]:
        return {"spot": self.spot, "amount": self.amount, "automatic": dict(self.automatic),
                "hold_id": self.hold_id, "source": self.source, "capped": self.capped}  # fmt: skip

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> BetPlaced:
        return cls(data["spot"], data["amount"], data["automatic"], data["hold_id"], data["source"],
                   data["capped"])  # fmt: skip


@dataclass(frozen=True, slots=True)
class BetRemoved(HouseEvent):
    """Holds released. ``undo`` records the chip's ``spot`` and ``amount``,
    ``clear`` the ``totals`` cleared (the other fields are ``None``)."""

    type: ClassVar[str] = BET_REMOVED
    hold_ids: tuple[str, ...]
    reason: str
    spot: str | None = None
    amount: int | None = None
    totals: Mapping[str, int] | None = None

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"hold_ids": list(self.hold_ids)}
        if self.spot is not None:
            data["spot"] = self.spot
        if self.amount is not None:
            data["amount"] = self.amount
        if self.totals is not None:
            data["totals"] = dict(self.totals)
        data["reason"] = self.reason
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> BetRemoved:
        return cls(tuple(data["hold_ids"]), data["reason"], data.get("spot"), data.get("amount"), data.get("totals"))


@dataclass(frozen=True, slots=True)
class DecisionMade(HouseEvent):
    """``amount``: the call/play held (0 for a check or fold), under ``hold_id``;
    ``auto``: the timeout default took it."""

    type: ClassVar[str] = DECISION_MADE
    street: str
    option: str
    auto: bool
    amount: int
    folds: bool
    hold_id: str | None
    at: str

    def to_data(self) -> dict[str, Any]:
        return {"street": self.street, "option": self.option, "auto": self.auto, "amount": self.amount,
                "folds": self.folds, "hold_id": self.hold_id, "at": self.at}  # fmt: skip

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> DecisionMade:
        return cls(data["street"], data["option"], data["auto"], data["amount"], data["folds"], data["hold_id"],
                   data["at"])  # fmt: skip


@dataclass(frozen=True, slots=True)
class WagerSettled(HouseEvent):
    """Schema 1 rounds only (read, never written): one wager's settlement."""

    type: ClassVar[str] = WAGER_SETTLED
    wager: SettledWager

    def to_data(self) -> dict[str, Any]:
        return self.wager.to_data()

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> WagerSettled:
        return cls(SettledWager.from_data(data))


@dataclass(frozen=True, slots=True)
class PlayerSettled(HouseEvent):
    """The player's result with every wager's settlement (schema 2). ``wagers``
    is ``None`` for a schema 1 event upcast (they are in the stream before it)."""

    type: ClassVar[str] = PLAYER_SETTLED
    schema: ClassVar[int] = PLAYER_SETTLED_SCHEMA
    result: str
    staked: int
    returned: int
    net: int
    player: Mapping[str, Any]  # {category, best_five}
    wagers: tuple[SettledWager, ...] | None
    at: str

    def to_data(self) -> dict[str, Any]:
        return {
            "result": self.result,
            "staked": self.staked,
            "returned": self.returned,
            "net": self.net,
            "player": dict(self.player),
            "wagers": None if self.wagers is None else [w.to_data() for w in self.wagers],
            "at": self.at,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> PlayerSettled:
        wagers = data["wagers"]
        return cls(
            data["result"],
            data["staked"],
            data["returned"],
            data["net"],
            data["player"],
            None if wagers is None else tuple(SettledWager.from_data(w) for w in wagers),
            data["at"],
        )


@dataclass(frozen=True, slots=True)
class PlayerVoided(HouseEvent):
    """Every wager of the player (calls included) returned."""

    type: ClassVar[str] = PLAYER_VOIDED
    returned: int
    reason: str
    at: str

    def to_data(self) -> dict[str, Any]:
        return {"returned": self.returned, "reason": self.reason, "at": self.at}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> PlayerVoided:
        return cls(data["returned"], data["reason"], data["at"])


EVENT_CLASSES: dict[str, type[HouseEvent]] = {
    cls.type: cls
    for cls in (
        RoundOpened,
        BettingWindowClosed,
        CardsDealt,
        DecisionWindowOpened,
        CardsRevealed,
        WheelSpun,
        ProgressiveContributed,
        ProgressiveHit,
        RoundSettled,
        Paused,
        Resumed,
        RoundVoided,
        RoundClosed,
        BetPlaced,
        BetRemoved,
        DecisionMade,
        WagerSettled,
        PlayerSettled,
        PlayerVoided,
    )
}


def decode(event: Any) -> HouseEvent:
    """The typed event of an ``Event`` or a ledger ``RecordedEvent`` (type and data)."""
    return EVENT_CLASSES[event.type].from_data(event.data)
