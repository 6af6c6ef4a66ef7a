"""CPython's cyclic garbage collector kept out of the realtime feed's
deliveries (docs/websocket.md, "Delivery"). Interface layer.

- ``collector_held``: held off while the feed hands a batch out
  (``games.tables.feed.hand_out``) until the writers it woke have written.
- ``walk_if_quiet``: the walks of everything that the process's freezer
  (``casino.collector.LongLivedFrozen``) defers to the feed
  (``walks_deferred``, for as long as the feed's reader runs) are run by the
  reader when delivery is quiet: no hand-out (nor ``delivering`` block) open
  or ended within ``CASINO_GC_WALK_QUIET_SECONDS``, and the log just read had
  nothing new, so no batch is pending.

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
full collection out of the next ones (``LongLivedFrozen``), so those left
walk only what arrived since. What was left were that freezer's own walks of
everything (0.5-0.6 s at 2,000 sockets): the frozen set grows several-fold
while the sockets connect, so one came due then and ran at the next full
collection, in the first changes delivered after they had connected
(2026-11-29). They now wait for a quiet feed, within the freezer's hard bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import math
import time
from collections.abc import Iterator

from django.conf import settings

from casino.collector import LongLivedFrozen

# Blocks whose release has not run yet (the event loop's thread only).
_holds = 0
# ``delivering`` blocks open (the event loop's thread only).
_deliveries = 0
# When (time.monotonic()) the last hold was released or ``delivering`` block ended.
_delivered_at = -math.inf


@contextlib.contextmanager
def collector_held() -> Iterator[None]:
    """The collector is disabled in the block and enabled again one turn of the
    running event loop after it (``loop.call_soon``): callbacks the block
    scheduled (the writers a hand-out woke, each writing what it was handed
    unless its socket is full) run before it. Nested or overlapping blocks
    keep it disabled until the last release. A collector disabled by someone
    else is left alone. Either way the block counts as a delivery for
    ``walk_if_quiet``, from its start to its release."""
    global _holds
    if _holds == 0 and not gc.isenabled():
        with delivering():
            yield
        return
    gc.disable()
    _holds += 1
    try:
        yield
    finally:
        asyncio.get_running_loop().call_soon(_release)


def _release() -> None:
    global _holds, _delivered_at
    _holds -= 1
    _delivered_at = time.monotonic()
    if _holds == 0:
        gc.enable()


@contextlib.contextmanager
def delivering() -> Iterator[None]:
    """A delivery that awaits its sends (the bare broadcast peer of ``bench
    fanout``, served by the same process and judged beside the feed): no walk
    of everything starts in it, nor within the quiet interval after it. The
    collector is left as it is."""
    global _deliveries, _delivered_at
    _deliveries += 1
    try:
        yield
    finally:
        _deliveries -= 1
        _delivered_at = time.monotonic()


def walk_if_quiet(*, quiet: float | None = None) -> bool:
    """Run the installed freezer's due walk of everything (``LongLivedFrozen.walk_now``)
    if delivery is quiet: no hold or ``delivering`` block open, and none ended
    within ``quiet`` seconds (``CASINO_GC_WALK_QUIET_SECONDS``). Returns
    whether it walked. The caller picks the moment within that: the feed's
    reader calls it right after a read of the log found nothing new."""
    freezer = LongLivedFrozen.installed
    if freezer is None or not freezer.walk_due:
        return False
    quiet = settings.CASINO_GC_WALK_QUIET_SECONDS if quiet is None else quiet
    if _holds or _deliveries or time.monotonic() - _delivered_at < quiet:
        return False
    freezer.walk_now()
    return True


@contextlib.contextmanager
def walks_deferred() -> Iterator[None]:
    """The installed freezer (if any) leaves the walks that come due to
    ``walk_if_quiet`` in the block, its hard bound aside
    (``LongLivedFrozen.defer_walks``); as before once it ends."""
    freezer = LongLivedFrozen.installed
    if freezer is None or freezer.deferred:
        yield
        return
    freezer.defer_walks()
    try:
        yield
    finally:
        freezer.defer_walks(False)
