"""CPython's cyclic garbage collector held off while the realtime feed hands a
batch out (``games.tables.feed.hand_out``; docs/websocket.md, "Delivery").
Interface layer.

Why (``bench fanout``, issue 39): a process holding thousands of websockets
tracks about 400 container objects per socket (its consumer, tasks, futures,
the server's protocol objects): 800,000 at 2,000 sockets, which a full
collection walks in 0.3-1.3 s with the GIL held, stopping every thread. The
allocations of a hand-out (a wake-up per writer, each writer's next wait)
were what tipped the collector over its thresholds, so a full collection
that the sockets' own arrival had made due ran in the middle of a hand-out,
and every watcher of that batch got it that much later (a change delivered
630-857 ms after its commit, 604 ms of it a collection inside ``route``; p99
about 690 ms against 150 ms for the bare peer, whose sends leave nothing
allocated behind). Held, it runs right after the frames are in the sockets
instead: nothing is collected less, only when a collection may start moves,
by one turn of the event loop. The hold alone did not keep full collections
out of the changes around a hand-out: the server also keeps what survived a
full collection out of the next ones (``casino.collector.LongLivedFrozen``),
so those left walk only what arrived since.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Iterator

# Blocks whose release has not run yet (the event loop's thread only).
_holds = 0


@contextlib.contextmanager
def collector_held() -> Iterator[None]:
    """The collector is disabled in the block and enabled again one turn of the
    running event loop after it (``loop.call_soon``): callbacks the block
    scheduled (the writers a hand-out woke, each writing what it was handed
    unless its socket is full) run before it. Nested or overlapping blocks
    keep it disabled until the last release. A collector disabled by someone
    else is left alone."""
    global _holds
    if _holds == 0 and not gc.isenabled():
        yield
        return
    gc.disable()
    _holds += 1
    try:
        yield
    finally:
        asyncio.get_running_loop().call_soon(_release)


def _release() -> None:
    global _holds
    _holds -= 1
    if _holds == 0:
        gc.enable()
