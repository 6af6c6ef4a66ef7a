"""Small builders for hand scenarios: cards are rigged through the commands."""

from __future__ import annotations

from games.poker.engine.events import Event
from games.poker.engine.hand import (
    Act,
    Action,
    DealBoard,
    DealHoleCards,
    HandState,
    SeatSpec,
    StartHand,
    apply,
    decide,
)
from games.poker.engine.rules import HandConfig, RakeRule, Variant

NL = Variant.NO_LIMIT


def config(
    variant: Variant = NL,
    blinds: tuple[int, ...] = (1, 2),
    *,
    ante: int = 0,
    antes: tuple[int, ...] = (),
    rake: RakeRule | None = None,
) -> HandConfig:
    return HandConfig(variant=variant, blinds_or_straddles=blinds, ante=ante, antes=antes, rake=rake)


class Hand:
    """A hand driven by commands; keeps every event (the history)."""

    def __init__(self, cfg: HandConfig, stacks: dict[int, int], button: int) -> None:
        self.events: list[Event] = []
        self.state: HandState | None = None
        seats = tuple(SeatSpec(seat, f"player{seat}", stack) for seat, stack in stacks.items())
        self.do(StartHand("h1", cfg, seats, button))

    @property
    def s(self) -> HandState:
        assert self.state is not None
        return self.state

    def do(self, command: object) -> list[Event]:
        new = decide(self.state, command)  # type: ignore[arg-type]
        for event in new:
            self.state = apply(self.state, event)
        self.events.extend(new)
        return new

    def deal(self, holes: dict[int, str]) -> None:
        self.do(DealHoleCards({seat: (cards[:2], cards[2:]) for seat, cards in holes.items()}))

    def board(self, cards: str) -> None:
        self.do(DealBoard(tuple(cards[i : i + 2] for i in range(0, len(cards), 2))))

    def act(self, seat: int, action: str, amount: int | None = None) -> list[Event]:
        return self.do(Act(seat, Action(action), amount))

    def stack(self, seat: int) -> int:
        return self.s.players[self.s.position_of(seat)].stack

    def to_act(self) -> int | None:
        return self.s.acting_seat

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]
