"""A garbage-collector probe for a benchmark's server processes (``bench fanout``).

``CASINO_GC_PROBE=<directory>`` in a uvicorn worker's environment makes
``casino.asgi`` call :func:`install`: every collection CPython runs in that
process is timed (``gc.callbacks``) and written to
``<directory>/gc-<pid>.jsonl`` as ``[start (epoch s), generation, ms, everything]``,
once a second by a thread of the probe; ``everything``: 1 for a full
collection that walked every tracked object (with ``casino.collector.LongLivedFrozen``
installed, its walks of everything, ``LongLivedFrozen.thawed`` as it
started; without it, every full collection), else 0. (Not from
``gc.get_freeze_count()``: that walks the whole frozen list, tens of
milliseconds at 800,000 objects, too dear at every collection.) A file ``<directory>/census.request``
holding a label makes each probed process write
``<directory>/census-<label>-<pid>.json`` (once a label): the
objects the collector tracks, frozen included, counted by type (the
generations and the frozen set), the twenty commonest types. Benchmark
instrumentation only: the probe's thread and the census cost time of their
own, so the benchmark asks for the census outside its measured windows.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from casino.collector import LongLivedFrozen

CENSUS_REQUEST = "census.request"


def install(directory: str) -> None:
    """Start timing this process's collections into ``directory`` (see module doc)."""
    folder = Path(directory)
    pid = os.getpid()
    records: list[list[float]] = []
    started: list[float] = [0.0, 0.0, 0]

    def timed(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            freezer = LongLivedFrozen.installed
            everything = info["generation"] == 2 and (freezer is None or freezer.thawed)
            started[:] = time.time(), time.perf_counter(), int(everything)
        else:
            ms = (time.perf_counter() - started[1]) * 1000
            records.append([started[0], info["generation"], ms, started[2]])

    gc.callbacks.append(timed)

    def flush_forever() -> None:
        log = folder / f"gc-{pid}.jsonl"
        request = folder / CENSUS_REQUEST
        while True:
            time.sleep(1.0)
            taken = records[:]
            del records[: len(taken)]
            if taken:
                with log.open("a") as out:
                    out.writelines(json.dumps(record) + "\n" for record in taken)
            with contextlib.suppress(FileNotFoundError):
                census = folder / f"census-{request.read_text().strip()}-{pid}.json"
                if not census.exists():
                    census.write_text(json.dumps(take_census()))

    threading.Thread(target=flush_forever, name="gc-probe", daemon=True).start()


def take_census() -> dict[str, Any]:
    """The tracked objects of this process by type (the frozen ones included),
    per generation and frozen. ``gc.get_objects()`` does not list frozen
    objects: they are thawed for the count and frozen again, with the young
    ones beside them (which only moves those into the frozen set early)."""
    per_generation = [len(gc.get_objects(generation)) for generation in range(3)]
    frozen = gc.get_freeze_count()
    if frozen:
        gc.unfreeze()
    by_type = Counter(type(o).__qualname__ for o in gc.get_objects())
    if frozen:
        gc.freeze()
    return {
        "tracked": sum(by_type.values()),
        "per_generation": per_generation,
        "frozen": frozen,
        "threshold": gc.get_threshold(),
        "top": by_type.most_common(20),
    }
