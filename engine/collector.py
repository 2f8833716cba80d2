"""Python's cyclic garbage collector, held off while a burst of objects that stay alive is
built: the command line's modules as they are imported, and a catalog as it is compiled.

Such a burst allocates tens of thousands of objects (pydantic models and their schemas,
Jinja trees, plans) that all outlive it; the collector, started every 700 allocations, walks
them again and again and frees little: a tenth of a cold `scorers check`. Held off, it runs
once the burst is over, over what the burst left (a megabyte more at the peak, at most).
"""

from __future__ import annotations

import atexit
import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
#: How many bursts are under way (nested, or on other threads), and whether the collector
#: ran before the first: the last to end starts it again, and only if it was running.
_bursts = 0
_was_running = False


@contextmanager
def collector_held() -> Iterator[None]:
    """No automatic collection inside the block (a `gc.collect()` still collects)."""
    global _bursts, _was_running
    with _lock:
        if not _bursts:
            _was_running = gc.isenabled()
            gc.disable()
        _bursts += 1
    try:
        yield
    finally:
        with _lock:
            _bursts -= 1
            if not _bursts and _was_running:
                if not gc.get_freeze_count():  # (objects frozen by the application stay frozen)
                    # What the burst built goes straight to the oldest generation, where a full
                    # collection looks at it, rather than through a young one scanned again and again.
                    gc.freeze()
                    gc.unfreeze()
                gc.enable()


_ending_without_collection = False


def end_without_last_collection() -> None:
    """Lets a process that only reads (a command that checks or lists a catalog) end without
    the collection Python makes of every object as it exits: the objects left then (modules,
    compiled catalogs) are frozen, as nothing that a collection would finalize holds work to
    save. For `scorers check` that last collection was 100 ms, a fifth of the command."""
    global _ending_without_collection
    if not _ending_without_collection:
        _ending_without_collection = True
        atexit.register(gc.freeze)  # run after the handlers registered later (LIFO), before the interpreter's teardown
