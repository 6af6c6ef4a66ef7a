"""Per-table group commit for the ASGI process: ``submit`` a player command,
get its own result.

Contract of ``submit(table_id, command, now=None)`` (a coroutine):

* ``command``: a ``games.house.services.group`` command (``PlaceChip``,
  ``UndoBet``, ``ClearBets``, ``RepeatBets``, ``DoubleBets``,
  ``MakeDecision``) carrying the player id and the idempotency key (the
  caller namespaces it as REST does: ``play:<player id>:<client id>``).
* Returns exactly what the single service would: a ``BetResult`` or
  ``DecisionResult``, or the refusal as a ``casino.errors.DomainError``
  instance (returned, not raised). An unexpected failure (the database gone)
  is raised.
* ``now``: the command's moment (default: the server clock when it is
  taken into a batch, as REST reads it when the request is handled).
* Commands of one table are written in the order they were submitted; a
  player's later command sees the earlier one's effects.
* Cancelling the awaiting coroutine does not cancel the command: it may
  still be written (a retry with the same key then returns its result).

How: each table has a queue and, while it has commands, one task. The task
takes everything queued (up to ``CASINO_GROUP_COMMIT_MAX``) and runs
``run_commands`` on a dedicated pool of ``CASINO_GROUP_COMMIT_THREADS``
threads (not Channels' ``database_sync_to_async``, whose one thread the
feed's reads share); while one batch is written the next commands queue up,
so batches form under load with no fixed wait (``CASINO_GROUP_COMMIT_LINGER``
seconds, default 0, may add one). A table's batches run one at a time, so
they never contend for the table's rows with each other.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.conf import settings
from django.db import close_old_connections, connection, connections

from casino import metrics
from games.house.services.group import CommandResult, PlayerCommand, run_commands


@dataclass
class _Pending:
    command: PlayerCommand
    now: datetime | None
    future: asyncio.Future[CommandResult]


@dataclass
class _Table:
    queue: list[_Pending] = field(default_factory=list)
    task: asyncio.Task[None] | None = None


@dataclass
class Batcher:
    """The batcher of one event loop (``batcher()`` gives the running loop's)."""

    max_batch: int = 256
    threads: int = 2
    linger: float = 0.0
    tables: dict[int, _Table] = field(default_factory=dict)
    executor: ThreadPoolExecutor | None = None
    # Figures for tests and monitoring: batches written and commands in them.
    batches: int = 0
    commands: int = 0

    async def submit(self, table_id: int, command: PlayerCommand, now: datetime | None = None) -> CommandResult:
        """Queue ``command`` at its table and wait for its result (module docstring)."""
        loop = asyncio.get_running_loop()
        table = self.tables.setdefault(table_id, _Table())
        pending = _Pending(command, now, loop.create_future())
        table.queue.append(pending)
        if table.task is None:
            table.task = loop.create_task(self._drain(table_id, table))
        return await asyncio.shield(pending.future)

    async def _drain(self, table_id: int, table: _Table) -> None:
        """Write the table's queued commands, batch after batch, until none is left."""
        loop = asyncio.get_running_loop()
        try:
            while table.queue:
                if self.linger > 0:
                    await asyncio.sleep(self.linger)
                batch, table.queue = table.queue[: self.max_batch], table.queue[self.max_batch :]
                try:
                    results = await loop.run_in_executor(self._pool(), _write, table_id, batch)
                except Exception as exc:  # every waiter gets the failure
                    for pending in batch:
                        if not pending.future.done():
                            pending.future.set_exception(exc)
                    continue
                self.batches += 1
                self.commands += len(batch)
                metrics.group_commit(interface="ws", size=len(batch))
                for pending, result in zip(batch, results, strict=True):
                    if not pending.future.done():
                        pending.future.set_result(result)
        finally:
            table.task = None
            if not table.queue:
                self.tables.pop(table_id, None)

    def _pool(self) -> ThreadPoolExecutor:
        if self.executor is None:
            self.executor = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="group-commit")
        return self.executor

    def close(self) -> None:
        """Close the pool threads' database connections and stop the pool."""
        if self.executor is None:
            return
        everyone = threading.Barrier(self.threads)

        def close_own() -> None:
            everyone.wait(timeout=30)  # one task per thread: all wait until all run
            connections.close_all()

        for future in [self.executor.submit(close_own) for _ in range(self.threads)]:
            future.result()
        self.executor.shutdown()
        self.executor = None


def _write(table_id: int, batch: list[_Pending]) -> list[CommandResult]:
    """One batch in a pool thread: stale or broken connections closed first
    and after, as Django's request signals do for the HTTP pool's threads.
    Commands without a moment take the server clock's; consecutive commands
    with the same moment are one ``run_commands`` (in practice all of them).

    The batch's statements go to psycopg directly, past the health check
    Django makes at a request's first cursor, so it is made here: a
    connection the database ended while it sat idle in the pool (a restart, a
    failover) is replaced before the batch, not found by its first statement.
    With this project's backend the check costs no round trip when the
    connection is idle and has nothing to read (``casino.db_backends``)."""
    close_old_connections()
    connection.close_if_health_check_failed()
    try:
        clock = datetime.now(UTC)
        results: list[CommandResult] = []
        start = 0
        while start < len(batch):
            moment = batch[start].now or clock
            end = start + 1
            while end < len(batch) and (batch[end].now or clock) == moment:
                end += 1
            commands = [p.command for p in batch[start:end]]
            results += run_commands(table_id=table_id, commands=commands, now=moment)
            start = end
        return results
    finally:
        close_old_connections()


_BATCHERS: dict[asyncio.AbstractEventLoop, Batcher] = {}


def batcher() -> Batcher:
    """The running event loop's batcher, made with the settings on first use."""
    loop = asyncio.get_running_loop()
    found = _BATCHERS.get(loop)
    if found is None:
        found = _BATCHERS[loop] = Batcher(
            max_batch=max(1, settings.CASINO_GROUP_COMMIT_MAX),
            threads=max(1, settings.CASINO_GROUP_COMMIT_THREADS),
            linger=max(0.0, settings.CASINO_GROUP_COMMIT_LINGER),
        )
    return found


async def submit(table_id: int, command: PlayerCommand, now: datetime | None = None) -> CommandResult:
    """Group-commit ``command`` at ``table_id`` and return its own result (module docstring)."""
    return await batcher().submit(table_id, command, now)
