"""A deterministic driver that plays a tournament to the end with bots, through
the real services (``bench tournament``, the tests, the ``make run`` demo's
fill-in players). It replaces the wall clock and Celery with its own clock:
round after round it takes one step at every open table of the tournament
(the dealer's step when the table's deadline has come, a bot's action when a
bot is to act, the tournament's step when the table waits), and each round
moves the clock on by ``seconds_per_round`` (or reads ``clock``, e.g. the wall
clock when the bots' commands go through the API, which stamps them with it). Nothing is enqueued meanwhile
(``games.tables.pacing.suppress_scheduling``).

Bots decide from the hand's state with a seeded random source, loosely like
people: check when they may, call a bet half the time and fold otherwise, go
all-in now and then (``aggression / 4``), and call an all-in with
``aggression / 2``. Seats of players
who are not bots (``bots`` given) are left to their players: the driver only
runs the dealer's step at their deadline, as the dealer would.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from games.cards.shuffle import RandomSource
from games.poker import services
from games.poker.engine.hand import HandState, LegalActions, legal_actions
from games.poker.models import PokerHand, PokerTable
from games.poker.tournament import services as tournament_services
from games.poker.tournament.models import Tournament, TournamentState
from games.tables import pacing


def bot_action(state: HandState, legal: LegalActions, roll: float, aggression: float) -> str:
    """A bot's action, loosely like people, from a uniform ``roll`` in [0, 1): check
    when it may (all-in with ``aggression / 4``), call a bet half the time and fold
    otherwise (all-in with ``aggression / 4``), call an all-in with ``aggression / 2``."""
    me = state.players[state.positions[legal.seat]]
    if legal.call_amount == 0:
        return "all_in" if roll < aggression / 4 and legal.can_raise else "check"
    if legal.call_amount >= me.stack:  # calling puts them all in
        return "call" if roll < aggression / 2 else "fold"
    if roll < aggression / 4 and legal.can_raise:
        return "all_in"
    return "call" if roll < 0.5 else "fold"


@dataclass
class DriveReport:
    tournament_id: int
    hands: int = 0
    actions: int = 0
    steps: int = 0
    rounds: int = 0
    clock: datetime | None = None
    finished: bool = False
    retried: int = 0  # steps whose transaction was a deadlock's victim, taken again (``workers``)
    table_steps: int = 0  # a worker's table steps that changed something: a deal, an action, a timeout (``workers``)
    state: str = ""
    errors: list[str] = field(default_factory=list)


class TournamentDriver:
    """Plays tournament ``tournament_id`` from ``start`` (its own clock)."""

    def __init__(
        self,
        tournament_id: int,
        *,
        start: datetime,
        seed: int = 1,
        aggression: float = 0.3,
        seconds_per_round: float = 3.0,
        bots: Collection[int] | None = None,
        rng_source: RandomSource | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.tournament_id = tournament_id
        self.now = start
        self.random = random.Random(seed)
        self.aggression = aggression
        self.step_seconds = timedelta(seconds=seconds_per_round)
        self.bots = None if bots is None else set(bots)
        self.rng_source = rng_source
        self.clock = clock
        self.report = DriveReport(tournament_id)

    def is_bot(self, player_id: int) -> bool:
        return self.bots is None or player_id in self.bots

    def decide(self, table: PokerTable, hand: PokerHand) -> tuple[int, str] | None:
        """The player to act and the bot's action at ``table`` (``None``: the actor is not a bot)."""
        state, _ = services.hand_state(hand)
        if state is None:
            return None
        legal = legal_actions(state)
        if legal is None:
            return None
        player = int(state.players[state.positions[legal.seat]].player_id)
        if not self.is_bot(player):
            return None
        return player, bot_action(state, legal, self.random.random(), self.aggression)

    def submit(self, table: PokerTable, player: int, action: str, key: str) -> None:
        """The bot's command (a subclass may send it another way, e.g. through the REST API)."""
        services.act(table_id=table.pk, player_id=player, action=action, idempotency_key=key, now=self.now)

    def table_step(self, table: PokerTable) -> bool:
        """One step at ``table``; True if something happened."""
        if table.phase == services.BETWEEN:
            if table.deadline is not None and table.deadline > self.now:
                return False
            result = services.advance_table(
                table_id=table.pk, expected_seq=table.phase_seq, now=self.now, rng=self.rng_source
            )
            if result is not None and result.phase == services.HAND:
                self.report.hands += 1
            return result is not None
        if table.phase == services.HAND:
            hand = PokerHand.objects.get(hand_id=table.current_hand_id)
            if table.deadline is not None and table.deadline <= self.now:
                moved = services.advance_table(table_id=table.pk, expected_seq=table.phase_seq, now=self.now)
                return moved is not None
            decision = self.decide(table, hand)
            if decision is None:
                return False
            player, action = decision
            self.submit(table, player, action, f"drive:{hand.hand_id}:{hand.stream_version}")
            self.report.actions += 1
            return True
        if table.phase in (services.WAITING, services.IDLE):
            stepped = self.tournament_step()
            self.report.steps += stepped
            return stepped
        return False

    def tournament_step(self) -> bool:
        """The tournament's step at the driver's clock; True if the tournament is running."""
        step = tournament_services.advance_tournament(
            tournament_id=self.tournament_id, now=self.now, rng=self.rng_source
        )
        return step is not None

    def run(self, *, max_rounds: int = 1_000_000, on_round: Callable[[DriveReport], None] | None = None) -> DriveReport:
        """Rounds until the tournament is over (or ``max_rounds``)."""
        with pacing.suppress_scheduling():
            for _ in range(max_rounds):
                state = Tournament.objects.filter(pk=self.tournament_id).values_list("state", flat=True).get()
                if state not in (TournamentState.RUNNING,):
                    break
                tables = list(PokerTable.objects.filter(tournament_id=self.tournament_id, is_open=True).order_by("pk"))
                for table in tables:
                    self.table_step(table)
                self.report.rounds += 1
                self.now = self.clock() if self.clock is not None else self.now + self.step_seconds
                if on_round is not None:
                    on_round(self.report)
        tournament = Tournament.objects.get(pk=self.tournament_id)
        self.report.state = tournament.state
        self.report.finished = tournament.state == TournamentState.FINISHED
        self.report.clock = self.now
        return self.report
