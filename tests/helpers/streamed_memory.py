"""Memory held while a run streams: what flat-memory tests measure, in one place."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Iterable
from typing import Any

from engine import EvalResult, ItemResult, run_evals
from engine.scoring import AnyScorer

#: Where the traced memory is read: after this many items, and after the last one.
EARLY = 2_000


def streamed(items: Iterable[dict[str, Any]], total: int, scorer: AnyScorer) -> tuple[EvalResult, int]:
    """Run `items` (`total` of them) through `scorer` without keeping results, and return the
    result and how much more memory was held after the last item than after the EARLY-th."""
    memory: dict[int, int] = {}
    done = {"count": 0}

    def on_item_complete(item: ItemResult) -> None:
        done["count"] += 1
        if done["count"] in (EARLY, total):
            gc.collect()
            memory[done["count"]] = tracemalloc.get_traced_memory()[0]

    tracemalloc.start()
    try:
        result = run_evals(items, [scorer], on_item_complete=on_item_complete, keep_results=False)
    finally:
        tracemalloc.stop()
    return result, memory[total] - memory[EARLY]
