"""Two reviewers in two processes on one PostgreSQL database never hold the same item at once
(each queue's store contract, on both backends: tests/store_contract/test_labels.py)."""

from __future__ import annotations

import json
import multiprocessing
import time
from pathlib import Path
from typing import Any

import pytest

from engine.runs.labels.golden import read_queue
from engine.store import HumanLabel, KeepsLabels, ReviewItem, ReviewQueue, open_store


def _review(url: str, queue: str, reviewer: str, log: str) -> None:
    """A reviewer in a process of their own: take an item, hold it a moment, label it; log when."""
    from engine.store.postgres import PostgresStore

    with PostgresStore(url, max_connections=2) as store, open(log, "a", encoding="utf-8") as out:
        while True:
            item = store.claim_review(queue, reviewer, 30, 2)
            if item is None:
                if read_queue(store, queue, fields=False).still_needing(reviewer) == 0:
                    return
                time.sleep(0.01)  # what is left needs this reviewer too, once the other lets go of it
                continue
            began = time.time()
            time.sleep(0.02)
            store.save_label(HumanLabel(queue=queue, item_id=item.item_id, reviewer=reviewer, value=True))
            out.write(json.dumps({"item": item.item_id, "by": reviewer, "from": began, "to": time.time()}) + "\n")
            out.flush()


@pytest.mark.slow
def test_two_reviewers_in_two_processes_never_label_one_item_at_once(postgres_url: str, tmp_path: Path) -> None:
    store = open_store(postgres_url)
    assert store is not None
    assert isinstance(store, KeepsLabels)
    queue = ReviewQueue(name="two-processes", scorer_id="hallucination", source="run production", threshold=0.5, spec={"scorer": "hallucination", "labels_per_item": 2})
    store.create_queue(queue, [ReviewItem(queue="two-processes", item_id=f"i{n}", position=n) for n in range(30)])
    context = multiprocessing.get_context("spawn")
    logs = [str(tmp_path / f"{reviewer}.jsonl") for reviewer in ("Ana", "Ben")]
    processes = [context.Process(target=_review, args=(postgres_url, "two-processes", reviewer, log)) for reviewer, log in zip(("Ana", "Ben"), logs)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
    assert [process.exitcode for process in processes] == [0, 0]
    spans = [json.loads(line) for log in logs for line in Path(log).read_text(encoding="utf-8").splitlines()]
    by_item: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        by_item.setdefault(span["item"], []).append(span)
    assert len(by_item) == 30
    for item, held in by_item.items():
        assert sorted(span["by"] for span in held) == ["Ana", "Ben"], item  # each labelled once by each
        first, second = sorted(held, key=lambda span: span["from"])
        assert first["to"] <= second["from"], f"{item} was held by both at once"
    assert isinstance(store, KeepsLabels)
    assert len(store.labels("two-processes")) == 60
    store.close()
