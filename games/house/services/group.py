"""Group commit: the player commands that arrive together at a table, written
in one transaction with one database round trip per step, not per command.

``run_commands`` takes typed commands (``PlaceChip``, ``UndoBet``,
``ClearBets``, ``RepeatBets``, ``DoubleBets``, ``MakeDecision``) and answers
each with its own result, in the commands' order: the ``BetResult`` or
``DecisionResult`` the single service (``games.house.services.bets``) would
have returned, or the ``DomainError`` it would have raised. A refused command
(balance, limits, window closed, responsible gaming, a reused key...) writes
nothing, and its idempotency claim is released, so its key stays usable; the
others proceed. The same decisions as the single path: the same ``decide_*``
domain calls (``bets.chip_decider`` and the others), ``check_room`` and
``assert_may_wager`` on the same state.

PostgreSQL, per batch: one statement claims every key and reads every
command's context (``store.batches.read_commands``), Python decides each command in
order, then the writes. When a run's ledger part is appends onto the heads the
contexts read plus hold openings (chips, decisions), all of it and every
projection row, stored result and released claim go in ONE statement
(``store.batches.saving_commands_and_ledger`` with
``ledger.services.small_holds.hold_batch_writes``: ``settle_prepared``'s rows and
refusals). Otherwise (chips removed: holds voided) one ledger batch
(``prepare_batch``/``settle_prepared``: every event, hold, transfer and statement
line) and one statement for every projection row, stored result and released
claim (``store.batches.saving_commands``).
Per-seat tables add one read of seats and bettors; decisions one read of the
table's tick. A player's commands apply in order on their evolving state: a
batch is cut into consecutive runs in which each player and each key appears
once, written one after the other in the same transaction, so the second chip
reads the balance the first left.

If the database refuses the batch's writes (an overdraft from a concurrent
withdrawal, a stream moved on, a deadlock or serialization failure, a
trigger), the whole transaction is rolled back and each command runs alone
through its single service, so each still gets its own correct answer.
SQLite (the embedded default): the single services one after another, each
in a savepoint. Ordering, idempotency, the hash chains and no-overdraft hold
exactly as on the single path: the ledger checks them in the same places.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar
from uuid import UUID

from django.db import DatabaseError, connection, transaction

from casino.errors import DomainError
from casino.responsible_gaming import assert_may_wager, lock_for_wagers, note_wager
from games.house.models import HouseRound, PlayerRound
from games.house.projectors import PlayerRoundProjector
from games.house.round.commands import (
    check_room,
    decide_decision,
    limit_exempt,
    reserve_after,
)
from games.house.round.errors import NotInRound, NotSeated, WrongPhase
from games.house.round.events import BET_PLACED, BetPlaced, BetRemoved, DecisionMade, Event
from games.house.round.state import PlayerState, RoundState, apply_player, config_of
from games.house.services.bets import (
    BetResult,
    Decide,
    DecisionResult,
    chip_decider,
    clear_bets,
    clear_decider,
    decision_from_stored,
    decision_stored,
    double_bets,
    double_decider,
    make_decision,
    place_chip,
    previous_bets,
    repeat_bets,
    repeat_decider,
    undo_bet,
    undo_decider,
)
from games.house.services.rounds import TableTick
from games.house.store.batches import (
    CommandRead,
    CommandRequest,
    read_commands,
    saving_commands,
    saving_commands_and_ledger,
    seats_and_bettors,
    ticks_and_waiting,
)
from games.house.store.cache import remember_players
from games.house.store.commands import CommandContext, accounts_of
from games.house.store.streams import iso, player_stream
from ledger.services import (
    EventRef,
    HoldOpening,
    HoldSettlement,
    NewEvent,
    PreparedBatch,
    StreamAppend,
    prepare_batch,
    settle_prepared,
)
from ledger.services.projectors import events_of
from ledger.services.small_holds import hold_batch_writes
from ledger.upcasting import CURRENT_VERSIONS

# --- the commands ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Command:
    """What every player command carries: the player, the idempotency key, the
    service's command name (``command``), and a request without fields."""

    player_id: int
    idempotency_key: str
    command: ClassVar[str]

    def request(self) -> dict[str, Any]:
        """The request as the single path hashes it under the key (``CommandRequest``)."""
        return {}


@dataclass(frozen=True)
class PlaceChip(_Command):
    """``place_chip``: add ``amount`` to ``spot``."""

    spot: str
    amount: int
    command = "house.place_chip"

    def request(self) -> dict[str, Any]:
        return {"spot": self.spot, "amount": self.amount}


@dataclass(frozen=True)
class UndoBet(_Command):
    """``undo_bet``: remove the last chip placed."""

    command = "house.undo_bet"


@dataclass(frozen=True)
class ClearBets(_Command):
    """``clear_bets``: remove every chip."""

    command = "house.clear_bets"


@dataclass(frozen=True)
class RepeatBets(_Command):
    """``repeat_bets``: place the previous round's bets again."""

    command = "house.repeat_bets"


@dataclass(frozen=True)
class DoubleBets(_Command):
    """``double_bets``: double every current bet once per round."""

    command = "house.double_bets"


@dataclass(frozen=True)
class MakeDecision(_Command):
    """``make_decision``: take ``option`` at the open decision point."""

    option: str
    command = "house.make_decision"

    def request(self) -> dict[str, Any]:
        return {"option": self.option}


PlayerCommand = PlaceChip | UndoBet | ClearBets | RepeatBets | DoubleBets | MakeDecision
CommandResult = BetResult | DecisionResult | DomainError


def run_commands(*, table_id: int, commands: Sequence[PlayerCommand], now: datetime) -> list[CommandResult]:
    """Run ``commands`` at the table as one group commit (module docstring):
    one result per command, in order; a ``DomainError`` is returned, not
    raised. Other exceptions (the database gone) propagate."""
    if not commands:
        return []
    if len(commands) == 1:
        # One command: the single path's one-statement bet is cheaper than a ledger batch.
        return [run_one(table_id=table_id, command=commands[0], now=now)]
    if connection.vendor != "postgresql":
        with transaction.atomic():
            return [run_one(table_id=table_id, command=c, now=now) for c in commands]
    try:
        with transaction.atomic():
            return _run_batch(table_id, commands, now)
    except (DomainError, DatabaseError):
        # The database refused the batch's writes (the commands' own refusals
        # are answers, not exceptions): everything rolled back; each command
        # alone gets the answer the single path gives.
        return [run_one(table_id=table_id, command=c, now=now) for c in commands]


def run_one(*, table_id: int, command: PlayerCommand, now: datetime) -> CommandResult:
    """``command`` through its single service, which runs in a transaction (a
    savepoint when nested) of its own: its refusal rolls back only itself."""
    try:
        return _single(table_id, command, now)
    except DomainError as error:
        return error


def _single(table_id: int, c: PlayerCommand, now: datetime) -> BetResult | DecisionResult:
    common: dict[str, Any] = {"table_id": table_id, "player_id": c.player_id, "idempotency_key": c.idempotency_key,
                              "now": now}  # fmt: skip
    match c:
        case PlaceChip():
            return place_chip(spot=c.spot, amount=c.amount, **common)
        case UndoBet():
            return undo_bet(**common)
        case ClearBets():
            return clear_bets(**common)
        case RepeatBets():
            return repeat_bets(**common)
        case DoubleBets():
            return double_bets(**common)
        case MakeDecision():
            return make_decision(option=c.option, **common)


# --- the batched path (PostgreSQL) ----------------------------------------------------------------


def _runs(commands: Sequence[PlayerCommand]) -> list[list[int]]:
    """Consecutive runs of command indexes in which each player and each key
    appears once: a later command of a player (or a retry of a key) starts the
    next run, which reads what the earlier one wrote."""
    runs: list[list[int]] = []
    players: set[int] = set()
    keys: set[str] = set()
    for i, c in enumerate(commands):
        if not runs or c.player_id in players or c.idempotency_key in keys:
            runs.append([])
            players, keys = set(), set()
        runs[-1].append(i)
        players.add(c.player_id)
        keys.add(c.idempotency_key)
    return runs


def _run_batch(table_id: int, commands: Sequence[PlayerCommand], now: datetime) -> list[CommandResult]:
    results: list[CommandResult | None] = [None] * len(commands)
    for run in _runs(commands):
        _Run(table_id, now).run([(i, commands[i]) for i in run], results)
    assert all(r is not None for r in results)
    return [r for r in results if r is not None]


@dataclass
class _Decided:
    """An accepted command's writes."""

    events: list[Event]
    opened: list[tuple[str, int, Event]]  # (hold id, amount, cause) of each stake
    settled: list[tuple[str, Event]]  # (hold id, cause) of each hold voided (chips removed)
    before: PlayerState
    after: PlayerState | None


@dataclass
class _Run:
    """One run of a batch: distinct players, distinct keys."""

    table_id: int
    now: datetime
    appends: list[StreamAppend] = field(default_factory=list)
    opens: list[HoldOpening] = field(default_factory=list)
    settles: list[HoldSettlement] = field(default_factory=list)
    rows: list[tuple[PlayerRound, PlayerState]] = field(default_factory=list)
    stored: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    released: list[str] = field(default_factory=list)
    # Per-seat rounds: seated players (locked) and players with bets, read once per run.
    seats: tuple[set[int], set[int]] | None = None
    stakes: dict[int, int] = field(default_factory=dict)  # each player's stake after the run's accepted commands
    deciders: list[int] = field(default_factory=list)
    # Decisions waiting for the table's tick: (command index, stored slot, command, result without tick,
    # street, players not to count).
    decisions: list[tuple[int, int, MakeDecision, DecisionResult, str, list[int]]] = field(default_factory=list)
    round_row: HouseRound | None = None
    currency: str = ""
    index: int = 0  # the command being decided
    # The accepted commands' new player states, remembered once the transaction commits.
    remembered: list[tuple[PlayerState, object]] = field(default_factory=list)

    def run(self, items: list[tuple[int, PlayerCommand]], results: list[CommandResult | None]) -> None:
        requests = [CommandRequest(c.command, c.player_id, c.idempotency_key, c.request()) for _, c in items]
        reads = read_commands(table_id=self.table_id, requests=requests, now=self.now)
        players = [c.player_id for _, c in items]
        self.lock_limited(reads)
        for (i, c), read in zip(items, reads, strict=True):
            if read.error is not None:
                results[i] = read.error  # nothing was claimed
            elif read.retry:
                first = read.first
                results[i] = decision_from_stored(first) if isinstance(c, MakeDecision) else BetResult(**first)
            else:
                try:
                    self.index = i
                    results[i] = self.decide(c, read, players)
                except DomainError as error:
                    results[i] = error
                    self.released.append(c.idempotency_key)
        self.write(results)

    def lock_limited(self, reads: Sequence[CommandRead]) -> None:
        """The per-player lock of responsible gaming for every player of the run
        a loss limit limits, taken at once in player-id order before any command
        is decided (``lock_for_wagers``: one statement, none when nobody has a
        loss limit); their commands are then checked on the rows read under it."""
        contexts = {read.context.row.player_id: read.context for read in reads
                    if read.context is not None and not read.retry and read.error is None}  # fmt: skip
        if not contexts:
            return
        currency = next(iter(contexts.values())).round_row.currency
        locked = lock_for_wagers(settings={p: c.settings for p, c in contexts.items()}, currency=currency,
                                 now=self.now)  # fmt: skip
        for player, context in contexts.items():
            context.settings = locked[player]

    def decide(self, c: PlayerCommand, read: CommandRead, players: list[int]) -> BetResult | DecisionResult:
        context = read.context
        if context is None:
            raise WrongPhase("no round at this table", table_id=self.table_id)
        if isinstance(c, MakeDecision):
            return self.decision(c, context)
        if not read.seated:
            raise NotSeated(table_id=self.table_id)
        state, accounts = context.state, context.accounts
        player = context.player_state(c.player_id)
        outcome = _decider(self.table_id, c, context, self.now)(state, player, accounts.balance)
        if any(event.type == BET_PLACED for event in outcome.events):
            self.check_room(c.player_id, context, state, player, players)
        balance, changed = accounts.balance, None
        if outcome.events:
            decided = _bet_writes(outcome.events, player)
            changed = self.accept(c, context, decided)
            balance += player.staked - changed.staked
            player = changed
            self.stakes[c.player_id] = changed.staked
        result = BetResult(context.round_row.round_id, player.totals(), outcome.capped, balance, list(outcome.doubled))
        if changed is not None:
            self.rows.append((context.row, changed))
        self.stored.append((c.idempotency_key, result.as_json()))
        return result

    def check_room(
        self, player_id: int, context: CommandContext, state: RoundState, player: PlayerState, players: list[int]
    ) -> None:
        """``bets._check_room`` for the run: seats and bettors read (and the seats
        locked) once, with the stakes of the run's earlier accepted commands."""
        if config_of(state).hand_mode != "per_seat":
            return
        if self.seats is None:
            self.seats = seats_and_bettors(table_id=self.table_id, round_row=context.round_row, player_ids=players)
        seated, bettors = self.seats
        if player_id not in seated:
            raise NotSeated(table_id=self.table_id)
        # The bettors as read, with the stakes this run changed (not written yet).
        holding = {p for p in bettors | self.stakes.keys() if self.stakes.get(p, 1) > 0}
        check_room(state, player, others=len(holding - {player_id}))

    def accept(self, c: PlayerCommand, context: CommandContext, decided: _Decided) -> PlayerState:
        """Check responsible gaming for the new stakes, then queue the command's
        writes; the player's new state (``decided.after``, as the projector folded it)."""
        round_row, accounts = context.round_row, context.accounts
        new_stake = sum(amount for _, amount, _ in decided.opened)
        if new_stake:
            # Responsible gaming refuses new stakes (a chip's with room for the
            # round's smallest forced decision; that decision itself is exempt:
            # ``bets.make_decision``); removing chips is always allowed.
            state, before = context.state, decided.before
            if not (isinstance(c, MakeDecision) and limit_exempt(state, before, new_stake)):
                reserve = 0 if isinstance(c, MakeDecision) else reserve_after(state, before, decided.events)
                assert_may_wager(player_id=c.player_id, amount=new_stake, currency=round_row.currency, now=self.now,
                                 settings=context.settings, reserve=reserve, excluding=round_row.round_id)  # fmt: skip
            note_wager(player_id=c.player_id, currency=round_row.currency, now=self.now, settings=context.settings)
        if not (accounts.wallet and accounts.held and accounts.house):
            # First stake of this player (or at this table) in this currency:
            # the accounts are opened now, for an accepted command only.
            accounts = accounts_of(player_id=c.player_id, table_id=self.table_id, currency=round_row.currency)
        stream = player_stream(round_row.round_id, c.player_id)
        version = context.row.stream_version
        metadata = {"actor": f"user:{c.player_id}", "correlation_id": round_row.round_id,
                    "idempotency_key": c.idempotency_key, "at": iso(self.now)}  # fmt: skip
        new_events = [NewEvent(e.type, e.data, CURRENT_VERSIONS.get(e.type, 1)) for e in decided.events]
        self.appends.append(StreamAppend(stream, version, new_events, metadata, context.head_hash))
        # The player's row, projected by its projector from these events (written by ``saving_commands``).
        folded = PlayerRoundProjector(round_row=round_row, rows={c.player_id: context.row},
                                      states={c.player_id: decided.before}).fold(
            events_of(stream_id=stream, first_version=version + 1, events=new_events, metadata=metadata, at=self.now)
        )  # fmt: skip
        refs = {id(e): EventRef(stream, version + 1 + n) for n, e in enumerate(decided.events)}
        for hold, amount, event in decided.opened:
            self.opens.append(
                HoldOpening(UUID(hold), accounts.wallet, accounts.held, accounts.house, amount, refs[id(event)])
            )
        self.settles += [HoldSettlement(UUID(hold), 0, refs[id(event)]) for hold, event in decided.settled]
        assert decided.after is not None
        # The projector's state (equal to ``decided.after``) is the one saved and
        # remembered: it carries the folds the projection computed
        # (``PlayerState.totals``, ``chip_rows``, ``chip_texts``), so the save and
        # the player's next command start from them.
        projected = next(iter(folded.values()), (None, decided.after))[1]
        self.remembered.append((projected, context.incarnation))
        self.round_row, self.currency = round_row, round_row.currency
        return projected

    def decision(self, c: MakeDecision, context: CommandContext) -> DecisionResult:
        if context.row.pk is None:
            raise NotInRound()
        state, accounts = context.state, context.accounts
        player = context.player_state(c.player_id)
        hold_id = str(uuid.uuid4())
        events = decide_decision(state, player, option=c.option, balance=accounts.balance, hold_id=hold_id,
                                 now=iso(self.now))  # fmt: skip
        made = DecisionMade.from_data(events[0].data)
        after = apply_player(player, events[0])
        opened = [(hold_id, made.amount, events[0])] if made.amount else []
        self.rows.append((context.row, self.accept(c, context, _Decided(events, opened, [], player, after))))
        result = DecisionResult(context.round_row.round_id, made.street, made.option, made.amount,
                                accounts.balance - made.amount, False, None)  # fmt: skip
        excluded = [*self.deciders, c.player_id]
        self.deciders.append(c.player_id)
        self.decisions.append((self.index, len(self.stored), c, result, state.phase, excluded))
        self.stored.append((c.idempotency_key, {}))  # filled in once the tick is read
        return result

    def write(self, results: list[CommandResult | None]) -> None:
        """The run's writes: the decisions' tick read first (their stored results
        carry it), then the lean write (the ledger's rows and the saves in one
        statement) when the ledger part allows it; otherwise the save statement
        sent in pipeline mode, so the server runs it while Python encodes the
        ledger batch, then the ledger batch."""
        if self.decisions:
            assert self.round_row is not None
            asked = [(street, excluded) for *_, street, excluded in self.decisions]
            ticks = ticks_and_waiting(table_id=self.table_id, round_row=self.round_row, decisions=asked)
            for (index, slot, c, result, _, _), ((current, phase, seq, deadline), waiting) in zip(
                self.decisions, ticks, strict=True
            ):
                tick = TableTick(self.table_id, current, current, phase, seq, deadline)
                done = DecisionResult(result.round_id, result.street, result.option, result.amount, result.balance,
                                      not waiting, tick)  # fmt: skip
                self.stored[slot] = (c.idempotency_key, decision_stored(done))
                results[index] = done
        batch = lean = None
        if self.appends and not self.settles and connection.vendor == "postgresql":
            # Appends onto heads read with the context and hold openings (chips,
            # decisions): the ledger's rows and the save in one statement.
            batch = self.prepare()
            lean = hold_batch_writes(batch)
        if lean is not None:
            saving_commands_and_ledger(rows=self.rows, results=self.stored, released=self.released, now=self.now,
                                       ledger=lean)  # fmt: skip
        else:
            with saving_commands(rows=self.rows, results=self.stored, released=self.released, now=self.now):
                if self.appends and batch is None:
                    batch = self.prepare()
            if batch is not None:
                settle_prepared(batch)
        if self.round_row is not None:
            remember_players(self.table_id, self.round_row.round_id, self.remembered)

    def prepare(self) -> PreparedBatch:
        """The run's ledger batch, checked and encoded (``prepare_batch``)."""
        return prepare_batch(idempotency_key=f"group:{uuid.uuid4()}:ledger", currency=self.currency,
                             appends=self.appends, holds=self.settles, open_holds=self.opens)  # fmt: skip


def _bet_writes(events: list[Event], player: PlayerState) -> _Decided:
    after = player
    opened: list[tuple[str, int, Event]] = []
    settled: list[tuple[str, Event]] = []
    for event in events:
        after = apply_player(after, event)
        if event.type == BET_PLACED:
            placed = BetPlaced.from_data(event.data)
            opened.append((placed.hold_id, placed.held, event))
        else:
            settled += [(hold, event) for hold in BetRemoved.from_data(event.data).hold_ids]
    return _Decided(events, opened, settled, player, after)


def _decider(table_id: int, c: PlayerCommand, context: CommandContext, now: datetime) -> Decide:
    """The domain call of a bet command, as ``bets`` makes it."""
    match c:
        case PlaceChip():
            return chip_decider(spot=c.spot, amount=c.amount, now=now)
        case UndoBet():
            return undo_decider(now=now)
        case ClearBets():
            return clear_decider(now=now)
        case RepeatBets():
            previous = previous_bets(table_id=table_id, player_id=c.player_id, before_round=context.round_row.round_id)
            return repeat_decider(previous=previous, now=now)
        case DoubleBets():
            return double_decider(now=now)
    raise TypeError(f"not a bet command: {c!r}")
