"""The events of one hold'em hand. They are the hand history: replaying them
through ``apply`` rebuilds every intermediate state. Cards are strings such
as ``"As"`` (rank ``23456789TJQKA``, suit ``shdc``); ``None`` marks a card
unknown to an imported history. Seats are table seat numbers."""

from __future__ import annotations

from dataclasses import MISSING, asdict, dataclass, fields
from typing import Any, ClassVar, TypeVar

_T = TypeVar("_T")


def _fast_init(cls: type[_T]) -> type[_T]:
    """Give a frozen dataclass a quicker ``__init__`` (the same signature).

    The generated one looks ``object.__setattr__`` up for every field; this
    one binds it once. Events are built on the engine's hot path (about 50
    per hand), where this halves their cost."""
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    namespace: dict[str, Any] = {"_object_setattr": object.__setattr__}
    params = []
    for f in fields(cls):  # type: ignore[arg-type]
        if f.default is MISSING:
            params.append(f.name)
        else:
            namespace[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
    body = "".join(f"    _set(self, {name!r}, {name})\n" for name in names)
    source = f"def __init__(self, {', '.join(params)}, *, _set=_object_setattr):\n{body}"
    exec(source, namespace)  # the technique dataclasses itself uses
    namespace["__init__"].__qualname__ = f"{cls.__qualname__}.__init__"
    setattr(cls, "__init__", namespace["__init__"])  # noqa: B010
    return cls


@dataclass(frozen=True, slots=True)
class Event:
    type: ClassVar[str] = "event"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **_jsonable(asdict(self))}


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return [_jsonable(item) for item in value]
    return value


@_fast_init
@dataclass(frozen=True, slots=True)
class HandStarted(Event):
    """Seats (seat, player id, stack) in position order: the first is the
    first player left of the button, the last is the button."""

    type: ClassVar[str] = "poker.hand_started"
    hand_id: str
    variant: str
    button: int
    seats: tuple[tuple[int, str, int], ...]
    blinds_or_straddles: tuple[int, ...]
    antes: tuple[int, ...]
    ante: int
    min_bet: int | None
    small_bet: int | None
    big_bet: int | None
    raise_cap: int | None  # fixed limit: bets and raises allowed per street; None: no cap
    rake: tuple[int, int, int, bool] | None  # percent_bp, minimum, cap, no_flop_no_drop
    # Added later; events stored before them read as the rule of that time.
    blind_is_bet: bool = True  # fixed limit preflop: the big blind counts as the bet towards the cap
    heads_up_uncapped: bool = False  # fixed limit: no cap while only two players are in the hand
    reopening: str = "acted"  # the short all-in reopening rule (rules.Reopening)
    pot_split: str = "per_pot"  # how tied hands share the pots (rules.PotSplit)


@_fast_init
@dataclass(frozen=True, slots=True)
class AntePosted(Event):
    type: ClassVar[str] = "poker.ante_posted"
    seat: int
    amount: int
    all_in: bool


@_fast_init
@dataclass(frozen=True, slots=True)
class BlindPosted(Event):
    """``kind`` is ``small``, ``big`` or ``straddle``."""

    type: ClassVar[str] = "poker.blind_posted"
    seat: int
    kind: str
    amount: int
    all_in: bool


@_fast_init
@dataclass(frozen=True, slots=True)
class HoleCardsDealt(Event):
    type: ClassVar[str] = "poker.hole_cards_dealt"
    seat: int
    cards: tuple[str | None, ...]


@_fast_init
@dataclass(frozen=True, slots=True)
class ActionTaken(Event):
    """``action`` is fold, check, call, bet, raise or all_in; ``amount`` is
    the chips the player added, ``total`` their bet for the round after it."""

    type: ClassVar[str] = "poker.action_taken"
    seat: int
    action: str
    amount: int
    total: int
    all_in: bool


@_fast_init
@dataclass(frozen=True, slots=True)
class UncalledBetReturned(Event):
    type: ClassVar[str] = "poker.uncalled_bet_returned"
    seat: int
    amount: int


@_fast_init
@dataclass(frozen=True, slots=True)
class BettingRoundEnded(Event):
    """Bets of the round (street 0 preflop .. 3 river) go into the pot."""

    type: ClassVar[str] = "poker.betting_round_ended"
    street: int


@_fast_init
@dataclass(frozen=True, slots=True)
class BoardDealt(Event):
    """``street`` 1 flop (three cards), 2 turn, 3 river (one card)."""

    type: ClassVar[str] = "poker.board_dealt"
    street: int
    cards: tuple[str, ...]


@_fast_init
@dataclass(frozen=True, slots=True)
class HandShown(Event):
    type: ClassVar[str] = "poker.hand_shown"
    seat: int
    cards: tuple[str | None, ...]
    strength: int


@_fast_init
@dataclass(frozen=True, slots=True)
class HandMucked(Event):
    type: ClassVar[str] = "poker.hand_mucked"
    seat: int


@_fast_init
@dataclass(frozen=True, slots=True)
class RakeTaken(Event):
    """``amount`` in total, ``per_pot`` split over the pots (main first)."""

    type: ClassVar[str] = "poker.rake_taken"
    amount: int
    per_pot: tuple[int, ...]


@_fast_init
@dataclass(frozen=True, slots=True)
class PotAwarded(Event):
    """Pot ``index`` (0 = main) of ``amount`` chips before rake, ``rake``
    taken from it, shared by ``winners`` as (seat, chips)."""

    type: ClassVar[str] = "poker.pot_awarded"
    index: int
    amount: int
    rake: int
    eligible: tuple[int, ...]
    winners: tuple[tuple[int, int], ...]


@_fast_init
@dataclass(frozen=True, slots=True)
class HandEnded(Event):
    """Final stacks as (seat, stack) in position order."""

    type: ClassVar[str] = "poker.hand_ended"
    stacks: tuple[tuple[int, int], ...]
    rake: int


EVENT_TYPES: dict[str, type[Event]] = {
    cls.type: cls
    for cls in (
        HandStarted,
        AntePosted,
        BlindPosted,
        HoleCardsDealt,
        ActionTaken,
        UncalledBetReturned,
        BettingRoundEnded,
        BoardDealt,
        HandShown,
        HandMucked,
        RakeTaken,
        PotAwarded,
        HandEnded,
    )
}


def event_from_dict(data: dict[str, Any]) -> Event:
    """Inverse of ``Event.to_dict`` (JSON lists become tuples again)."""
    cls = EVENT_TYPES[data["type"]]
    kwargs = {f.name: _tuples(data[f.name]) for f in fields(cls) if f.name in data or f.default is MISSING}
    return cls(**kwargs)


def _tuples(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tuples(item) for item in value)
    return value
