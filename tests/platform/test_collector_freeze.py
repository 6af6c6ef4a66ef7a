"""``casino.collector.LongLivedFrozen``'s contract (docs/websocket.md, "Delivery"):
what survived a full collection is kept out of the next ones, reference
counting still frees everything, and cyclic garbage among frozen objects
waits for the next walk of everything, which comes once the frozen set has
grown by its ``growth``, or, when a walker has taken the walks over
(``defer_walks``), when that walker runs it, and at the latest at the hard
bound (the set grown by ``bound_growth``, or ``due_for_at_most`` seconds
after the walk came due), so such garbage cannot pile up without bound.
Real ``gc`` throughout."""

from __future__ import annotations

import gc
import time
import weakref
from collections.abc import Iterator

import pytest

from casino.collector import LongLivedFrozen
from tests.freezing import Node, arrivals_past, cycle, dead_frozen_cycle, own_freezer


@pytest.fixture
def frozen() -> Iterator[LongLivedFrozen]:
    with own_freezer() as freezer:
        yield freezer


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
    gone = cycle()
    gc.collect()
    assert gone() is None


def test_a_frozen_cycle_waits_for_the_walk_that_the_frozen_sets_growth_brings(frozen: LongLivedFrozen) -> None:
    gone = dead_frozen_cycle()
    # The frozen set grows past the bound: more long-lived objects arrive and survive a full collection.
    arrived = arrivals_past(frozen.thaw_due_above)
    walks = frozen.walks
    gc.collect()  # they are frozen: the set is over its bound, and thawed
    assert gone() is not None
    gc.collect()  # walks everything
    assert gone() is None, "the walk reclaimed the cycle that had died frozen"
    assert frozen.walks == walks + 1
    assert frozen.frozen_after_walk >= len(arrived), "the survivors frozen again"


def test_a_deferred_walk_is_not_run_by_the_full_collections_but_by_walk_now(frozen: LongLivedFrozen) -> None:
    """With a walker (the feed's reader), a due walk of everything waits for it:
    the full collections CPython starts meanwhile (wherever they fall: in a
    hand-out's delivery) walk only what is not frozen."""
    frozen.defer_walks()
    gone = dead_frozen_cycle()
    arrived = arrivals_past(frozen.thaw_due_above)
    assert len(arrived) < frozen.bound_above - gc.get_freeze_count(), "below the hard bound"
    walks = frozen.walks
    gc.collect()  # they are frozen: a walk is due
    assert frozen.walk_due
    assert gc.get_freeze_count() > frozen.thaw_due_above, "not thawed"
    for _ in range(3):
        gc.collect()
        assert gc.get_freeze_count() > frozen.thaw_due_above, "not thawed"
    assert frozen.walks == walks, "no walk of everything"
    assert gone() is not None
    assert frozen.walk_due
    frozen.walk_now()
    assert gone() is None, "the walk reclaimed the cycle that had died frozen"
    assert frozen.walks == walks + 1
    assert not frozen.walk_due
    assert frozen.frozen_after_walk >= len(arrived), "the survivors frozen again"
    assert gc.get_freeze_count() == frozen.frozen_after_walk


def test_a_deferred_walk_nobody_runs_is_run_once_the_frozen_set_has_grown_past_the_hard_bound(
    frozen: LongLivedFrozen,
) -> None:
    frozen.defer_walks()
    gone = dead_frozen_cycle()
    walks = frozen.walks
    due = arrivals_past(frozen.thaw_due_above)
    gc.collect()
    gc.collect()
    assert frozen.walk_due
    assert frozen.walks == walks, "deferred"
    assert gone() is not None
    past_bound = arrivals_past(frozen.bound_above)
    gc.collect()  # they are frozen: the set is over the hard bound, and thawed
    assert gone() is not None
    gc.collect()  # walks everything
    assert gone() is None, "the hard bound reclaimed the cycle that had died frozen"
    assert frozen.walks == walks + 1
    assert frozen.frozen_after_walk >= len(due) + len(past_bound), "the survivors frozen again"


def test_a_deferred_walk_nobody_runs_is_run_once_it_has_been_due_for_the_longest_wait() -> None:
    with own_freezer(due_for_at_most=0.2) as frozen:
        frozen.defer_walks()
        gone = dead_frozen_cycle()
        walks = frozen.walks
        arrived = arrivals_past(frozen.thaw_due_above)
        gc.collect()  # they are frozen: a walk is due, the wait starts
        assert frozen.due_since is not None
        gc.collect()
        assert frozen.walks == walks, "deferred while the wait lasts"
        assert gone() is not None
        time.sleep(0.3)
        gc.collect()  # due for longer than the wait: thawed
        assert gone() is not None
        gc.collect()  # walks everything
        assert gone() is None, "the longest wait reclaimed the cycle that had died frozen"
        assert frozen.walks == walks + 1
        assert frozen.due_since is None
        assert frozen.frozen_after_walk >= len(arrived)


def test_undeferred_again_a_due_walk_runs_at_the_next_full_collections(frozen: LongLivedFrozen) -> None:
    frozen.defer_walks()
    gone = dead_frozen_cycle()
    held = arrivals_past(frozen.thaw_due_above)
    gc.collect()
    gc.collect()
    assert gone() is not None
    frozen.defer_walks(False)
    gc.collect()  # still due: thawed
    gc.collect()  # walks everything
    assert gone() is None
    assert frozen.frozen_after_walk >= len(held)


def test_the_hard_bound_cannot_come_before_the_walk_is_due() -> None:
    with pytest.raises(ValueError, match="hard bound"):
        LongLivedFrozen(growth=0.5, bound_growth=0.25)
