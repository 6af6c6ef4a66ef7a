"""Pausing Python's cyclic garbage collector around bulk steps."""

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
