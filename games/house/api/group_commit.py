"""Group commit for REST's request threads: the player commands that arrive
together at a table, on the threads of one process, are written as one
``run_commands`` batch (docs/rounds.md, "Group commit"). The websocket's
asyncio batcher (``games.house.realtime.batcher``) does the same for the
event loop; this is its counterpart for threads (``casino.http`` runs each
HTTP request on a pool thread).

Leader and followers, as databases group their commits: the first thread to
arrive at an idle table leads. It takes everything queued at the table (up to
``CASINO_GROUP_COMMIT_MAX``), writes it on its own database connection in one
transaction, hands each waiting thread its own result, and goes on until its
own command is answered; then it passes the lead to the oldest waiting thread,
if any, and returns. No thread leads for longer than its own command needs,
and no command waits for a timer: a lone request is a batch of one (the single
path's one-statement bet).

Each command still gets exactly the result the single service would give
(``run_commands``' contract); a batch's moment is the server clock when the
leader takes it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from django.conf import settings
from django.utils import timezone

from casino import metrics
from games.house.services.group import CommandResult, PlayerCommand, run_commands


@dataclass
class _Entry:
    command: PlayerCommand
    wake: threading.Event = field(default_factory=threading.Event)
    finished: bool = False
    lead: bool = False
    result: CommandResult | None = None
    error: BaseException | None = None


@dataclass
class _Table:
    queue: list[_Entry] = field(default_factory=list)


_lock = threading.Lock()
_tables: dict[int, _Table] = {}  # tables with a leader; guarded by ``_lock``


@dataclass
class Stats:
    """Batches written and commands in them since the process started (or ``reset``)."""

    batches: int = 0
    commands: int = 0

    def reset(self) -> None:
        self.batches = self.commands = 0


stats = Stats()


def run_grouped(*, table_id: int, command: PlayerCommand) -> CommandResult:
    """Run ``command`` at ``table_id`` together with whatever other threads of
    this process submit there meanwhile; its own result (a ``DomainError``
    refusal is returned, as ``run_commands`` returns it). A database failure
    of the batch is raised in every thread of that batch."""
    entry = _Entry(command)
    with _lock:
        table = _tables.get(table_id)
        if table is None:
            table = _tables[table_id] = _Table()
            entry.lead = True
        table.queue.append(entry)
    while not entry.finished:
        if entry.lead:
            _lead(table_id, table, entry)
        else:
            entry.wake.wait()
            entry.wake.clear()
    if entry.error is not None:
        raise entry.error
    assert entry.result is not None
    return entry.result


def _lead(table_id: int, table: _Table, me: _Entry) -> None:
    """Write batches until ``me`` is answered, then pass the lead on (or end it)."""
    limit = max(1, settings.CASINO_GROUP_COMMIT_MAX)
    while not me.finished:
        with _lock:
            batch, table.queue[:] = table.queue[:limit], table.queue[limit:]
            stats.batches += 1
            stats.commands += len(batch)
        metrics.group_commit(interface="rest", size=len(batch))
        failure: BaseException | None = None
        try:
            results = run_commands(table_id=table_id, commands=[e.command for e in batch], now=timezone.now())
        except BaseException as exc:  # every waiter of the batch gets the failure
            results, failure = [], exc
        for index, waiting in enumerate(batch):
            waiting.result = results[index] if failure is None else None
            waiting.error = failure
            waiting.finished = True
            if waiting is not me:
                waiting.wake.set()
    with _lock:
        if table.queue:
            successor = table.queue[0]
            successor.lead = True
            successor.wake.set()
        else:
            del _tables[table_id]
