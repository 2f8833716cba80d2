"""Python's cyclic garbage collector, held off while a burst of objects that stay alive is
built: the command line's modules as they are imported and its arguments parsed, and a
catalog as it is read, compiled and linted.

Such a burst allocates tens of thousands of objects (pydantic models and their schemas,
Jinja trees, plans) that all outlive it; the collector, started every 700 allocations, walks
them again and again and frees little: a tenth of a cold `scorers check`. Held off, it runs
once the burst is over, over what the burst left (a megabyte more at the peak, at most).
What lasts as long as the process (a module loaded) goes straight to the oldest generation,
and so does a catalog's compilation in a process that ends right after it; in a process that
compiles catalogs again and again (the workbench, a notebook) compiling is left alone.
"""

from __future__ import annotations

import atexit
import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
#: How many bursts are under way (nested, or on other threads), whether the collector ran
#: before the first (the last to end starts it again, and only if it was running), and
#: whether what they built lasts as long as the process.
_bursts = 0
_was_running = False
_lasting = False
#: Set by `runs_one_command` (the `scorers` script), and by `end_without_last_collection` in
#: such a process: it ends once its command is done.
_one_command = False
_ending = False


@contextmanager
def collector_held(lasting: bool = False) -> Iterator[None]:
    """No automatic collection inside the block (a `gc.collect()` still collects), when what
    it builds stays as long as the process (`lasting`: modules, a command's parser) or the
    process ends after its command (see `end_without_last_collection`): what the block built
    is then not looked at again until a full collection. In any other process (the
    workbench, a notebook, an application loading scorers again and again) the block runs
    with the collector as it is, so each load's leftovers are collected as they were."""
    if not (lasting or _ending):
        yield
        return
    global _bursts, _was_running, _lasting
    with _lock:
        if not _bursts:
            _was_running, _lasting = gc.isenabled(), False
            gc.disable()
        _bursts += 1
        _lasting = _lasting or lasting
    try:
        yield
    finally:
        with _lock:
            _bursts -= 1
            if not _bursts and _was_running:
                if (_lasting or _ending) and not gc.get_freeze_count():  # (objects frozen by the application stay frozen)
                    # Into the oldest generation, rather than through the young ones, which
                    # would walk it all again; a full collection still looks at it.
                    gc.freeze()
                    gc.unfreeze()
                gc.enable()


def runs_one_command() -> None:
    """Marks this process as one that runs one command and ends (the `scorers` script; not a
    test or an application calling the command line in its own process)."""
    global _one_command
    _one_command = True


def end_without_last_collection() -> None:
    """Lets a process that runs one command that only reads (checks or lists a catalog) end
    without the collection Python makes of every object as it exits: the objects left then
    (modules, compiled catalogs) are frozen, as nothing that a collection would finalize
    holds work to save. For `scorers check` that last collection was 100 ms, a fifth of the
    command. Nothing changes in a process not marked by `runs_one_command`."""
    global _ending
    if _one_command and not _ending:
        _ending = True
        atexit.register(gc.freeze)  # run after the handlers registered later (LIFO), before the interpreter's teardown
