"""Helpers of the collector tests (``casino.collector.LongLivedFrozen``,
``games.tables.collector``): a freezer of the test's own, real cyclic garbage
among frozen objects, and long-lived arrivals that grow the frozen set. Real
``gc`` throughout: nothing of the collector is mocked."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from casino.collector import LongLivedFrozen


class Node:
    """A weakly referenceable object, in a reference cycle when ``peer`` is itself."""

    def __init__(self) -> None:
        self.peer: Node | None = None


def cycle() -> weakref.ref[Node]:
    """A reference cycle, dropped at once: garbage for the next collection that walks it."""
    node = Node()
    node.peer = node
    return weakref.ref(node)


def dead_frozen_cycle() -> weakref.ref[Node]:
    """A reference cycle that survived a full collection (so it is frozen) and
    was dropped after: garbage that only a walk of everything reclaims."""
    node = Node()
    node.peer = node
    gone = weakref.ref(node)
    gc.collect()  # node survives it: frozen
    del node
    gc.collect()
    assert gone() is not None, "frozen objects are never collected (python docs, gc.freeze)"
    return gone


def arrivals_past(size: int) -> list[list[int]]:
    """Tracked containers, enough for the frozen set to pass ``size`` once a
    full collection has frozen them (while the caller holds them)."""
    return [[] for _ in range(max(size - gc.get_freeze_count(), 0) + 1000)]


@contextmanager
def own_freezer(**options: Any) -> Iterator[LongLivedFrozen]:
    """A freezer of the test's own, installed (``options``: the constructor's).
    The one ``casino.asgi`` installs, if a test imported it in this process, is
    set aside and installed again afterwards."""
    aside = LongLivedFrozen.installed
    if aside is not None:
        aside.uninstall()
    assert gc.get_freeze_count() == 0
    freezer = LongLivedFrozen(**options)
    freezer.install()
    try:
        yield freezer
    finally:
        freezer.uninstall()
        gc.collect()  # what the test left in cycles goes now, not in another test's collection
        if aside is not None:
            LongLivedFrozen.installed = None
            aside.install()
