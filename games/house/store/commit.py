"""One round step committed: its events appended to their streams with its
money legs (one ledger batch) and the projections brought up to date, in the
caller's transaction.

Shared by the dealer's steps (``games.house.services.rounds``: the table and
round rows locked for update) and the player commands
(``games.house.services.bets`` and ``.seats``: the round row share-locked and
the player's own row locked for update by ``games.house.store.commands``).
The round and player rows are projections of the events
(``games.house.projectors``): ``commit`` applies the events it appends with
the projectors, whose player rows are derived in one place
(``games.house.store.rows.project_player``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import ParamSpec
from uuid import UUID

from django.db import connection
from django.db.models import F

from games.house.models import HouseRound, HouseTable
from games.house.projectors import HouseRoundProjector, PlayerRoundProjector
from games.house.round.events import ROUND_EVENT_TYPES, Event
from games.house.round.state import PlayerState, RoundState, apply_round
from games.house.store.rows import Row
from games.house.store.streams import iso, player_stream, round_stream
from ledger.services import (
    EventRef,
    HoldOpening,
    HoldSettlement,
    NewEvent,
    PreparedBatch,
    StreamAppend,
    TransferSpec,
    append_events,
    open_hold,
    prepare_batch,
    settle_prepared,
)
from ledger.services.events import RecordedEvent, append_in_cursor
from ledger.services.postings import pipelined
from ledger.services.projectors import events_of
from ledger.upcasting import CURRENT_VERSIONS

P = ParamSpec("P")


@dataclass
class Money:
    """Ledger legs for one commit (see ``ledger.services.batch``)."""

    open_holds: list[tuple[str, int, int, int, int, Event]] = field(default_factory=list)  # hold, src, esc, dst, amt
    settle_holds: list[tuple[str, int, Event]] = field(default_factory=list)  # hold, post amount, cause
    transfers: list[tuple[int, int, int, str, Event]] = field(default_factory=list)  # debit, credit, amt, kind

    def empty(self) -> bool:
        return not (self.open_holds or self.settle_holds or self.transfers)


@dataclass(frozen=True)
class Staged:
    """A round step folded in memory (``stage``), its writes not yet sent:
    the new round state, the touched players' new states, and ``write``, which
    appends the events with their money and writes the projections."""

    state: RoundState
    players: dict[int, PlayerState]
    write: Callable[[], None]
    #: ``write`` is one statement that may be pipelined (one stream, at most one
    #: hold opened); otherwise a ledger batch, whose COPY a pipeline cannot carry.
    pipelinable: bool = False


def stage(
    *,
    round_row: HouseRound,
    state: RoundState,
    players: Mapping[int, Row],
    events: Sequence[Event],
    money: Money,
    idempotency_key: str,
    actor: str,
    now: datetime,
    project_players: bool = True,
    states: Mapping[int, PlayerState] | None = None,
    head_hashes: Mapping[int, str] | None = None,
) -> Staged:
    """``commit``'s fold, nothing written yet: the new round and touched player
    states, the player rows in ``players`` projected in memory, and ``write``,
    which appends ``events`` to their streams with the money legs and writes
    the projections (the caller writes the player rows itself when
    ``project_players`` is false). A player command sends its own last write
    first and then calls ``write`` in the same pipeline: one round trip for
    both. ``states``: the players' current states when the caller has them
    already (the same as their rows' ``state``), so thousands of rows are not
    parsed again. ``head_hashes``: player streams' head hashes (at their rows'
    ``stream_version``) read in this transaction, so the ledger does not read
    them again. ``write`` runs in the caller's transaction, the round row
    locked (module docstring): a refusal (a stale stream version, the
    ledger's) rolls the whole step back."""
    new_state = state
    round_events: list[Event] = []
    by_player: dict[int, list[Event]] = {}
    for event in events:
        if event.stream == "round":
            round_events.append(event)
            new_state = apply_round(new_state, event)
        else:
            by_player.setdefault(int(event.stream), []).append(event)
    refs: dict[int, EventRef] = {}
    metadata = {"actor": actor, "correlation_id": round_row.round_id, "idempotency_key": idempotency_key,
                "at": iso(now)}  # fmt: skip
    appends: list[StreamAppend] = []
    if round_events:
        stream = round_stream(round_row.round_id)
        appends.append(StreamAppend(stream, state.version, [_new_event(e) for e in round_events], metadata))
        for i, event in enumerate(round_events):
            refs[id(event)] = EventRef(stream, state.version + 1 + i)
    recorded: list[RecordedEvent] = []
    for pid, player_events in by_player.items():
        row = players[pid]
        stream = player_stream(round_row.round_id, pid)
        head_hash = head_hashes.get(pid) if head_hashes is not None else None
        append = StreamAppend(stream, row.stream_version, [_new_event(e) for e in player_events], metadata, head_hash)
        appends.append(append)
        recorded += events_of(stream_id=stream, first_version=row.stream_version + 1, events=append.events,
                              metadata=metadata, at=now)  # fmt: skip
        for i, event in enumerate(player_events):
            refs[id(event)] = EventRef(stream, row.stream_version + 1 + i)
    # The player rows are projected here (the projector's fold, in memory) and
    # written with the append: below, or by the caller (``project_players`` false).
    projector = PlayerRoundProjector(round_row=round_row, rows=players, states=states)
    folded = projector.fold(recorded) if recorded else {}
    new_players = {player.player_id: player for _, player in folded.values()}
    rows = [row for row, _ in folded.values()]

    def write() -> None:
        _write(round_row=round_row, state=state, appends=appends, money=money, refs=refs, rows=rows,
               projector=projector, round_events=round_events, metadata=metadata, idempotency_key=idempotency_key,
               now=now, project_players=project_players)  # fmt: skip

    one_statement = len(appends) == 1 and not (money.settle_holds or money.transfers or len(money.open_holds) > 1)
    return Staged(new_state, new_players, write, one_statement and not round_events)


def _then_write(
    stage_step: Callable[P, Staged],
) -> Callable[P, tuple[RoundState, dict[int, PlayerState]]]:
    def commit(*args: P.args, **kwargs: P.kwargs) -> tuple[RoundState, dict[int, PlayerState]]:
        """Append ``events`` to their streams with the money legs (one ledger
        statement or batch) and update the projections (the caller writes the
        player rows itself when ``project_players`` is false): ``stage``'s
        arguments, staged and written at once. Returns the new round and the
        touched player states."""
        staged = stage_step(*args, **kwargs)
        staged.write()
        return staged.state, staged.players

    return commit


commit = _then_write(stage)


def _write(
    *,
    round_row: HouseRound,
    state: RoundState,
    appends: list[StreamAppend],
    money: Money,
    refs: Mapping[int, EventRef],
    rows: list[Row],
    projector: PlayerRoundProjector,
    round_events: list[Event],
    metadata: dict[str, str],
    idempotency_key: str,
    now: datetime,
    project_players: bool,
) -> None:
    """``stage``'s writes (see there)."""
    if not appends and money.empty():
        return
    single = len(appends) == 1 and not (money.settle_holds or money.transfers)
    if single and len(money.open_holds) == 1:
        # One stake: the ledger's one-statement bet path (event, hold and transfer together).
        hold, source, escrow, destination, amount, _ = money.open_holds[0]
        open_hold(source=source, escrow=escrow, destination=destination, amount=amount,
                  currency=round_row.currency, idempotency_key=f"{idempotency_key}:ledger", cause=appends[0],
                  hold_id=UUID(hold))  # fmt: skip
    elif single and not money.open_holds and appends[0].head_hash is not None:
        # A player's events without money (a check, a fold): the head hash was
        # read with the command's context, so the stream's head is not read again.
        with connection.cursor() as cursor:
            append_in_cursor(cursor, appends[0])
    elif single and not money.open_holds:
        append_events(stream_id=appends[0].stream_id, expected_version=appends[0].expected_version,
                      events=appends[0].events, metadata=appends[0].metadata)  # fmt: skip
    elif project_players:
        # The projection's UPDATE runs on the server while Python encodes the
        # batch (same transaction: a refused batch rolls both back).
        with pipelined():
            projector.write(rows)
            batch = _prepare(round_row, appends, money, refs, idempotency_key)
        settle_prepared(batch)
        project_players = False  # the rows are written
    else:
        settle_prepared(_prepare(round_row, appends, money, refs, idempotency_key))
    if project_players:
        projector.write(rows)
    if round_events:
        stream = round_stream(round_row.round_id)
        HouseRoundProjector(row=round_row, state=state).apply_many(
            events_of(stream_id=stream, first_version=state.version + 1, events=appends[0].events,
                      metadata=metadata, at=now)
        )  # fmt: skip
        # Realtime ordering (not a projection): the table's count of public round events.
        public = sum(1 for e in round_events if e.type in ROUND_EVENT_TYPES)
        HouseTable.objects.filter(pk=round_row.table_id).update(public_seq=F("public_seq") + public)


def _new_event(event: Event) -> NewEvent:
    """The ledger's event for a domain event, at its type's current schema version."""
    return NewEvent(event.type, event.data, CURRENT_VERSIONS.get(event.type, 1))


def _prepare(
    round_row: HouseRound,
    appends: list[StreamAppend],
    money: Money,
    refs: Mapping[int, EventRef],
    idempotency_key: str,
) -> PreparedBatch:
    return prepare_batch(
        idempotency_key=f"{idempotency_key}:ledger",
        currency=round_row.currency,
        appends=appends,
        open_holds=[
            HoldOpening(UUID(h), src, esc, dst, amt, refs[id(cause)])
            for h, src, esc, dst, amt, cause in money.open_holds
        ],
        holds=[HoldSettlement(UUID(h), amt, refs[id(cause)]) for h, amt, cause in money.settle_holds],
        transfers=[TransferSpec(d, c, amt, refs[id(cause)], kind) for d, c, amt, kind, cause in money.transfers],
    )
