"""Small builders for hand scenarios: cards are rigged through the commands."""

from __future__ import annotations

from dataclasses import replace

from games.poker.engine import hand as engine
from games.poker.engine.events import Event
from games.poker.engine.hand import (
    LegalActions,
    legal_actions,
)
from games.poker.engine.rules import HandConfig, PotSplit, RakeRule, Variant

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
        self.state: engine.HandState | None = None
        seats = tuple(engine.SeatSpec(seat, f"player{seat}", stack) for seat, stack in stacks.items())
        self.do(engine.StartHand("h1", cfg, seats, button))

    @property
    def s(self) -> engine.HandState:
        assert self.state is not None
        return self.state

    def do(self, command: object) -> list[Event]:
        new = engine.decide(self.state, command)  # type: ignore[arg-type]
        for event in new:
            self.state = engine.apply(self.state, event)
        self.events.extend(new)
        return new

    def deal(self, holes: dict[int, str]) -> None:
        self.do(engine.DealHoleCards({seat: (cards[:2], cards[2:]) for seat, cards in holes.items()}))

    def board(self, cards: str) -> None:
        self.do(engine.DealBoard(tuple(cards[i : i + 2] for i in range(0, len(cards), 2))))

    def act(self, seat: int, action: str, amount: int | None = None) -> list[Event]:
        return self.do(engine.Act(seat, engine.Action(action), amount))

    def check_down(self, boards: tuple[str, ...], seats: tuple[int, ...]) -> None:
        """Deal each of ``boards`` in turn, every one of ``seats`` checking (in that order) after each."""
        for cards in boards:
            self.board(cards)
            for seat in seats:
                self.act(seat, "check")

    def stack(self, seat: int) -> int:
        return self.s.players[self.s.position_of(seat)].stack

    def legal(self) -> LegalActions:
        """What the player to act may do (someone must be to act)."""
        legal = legal_actions(self.s)
        assert legal is not None
        return legal

    def to_act(self) -> int | None:
        return self.s.acting_seat

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]


def two_odd_pots(split: PotSplit, short_hole: str = "9c8c", river: str = "2c", rake: RakeRule | None = None) -> Hand:
    """Four players, a big-blind ante of 1 (dead money). Seat 3 is all-in
    for 20 preflop; seat 4 calls, puts 5 more in on the flop and folds on
    the turn. Main pot 1 + 4 x 20 = 81 (seats 1, 2, 3), side pot 3 x 5 +
    2 x 10 = 35 (seats 1, 2: seat 4 folded): both odd. Seats 1 and 2 tie
    with the board's ace-high straight over seat 3's ``short_hole`` (the
    ``river`` given, another board)."""
    h = Hand(replace(config(antes=(0, 1), rake=rake), pot_split=split), {1: 200, 2: 200, 3: 20, 4: 200}, button=4)
    h.deal({1: "Ts4d", 2: "Td4h", 3: short_hole, 4: "5s6s"})
    h.act(3, "all_in")
    h.act(4, "call")
    h.act(1, "call")
    h.act(2, "call")
    h.board("AsKdQh")
    h.act(1, "bet", 5)
    h.act(2, "call")
    h.act(4, "call")
    h.board("Jc")
    h.act(1, "bet", 10)
    h.act(2, "call")
    h.act(4, "fold")
    h.board(river)
    h.act(1, "check")
    h.act(2, "check")
    assert h.s.phase is engine.Phase.COMPLETE
    return h


def short_ante_hand(short_hole: str) -> Hand:
    """RULES.md (turn 3, antes in side pots): four players, blinds 5/10 and
    a 10-chip ante; seat 3 has 5 chips, all-in on the ante. Everyone else
    limps and checks down."""
    h = Hand(config(blinds=(5, 10), ante=10), {1: 1000, 2: 1000, 3: 5, 4: 1000}, button=4)
    h.deal({1: "2c3d", 2: "4h6s", 3: short_hole, 4: "8d9c"})
    h.act(4, "call")
    h.act(1, "call")
    h.act(2, "check")
    h.check_down(("KsQd7h", "Jc", "2s"), (1, 2, 4))
    assert h.s.phase is engine.Phase.COMPLETE
    return h
