"""``casino.collector.LongLivedFrozen``'s contract (docs/websocket.md, "Delivery"):
what survived a full collection is kept out of the next ones, reference
counting still frees everything, and cyclic garbage among frozen objects
waits for the next walk of everything, which comes once the frozen set has
grown by its ``growth``, so such garbage cannot pile up without bound."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from casino.collector import LongLivedFrozen


class Node:
    """A weakly referenceable object, in a reference cycle when ``peer`` is itself."""

    def __init__(self) -> None:
        self.peer: Node | None = None


def _cycle() -> weakref.ref[Node]:
    node = Node()
    node.peer = node
    return weakref.ref(node)


@pytest.fixture
def frozen() -> Iterator[LongLivedFrozen]:
    """A freezer of its own (the one ``casino.asgi`` installs, if a test imported
    it in this process, is set aside and installed again afterwards)."""
    aside = LongLivedFrozen.installed
    if aside is not None:
        aside.uninstall()
    assert gc.get_freeze_count() == 0
    freezer = LongLivedFrozen()
    freezer.install()
    try:
        yield freezer
    finally:
        freezer.uninstall()
        gc.collect()  # what the test left in cycles goes now, not in another test's collection
        if aside is not None:
            LongLivedFrozen.installed = None
            aside.install()


def test_one_freezer_per_process(frozen: LongLivedFrozen) -> None:
    with pytest.raises(RuntimeError):
        LongLivedFrozen().install()
    assert LongLivedFrozen.installed is frozen


def test_install_freezes_what_the_process_holds_and_uninstall_thaws_it(frozen: LongLivedFrozen) -> None:
    assert frozen.frozen_after_walk > 0
    assert gc.get_freeze_count() > 0  # (some freed since, by reference counting)
    frozen.uninstall()
    assert gc.get_freeze_count() == 0
    assert frozen._after_collection not in gc.callbacks


def test_survivors_of_a_full_collection_are_frozen_and_out_of_the_next_ones(frozen: LongLivedFrozen) -> None:
    held: list[list[int]] = [[] for _ in range(1000)]  # tracked containers, alive
    before = gc.get_freeze_count()
    gc.collect()
    assert gc.get_freeze_count() >= before + len(held)
    walked = {id(o) for o in gc.get_objects()}  # what a collection walks: generations 0-2
    assert not any(id(item) in walked for item in held)


def test_reference_counting_frees_frozen_objects_that_are_not_in_a_cycle(frozen: LongLivedFrozen) -> None:
    node = Node()
    gone = weakref.ref(node)
    gc.collect()
    assert gc.get_freeze_count() > frozen.frozen_after_walk  # node is frozen now
    del node
    assert gone() is None, "freed on its last reference, no collection needed"


def test_cyclic_garbage_never_frozen_is_collected_as_before(frozen: LongLivedFrozen) -> None:
    gone = _cycle()
    gc.collect()
    assert gone() is None


def test_a_frozen_cycle_waits_for_the_walk_that_the_frozen_sets_growth_brings(frozen: LongLivedFrozen) -> None:
    node = Node()
    node.peer = node
    gone = weakref.ref(node)
    gc.collect()  # node survives it: frozen
    del node
    gc.collect()
    assert gone() is not None, "frozen objects are never collected (python docs, gc.freeze)"
    # The frozen set grows past the bound: more long-lived objects arrive and survive a full collection.
    arrived: list[list[int]] = [[] for _ in range(frozen.thaw_due_above - gc.get_freeze_count() + 1000)]
    walks = frozen.walks
    gc.collect()  # they are frozen: the set is over its bound
    assert gc.get_freeze_count() > frozen.thaw_due_above
    gc.collect()  # thaws it
    gc.collect()  # walks everything
    assert gone() is None, "the walk reclaimed the cycle that had died frozen"
    assert frozen.walks == walks + 1
    assert frozen.frozen_after_walk >= len(arrived), "the survivors frozen again"
