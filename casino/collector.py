"""Python's cyclic garbage collector: paused around bulk steps (``collector_paused``),
and kept off the long-lived objects of a server process (``LongLivedFrozen``)."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for a bulk step: settling a round
    allocates hundreds of thousands of short-lived, acyclic objects, and the
    collections they trigger cost a fifth of a 10,000-player showdown and a
    quarter of the ledger's batch. Reference counting still frees everything;
    the collector resumes afterwards (nested pauses resume once, at the outermost)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class LongLivedFrozen:
    """Keeps what has survived a full collection out of the next ones
    (``gc.freeze()``), so that a full collection walks only what arrived since,
    and walks everything again once that frozen set has grown by ``growth``
    (a quarter, CPython's own rule for full collections) over its size after
    the last such walk: at once, or, once a walker has taken the walks over
    (``defer_walks``), at a moment that walker chooses, within a hard bound.

    Why: a server process holding thousands of websockets tracks about 400
    objects a socket (800,000 at 2,000), and a full collection walks all of
    them with the GIL held, 0.3-1.3 s on the project's machines, stopping the
    event loop. CPython starts one when the objects that survived young
    collections since the last one exceed a quarter of the long-lived ones,
    counting those that reference counting has freed since: traffic alone
    (snapshot requests, connections coming and going) makes them due every
    so often although what the process holds does not grow (``bench fanout``,
    docs/websocket.md "Delivery"). The walks of everything that the frozen
    set's growth brings cost as much (0.5-0.6 s at 2,000 sockets), and they
    came at the next full collection CPython started, wherever that fell:
    right after 2,000 sockets had connected that was inside the next changes'
    delivery (``bench fanout``, 2026-11-29). Hence ``defer_walks``: the
    process's realtime feed walks at a moment of its choosing
    (``games.tables.collector.walk_if_quiet``: no hand-out for a while, none
    pending).

    The contract, memory included:

    * Reference counting frees every object as before, frozen or not; only
      the cycle collector's view changes.
    * Garbage in reference cycles among frozen objects is not reclaimed until
      the next walk of everything: frozen objects are never collected
      (python docs, ``gc.freeze``). The frozen set counts them while they wait.
      Once a full collection, having frozen its survivors, finds the set
      grown past ``growth`` over its size after the last walk, a walk is due
      (``walk_due``):

      - not deferred: the set is thawed (``gc.unfreeze()``) at the end of that
        full collection, the next full collection walks everything and
        reclaims them, and what survives it is frozen again;
      - deferred: the walker runs it (``walk_now``: thaw, collect, freeze the
        survivors) when it chooses. If it has not by the time a full
        collection finds the set grown past ``bound_growth`` over its size
        after the last walk, or finds the walk due for over
        ``due_for_at_most`` seconds, the set is thawed at the end of that
        collection as above, and the next one walks everything, wherever
        that falls.

      So the frozen set, and with it the cyclic garbage among frozen
      objects, stays within (1 + ``bound_growth``) times (deferred; else
      (1 + ``growth``) times) its size after the last walk, plus the
      survivors of the full collection that passes that; and garbage dead
      once a walk is due waits for it at most ``due_for_at_most`` seconds
      and two full collections (deferred). Objects frozen at the last walk
      that die in cycles do not grow the set: such garbage waits until
      growth makes a walk due, within the set's size.
    * Cyclic garbage that was never frozen is collected as before.

    ``install`` freezes what the process holds so far (its imports, settings,
    routes: live for the process) and hooks ``gc.callbacks``; ``uninstall``
    unhooks and unfreezes everything. One installed per process at a time
    (``installed``; ``casino.asgi`` installs one when ``CASINO_GC_FREEZE``)."""

    installed: LongLivedFrozen | None = None

    def __init__(self, *, growth: float = 0.25, bound_growth: float = 1.0, due_for_at_most: float = 300.0) -> None:
        if bound_growth < growth:
            raise ValueError("the hard bound cannot come before the walk is due")
        self.growth, self.bound_growth, self.due_for_at_most = growth, bound_growth, due_for_at_most
        self.frozen_after_walk = 0  # the frozen set's size after the last walk of everything
        self.walks = 0  # full collections that walked the frozen set too (install's freeze counts as one)
        self.deferred = False  # a walker runs the walks that come due (``defer_walks``)
        self.due_since: float | None = None  # when a full collection first found a walk due (monotonic)
        self._thawed = False
        self._due = False  # what the last full collection found (``walk_due``)

    def install(self) -> None:
        if LongLivedFrozen.installed is not None:
            raise RuntimeError("a LongLivedFrozen is installed in this process already")
        LongLivedFrozen.installed = self
        gc.freeze()
        self.frozen_after_walk = gc.get_freeze_count()
        self.walks += 1
        gc.callbacks.append(self._after_collection)

    def uninstall(self) -> None:
        if self._after_collection in gc.callbacks:
            gc.callbacks.remove(self._after_collection)
        gc.unfreeze()
        self._thawed = self._due = False
        self.due_since = None
        if LongLivedFrozen.installed is self:
            LongLivedFrozen.installed = None

    def defer_walks(self, deferred: bool = True) -> None:
        """From now on a walker runs the walks that come due (``walk_now``), the
        hard bound aside; ``False``: they run at the next full collection again."""
        self.deferred = deferred

    @property
    def thaw_due_above(self) -> int:
        """The frozen set's size above which a walk of everything is due."""
        return int(self.frozen_after_walk * (1 + self.growth))

    @property
    def bound_above(self) -> int:
        """The frozen set's size above which a deferred walk is not waited for."""
        return int(self.frozen_after_walk * (1 + self.bound_growth))

    @property
    def thawed(self) -> bool:
        """Nothing is frozen until the next full collection, which walks everything."""
        return self._thawed

    @property
    def walk_due(self) -> bool:
        """A walk of everything is due (or thawed for, by the hard bound), as the
        last full collection found: cheap to ask as often as wanted, where
        ``gc.get_freeze_count()`` walks the whole frozen list (1.9 ms at
        800,000 fresh objects in a bare process; asked at every poll of the
        feed, it slowed 2,000 sockets' connecting several-fold,
        docs/benchmarks.md "bench fanout")."""
        return self._thawed or self._due

    def walk_now(self) -> None:
        """Walk everything now, in the calling thread: thaw, a full collection
        (reclaiming the cyclic garbage among what was frozen), its survivors
        frozen again (``_after_collection``). If another thread's collection
        is running (its finalizers let this thread run), ``gc.collect`` does
        nothing, the end of that collection freezes everything again as if it
        had been the walk, and the garbage waits for the next walk due."""
        gc.unfreeze()
        # Flagged after the thaw: a full collection another thread runs in
        # between walks everything and is counted as an ordinary one, and ours
        # then finds nothing left to walk but what arrived since.
        self._thawed = True
        gc.collect()

    def _after_collection(self, phase: str, info: dict[str, int]) -> None:
        # Called by CPython around every collection, in whichever thread ran
        # it; freeze and unfreeze only move objects between the collector's
        # lists, which is safe once a collection has finished ("stop").
        if phase != "stop" or info["generation"] != 2:
            return
        if self._thawed:  # this collection walked everything: what is left is long-lived
            self._thawed = self._due = False
            gc.freeze()
            self.frozen_after_walk = gc.get_freeze_count()
            self.walks += 1
            self.due_since = None
            return
        gc.freeze()
        frozen = gc.get_freeze_count()
        self._due = frozen > self.thaw_due_above
        if not self._due:
            return
        now = time.monotonic()
        if self.due_since is None:
            self.due_since = now
        bound_passed = frozen > self.bound_above or now - self.due_since > self.due_for_at_most
        if not self.deferred or bound_passed:
            gc.unfreeze()  # the next full collection walks everything
            self._thawed = True
