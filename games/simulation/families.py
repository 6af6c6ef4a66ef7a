"""Both families in one process (``--family all``): one seeded schedule
interleaving the house tables' and the poker tables' steps, one queue, one
clock, one beat (its sweep runs the house sweep, then the poker sweep)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from games.simulation.core import SWEEP, Family, Simulator, Task, Violation
from games.simulation.house import HouseFamily
from games.simulation.poker import PokerFamily
from games.tables import pacing


@dataclass
class AllFamily:
    """The house family and the poker family side by side: each step is one
    family's (chosen by the step's generator), the checks are both families'."""

    house: HouseFamily = field(default_factory=HouseFamily)
    poker: PokerFamily = field(default_factory=PokerFamily)
    name: str = "all"
    plant_account_kind: str = "poker_seat"
    write_points: list[tuple[str, str]] = field(init=False)

    def __post_init__(self) -> None:
        self.write_points = self.house.write_points + self.poker.write_points

    @property
    def parts(self) -> tuple[Family, Family]:
        return (self.house, self.poker)

    def fresh(self) -> AllFamily:
        return AllFamily(self.house.fresh(), self.poker.fresh())

    def forget(self) -> None:
        for part in self.parts:
            part.forget()

    def replacements(self, sim: Simulator) -> dict[tuple[str, str], Any]:
        return self.house.replacements(sim) | self.poker.replacements(sim)

    def setup(self, sim: Simulator) -> None:
        for part in self.parts:
            part.setup(sim)

    def pick(self, sim: Simulator) -> Family:
        return self.house if sim.rng.random() < 0.5 else self.poker

    def client_step(self, sim: Simulator) -> None:
        self.pick(sim).client_step(sim)

    def operator_step(self, sim: Simulator) -> None:
        self.pick(sim).operator_step(sim)

    def owner(self, task: Task) -> Family:
        if task.name == pacing.HOUSE_ADVANCE:
            return self.house
        if task.name == pacing.POKER_ADVANCE:
            return self.poker
        raise ValueError(f"unknown task {task.name}")

    def task_label(self, task: Task) -> str:
        return "sweep" if task.name == SWEEP else self.owner(task).task_label(task)

    def run_task(self, sim: Simulator, task: Task) -> Any:
        if task.name != SWEEP:
            return self.owner(task).run_task(sim, task)
        return "; ".join(f"{part.name} {part.run_task(sim, task)}" for part in self.parts)

    def on_tick(self, sim: Simulator) -> None:
        for part in self.parts:
            part.on_tick(sim)

    def drain(self, sim: Simulator) -> None:
        for part in self.parts:
            part.drain(sim)

    def fingerprint(self) -> tuple[Any, ...]:
        return tuple(part.fingerprint() for part in self.parts)

    def check(self, sim: Simulator, *, full: bool) -> list[tuple[str, str]]:
        return [found for part in self.parts for found in part.check(sim, full=full)]

    def counts(self) -> dict[str, int]:
        house, poker = self.house.counts(), self.poker.counts()
        return {"rounds": house["rounds"] + poker["rounds"], "hands": house["hands"] + poker["hands"]}

    def evidence(self, sim: Simulator, violation: Violation) -> list[str]:
        return [line for part in self.parts for line in part.evidence(sim, violation)]


#: ``--family``'s choices.
FAMILIES: dict[str, Callable[[], Family]] = {"house": HouseFamily, "poker": PokerFamily, "all": AllFamily}
