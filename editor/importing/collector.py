"""Keeping the cyclic garbage collector out of an import's way.

An import allocates millions of container objects (parsed messages, their diagnostics, the
rows written), nearly all freed by reference counting as soon as their batch is written. The
collector does not know that: it runs every 700 net allocations and, every few of those runs,
walks every object of the process, the framework's included. That was a tenth to a third of
an import's time (docs/performance.md), and it finds next to nothing.

While an import runs, what the process held before it is frozen out of the collector's reach
(``gc.freeze``) and the collector waits for ``YOUNG_OBJECTS`` net allocations. Memory stays
bounded: a batch's objects die when the next one is read, and garbage cycles or a growing
report do reach the threshold, which collects what the import allocated (not the frozen
rest). Threads share the collector: the first import in sets the thresholds, the last out
puts them back.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# Net allocations of container objects before the collector runs during an import (700 by
# default): an import's batch of 500 transcripts holds ~20,000 while it is written.
YOUNG_OBJECTS = 50_000

_lock = threading.Lock()
_imports = 0
_thresholds: tuple[int, ...] = ()


@contextmanager
def collector_spared() -> Iterator[None]:
    """Run the body with the collector held off (see the module's docstring)."""
    global _imports, _thresholds
    with _lock:
        if _imports == 0:
            _thresholds = gc.get_threshold()
            gc.freeze()
            gc.set_threshold(YOUNG_OBJECTS, *_thresholds[1:])
        _imports += 1
    try:
        yield
    finally:
        with _lock:
            _imports -= 1
            if _imports == 0:
                gc.set_threshold(*_thresholds)
                gc.unfreeze()
