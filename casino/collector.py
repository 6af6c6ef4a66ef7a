"""Python's cyclic garbage collector: paused around bulk steps (``collector_paused``),
and kept off the long-lived objects of a server process (``LongLivedFrozen``)."""

from __future__ import annotations

import gc
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
    the last such walk.

    Why: a server process holding thousands of websockets tracks about 400
    objects a socket (800,000 at 2,000), and a full collection walks all of
    them with the GIL held, 0.3-1.3 s on the project's machines, stopping the
    event loop. CPython starts one when the objects that survived young
    collections since the last one exceed a quarter of the long-lived ones,
    counting those that reference counting has freed since: traffic alone
    (snapshot requests, connections coming and going) makes them due every
    so often although what the process holds does not grow (``bench fanout``,
    docs/websocket.md "Delivery").

    The contract, memory included:

    * Reference counting frees every object as before, frozen or not; only
      the cycle collector's view changes.
    * Garbage in reference cycles among frozen objects is not reclaimed until
      the next walk of everything: frozen objects are never collected
      (python docs, ``gc.freeze``). The frozen set counts them while they wait,
      so such garbage is bounded by ``growth`` times the frozen set after the
      last walk: when the set passes that, it is thawed (``gc.unfreeze()``) at
      the end of a full collection, the next full collection walks everything
      and reclaims them, and what survives it is frozen again.
    * Cyclic garbage that was never frozen is collected as before.

    ``install`` freezes what the process holds so far (its imports, settings,
    routes: live for the process) and hooks ``gc.callbacks``; ``uninstall``
    unhooks and unfreezes everything. One installed per process at a time
    (``installed``; ``casino.asgi`` installs one when ``CASINO_GC_FREEZE``)."""

    installed: LongLivedFrozen | None = None

    def __init__(self, *, growth: float = 0.25) -> None:
        self.growth = growth
        self.frozen_after_walk = 0  # the frozen set's size after the last walk of everything
        self.walks = 0  # full collections that walked the frozen set too (install's freeze counts as one)
        self._thawed = False

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
        self._thawed = False
        if LongLivedFrozen.installed is self:
            LongLivedFrozen.installed = None

    @property
    def thaw_due_above(self) -> int:
        """The frozen set's size above which the next full collection thaws it."""
        return int(self.frozen_after_walk * (1 + self.growth))

    def _after_collection(self, phase: str, info: dict[str, int]) -> None:
        # Called by CPython around every collection, in whichever thread ran
        # it; freeze and unfreeze only move objects between the collector's
        # lists, which is safe once a collection has finished ("stop").
        if phase != "stop" or info["generation"] != 2:
            return
        if self._thawed:  # this collection walked everything: what is left is long-lived
            self._thawed = False
            gc.freeze()
            self.frozen_after_walk = gc.get_freeze_count()
            self.walks += 1
        elif gc.get_freeze_count() > self.thaw_due_above:
            gc.unfreeze()
            self._thawed = True
        else:
            gc.freeze()
