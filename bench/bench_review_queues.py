"""How a review queue answers as it grows (not a test): a reviewer's next item, a label kept,
and the queue's agreement report, on an SQLite store holding a queue of N items of about 5 kB
each (input, output, context and the judge's claims), beside the baseline measured in the
same run: reading the whole queue with its text, which each of them would do without the
store's narrower reads.

    python bench/bench_review_queues.py [--items 5000] [--labelled 1000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from engine.runs.labels import give_label, next_item, queue_report, read_queue
from engine.store import JudgedItem, ReviewItem, ReviewQueue, open_store


def timed(work: Callable[[], object], repeats: int = 5) -> float:
    """The median of `repeats` runs, in milliseconds."""
    spans = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        spans.append((time.perf_counter() - start) * 1000)
    return sorted(spans)[len(spans) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--labelled", type=int, default=1000, help="Items already labelled by two reviewers")
    arguments = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="queues-"))
    store = open_store(folder / "results.sqlite")
    assert store is not None
    queue = ReviewQueue(name="big", scorer_id="hallucination", source="run nightly", threshold=0.5, spec={"scorer": "hallucination", "labels_per_item": 2})
    verdicts = [{"statement": f"claim {n}", "verdict": "no", "reason": "the context says so " * 4} for n in range(5)]
    items = [
        ReviewItem(queue="big", item_id=f"i{n}", position=n, fields={"input": "a question " * 40, "output": "an answer " * 150, "context": ["a passage " * 200]},
                   judged=JudgedItem(score=0.5, reason="a reason " * 20, answers={"analyze": {"verdicts": verdicts}}))
        for n in range(arguments.items)
    ]
    start = time.perf_counter()
    store.create_queue(queue, items)  # type: ignore[attr-defined]
    made = time.perf_counter() - start
    for n in range(arguments.labelled):
        for reviewer in ("Ana", "Ben"):
            give_label(store, "big", reviewer, f"i{n}", "flag" if n % 3 else "pass")
    baseline = timed(lambda: read_queue(store, "big"))
    figures = {
        "next item": timed(lambda: next_item(store, "big", "Chloe")),
        "a label kept": timed(lambda: give_label(store, "big", "Chloe", f"i{arguments.labelled}", "pass")),
        "the agreement report": timed(lambda: queue_report(store, "big")),
    }
    print(f"a queue of {arguments.items} items ({arguments.labelled} labelled by two people) made in {made:.2f} s")
    print(f"baseline: the whole queue read with its text: {baseline:.1f} ms")
    for name, value in figures.items():
        print(f"{name}: {value:.1f} ms ({value / baseline:.2f}x the baseline)")
    store.close()


if __name__ == "__main__":
    main()
