"""The house-banked round's events: type names, schema versions, and one frozen
dataclass per event type with its (de)serialiser (catalogue: docs/events.md,
"House-banked round"; upcasters: ``games.house.event_types``).

``to_data`` writes the stored JSON object and ``from_data`` reads it back:
``cls.from_data(data).to_data() == data`` for every stored event. One codec,
``Record``, derives both from the dataclass fields: a JSON key per field, in
field order; tuples are lists and nested records their own objects; a field
whose default is ``None`` is one that older events lack, left out while
``None``. Only a class whose JSON is shaped otherwise writes its own pair.
Commands build these classes; ``Event`` is the envelope the store appends
(type, data, stream).

Folding (``games.house.round.state``) reads the data mappings directly and
does not build these classes: a showdown folds tens of thousands of recorded
player events, and a constructor per event would cost there.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Self, Union, get_args, get_origin, get_type_hints

# Event types.
OPENED = "house_round.opened"
SHUFFLED = "house_round.shuffled"
BETTING_CLOSED = "house_round.betting_closed"
CARDS_DEALT = "house_round.cards_dealt"
# Schema 2 (issue 33): the dealer's and the board's cards only as deck positions
# (no card); schema 1 recorded them in the clear (upcast: ``games.house.event_types``).
CARDS_DEALT_SCHEMA = 2
WINDOW_OPENED = "house_round.decision_window_opened"
CARDS_REVEALED = "house_round.cards_revealed"
WHEEL_SPUN = "house_round.wheel_spun"
PROGRESSIVE_CONTRIBUTED = "house_round.progressive_contributed"
PROGRESSIVE_HIT = "house_round.progressive_hit"
# The STAX pools' amounts after a step that changed them (seeding when the round
# opens; contributions, hits and resets at settlement): the jackpot meter's delta.
JACKPOT = "house_round.jackpot"
SETTLED = "house_round.settled"
PAUSED = "house_round.paused"
RESUMED = "house_round.resumed"
VOIDED_EVENT = "house_round.voided"
ROUND_CLOSED = "house_round.closed"
# The whole deck (master salt and cards) at the round's end: every card of a
# house round is public once it is over (docs/fairness.md).
DECK_REVEALED = "house_round.deck_revealed"
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
PLAYER_DECLINED = "house_player.declined"

ROUND_EVENT_TYPES = (
    OPENED,
    SHUFFLED,
    BETTING_CLOSED,
    CARDS_DEALT,
    WINDOW_OPENED,
    CARDS_REVEALED,
    WHEEL_SPUN,
    PROGRESSIVE_CONTRIBUTED,
    PROGRESSIVE_HIT,
    JACKPOT,
    SETTLED,
    PAUSED,
    RESUMED,
    VOIDED_EVENT,
    DECK_REVEALED,
    ROUND_CLOSED,
)
PLAYER_EVENT_TYPES = (
    BET_PLACED,
    BET_REMOVED,
    DECISION_MADE,
    WAGER_SETTLED,
    PLAYER_SETTLED,
    PLAYER_VOIDED,
    PLAYER_DECLINED,
)


@dataclass(frozen=True, slots=True)
class Event:
    """An event to append: ``stream`` is ``"round"`` or a player id; ``data`` is
    the stored JSON object (made by a ``HouseEvent``'s ``to_data``)."""

    type: str
    data: Mapping[str, Any]
    stream: str | int = "round"


_Decode = Callable[[Any], Any]


def _plain(value: Any) -> Any:
    """A field's JSON value: records as their objects, tuples as lists, mappings as dicts."""
    if isinstance(value, Record):
        return value.to_data()
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    return value


def _same(value: Any) -> Any:
    return value


def _decoder(hint: Any) -> _Decode:
    """How a field of type ``hint`` reads its JSON value (lists back to tuples, records rebuilt)."""
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        inner = _decoder(next(arg for arg in get_args(hint) if arg is not type(None)))
        return lambda value: None if value is None else inner(value)
    if origin is tuple:
        item = _decoder(get_args(hint)[0])
        return lambda value: tuple(item(v) for v in value)
    if isinstance(hint, type) and issubclass(hint, Record):
        return hint.from_data
    return _same


@dataclass(frozen=True, slots=True)
class Record:
    """A stored JSON object as a frozen dataclass; ``to_data`` and ``from_data``
    derive from the fields (see the module docstring for the mapping)."""

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for name, optional, _ in self._codec():
            value = getattr(self, name)
            if not (optional and value is None):
                data[name] = _plain(value)
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Self:
        return cls(**{
            name: decode(data[name]) if name in data or not optional else None
            for name, optional, decode in cls._codec()
        })  # fmt: skip

    @classmethod
    def _codec(cls) -> tuple[tuple[str, bool, _Decode], ...]:
        """(name, left out while None, decoder) per field, worked out once per class."""
        codec = _CODECS.get(cls)
        if codec is None:
            hints = get_type_hints(cls)
            codec = _CODECS[cls] = tuple((f.name, f.default is None, _decoder(hints[f.name])) for f in fields(cls))
        return codec


_CODECS: dict[type[Record], tuple[tuple[str, bool, _Decode], ...]] = {}


@dataclass(frozen=True, slots=True)
class HouseEvent(Record):
    """One typed house event. Subclasses set ``type`` (and ``schema`` past 1)."""

    type: ClassVar[str] = ""
    schema: ClassVar[int] = 1

    def event(self, stream: str | int = "round") -> Event:
        """The envelope to append to ``stream`` ("round" or a player id)."""
        return Event(self.type, self.to_data(), stream)


# --- parts of events ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CardAt(Record):
    """A card and where it goes: ``to`` is ``shared``, ``player:{id}``, ``dealer`` or
    ``board``. ``face_up`` only in ``cards_dealt`` (``None``: not recorded)."""

    to: str
    position: int
    card: str
    face_up: bool | None = None


@dataclass(frozen=True, slots=True)
class DealtAt(Record):
    """One card of ``cards_dealt`` (schema 2): deck position ``deck_position``
    went to ``to`` (``shared``, ``player:{id}``, ``dealer``, ``board``) as its
    ``position``-th card. ``card`` only for a card dealt face up (the players'
    hands); a face-down card (dealer, board) is ``None`` here and shown by its
    ``cards_revealed``. (A round opened before deals were committed has no deck
    to open later: its face-down cards carry ``card``, as schema 1 did.)"""

    to: str
    position: int
    deck_position: int
    face_up: bool
    card: str | None = None


@dataclass(frozen=True, slots=True)
class SettledWager(Record):
    """One wager's settlement (``rounding_kept``: a fraction as text, e.g. ``"1/2"``)."""

    wager: str
    stake: int
    outcome: str
    returned: int
    rounding_kept: str
    hand: str | None
    progressive: str | None
    wheel: str | None


# --- round stream -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RoundOpened(HouseEvent):
    """The configuration in force, recorded as it was (rules and pay tables in
    full). ``max_seats`` and ``config_version`` are ``None`` in rounds recorded
    before they existed; ``chips`` (the denominations, ascending) and
    ``mandatory_wagers`` are left out of those recorded before issue 37."""

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
    chips: tuple[int, ...] | None = None
    mandatory_wagers: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class DeckShuffled(HouseEvent):
    """The deck the round is dealt from, shuffled when it opens, before any bet
    (docs/fairness.md): ``commitment`` is public from now on; ``sealed_deck``
    holds the master salt and the deck as ``games.tables.fairness.shuffle_and_commit``
    sealed them under the round's deal key (opaque here; legacy rounds: the
    ``plain`` scheme). Only the dealer service opens it; the round's end
    reveals the deck in ``house_round.deck_revealed``."""

    type: ClassVar[str] = SHUFFLED
    commitment: str
    sealed_deck: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class BettingWindowClosed(HouseEvent):
    """``seats``: player id (as text) -> seat number, or ``None`` at shared tables."""

    type: ClassVar[str] = BETTING_CLOSED
    at: str
    participants: tuple[int, ...]
    seats: Mapping[str, int | None] | None = None


@dataclass(frozen=True, slots=True)
class CardsDealt(HouseEvent):
    """Every card of the round in the order it leaves the deck: player hands
    face up (with their cards), dealer and board face down (deck positions
    only: schema 2)."""

    type: ClassVar[str] = CARDS_DEALT
    schema: ClassVar[int] = CARDS_DEALT_SCHEMA
    cards: tuple[DealtAt, ...]


@dataclass(frozen=True, slots=True)
class DecisionWindowOpened(HouseEvent):
    type: ClassVar[str] = WINDOW_OPENED
    street: str
    opens_at: str
    deadline: str


@dataclass(frozen=True, slots=True)
class CardsRevealed(HouseEvent):
    type: ClassVar[str] = CARDS_REVEALED
    street: str
    cards: tuple[CardAt, ...]


@dataclass(frozen=True, slots=True)
class SpinAward(Record):
    """What one Bonus Spin Xtreme wager of ``stake`` (``units`` currency units)
    returns on this spin, stake included (minor units)."""

    units: int
    stake: int
    returned: int


@dataclass(frozen=True, slots=True)
class PoolAmount(Record):
    """One progressive pool and its amount (minor units)."""

    pool: str
    amount: int


@dataclass(frozen=True, slots=True)
class WheelSpun(HouseEvent):
    """The one spin of the round. ``hand``: the board's triggering outcome (e.g.
    ``full_house``); ``awards``: what each wager size the table offers returns on
    it. Both ``None`` in rounds recorded before they were written."""

    type: ClassVar[str] = WHEEL_SPUN
    wheel: str
    version: str
    label: str
    multiple: int
    weight: int
    hand: str | None = None
    awards: tuple[SpinAward, ...] | None = None


@dataclass(frozen=True, slots=True)
class ProgressiveContributed(HouseEvent):
    """``pools``: pool -> minor units moved from the house into it."""

    type: ClassVar[str] = PROGRESSIVE_CONTRIBUTED
    pools: Mapping[str, int]


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
class JackpotMeter(HouseEvent):
    """The table's STAX pools after this step's changes, in the game's pool
    order, in ``currency`` (public: the jackpot meter)."""

    type: ClassVar[str] = JACKPOT
    currency: str
    pools: tuple[PoolAmount, ...]


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


@dataclass(frozen=True, slots=True)
class Paused(HouseEvent):
    type: ClassVar[str] = PAUSED
    actor: str
    reason: str
    at: str
    phase: str
    remaining_ms: int


@dataclass(frozen=True, slots=True)
class Resumed(HouseEvent):
    type: ClassVar[str] = RESUMED
    actor: str
    at: str
    deadline: str


@dataclass(frozen=True, slots=True)
class RoundVoided(HouseEvent):
    """``automatic``: the dealer voided it (e.g. the dealer is gone), not an operator."""

    type: ClassVar[str] = VOIDED_EVENT
    actor: str
    reason: str
    automatic: bool
    at: str


@dataclass(frozen=True, slots=True)
class DeckRevealed(HouseEvent):
    """The round is over (settled, closed without bets, voided): its master
    ``salt`` and ``deck`` (top first), which rebuild the commitment
    (``games.tables.fairness.opened_from_reveal``). Appended in the transaction that
    ends the round, just before ``house_round.closed``, as the round's deal key
    is shredded; rounds of the legacy ``plain`` scheme and rounds without a
    commitment have none."""

    type: ClassVar[str] = DECK_REVEALED
    salt: str
    deck: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RoundClosed(HouseEvent):
    """``reason``: ``settled``, ``voided`` or ``no_bets``."""

    type: ClassVar[str] = ROUND_CLOSED
    at: str
    reason: str


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


@dataclass(frozen=True, slots=True)
class BetRemoved(HouseEvent):
    """Holds released. ``undo`` records the chip's ``spot`` and ``amount``,
    ``clear`` and ``leave`` (the player gave up the seat before betting closed)
    the ``totals`` removed (the other fields are ``None``)."""

    type: ClassVar[str] = BET_REMOVED
    hold_ids: tuple[str, ...]
    reason: str
    spot: str | None = None
    amount: int | None = None
    totals: Mapping[str, int] | None = None


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


@dataclass(frozen=True, slots=True)
class PlayerVoided(HouseEvent):
    """Every wager of the player (calls included) returned."""

    type: ClassVar[str] = PLAYER_VOIDED
    returned: int
    reason: str
    at: str


@dataclass(frozen=True, slots=True)
class PlayerDeclined(HouseEvent):
    """Seed 003: the player was not present at the table at "No More Bets"
    (``at``: that moment), so their bets are declined: every hold goes back to
    the wallet (``returned``: the total, ``totals``: per wager) and they take no
    part in the round. ``reason``: ``absent``."""

    type: ClassVar[str] = PLAYER_DECLINED
    returned: int
    totals: Mapping[str, int]
    reason: str
    at: str


EVENT_CLASSES: dict[str, type[HouseEvent]] = {
    cls.type: cls
    for cls in (
        RoundOpened,
        DeckShuffled,
        BettingWindowClosed,
        CardsDealt,
        DecisionWindowOpened,
        CardsRevealed,
        WheelSpun,
        ProgressiveContributed,
        ProgressiveHit,
        JackpotMeter,
        RoundSettled,
        Paused,
        Resumed,
        RoundVoided,
        DeckRevealed,
        RoundClosed,
        BetPlaced,
        BetRemoved,
        DecisionMade,
        WagerSettled,
        PlayerSettled,
        PlayerVoided,
        PlayerDeclined,
    )
}


def decode(event: Any) -> HouseEvent:
    """The typed event of an ``Event`` or a ledger ``RecordedEvent`` (type and data)."""
    return EVENT_CLASSES[event.type].from_data(event.data)
