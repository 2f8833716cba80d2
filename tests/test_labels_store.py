"""Review queues in the results store, on SQLite and PostgreSQL alike: kept across restarts,
one reviewer at a time on an item (a lease that runs out when they leave), labels and notes
scrubbed, settlements; and two reviewers in two processes on one PostgreSQL database never
holding the same item at once."""

from __future__ import annotations

import json
import multiprocessing
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.store import HumanLabel, KeepsLabels, ReviewItem, ReviewQueue, Settlement, Store, open_store
from engine.errors import ConfigError


def make_queue(store: Store, name: str, items: int, per_item: int = 1) -> None:
    assert isinstance(store, KeepsLabels)
    queue = ReviewQueue(name=name, scorer_id="hallucination", source="run production", run="production", threshold=0.5,
                        spec={"scorer": "hallucination", "labels_per_item": per_item})  # fmt: skip
    store.create_queue(queue, [ReviewItem(queue=name, item_id=f"i{n}", position=n, fields={"input": f"q{n}", "output": f"a{n}"}) for n in range(items)])


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "results.sqlite")
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def store(location: str) -> Iterator[Any]:
    opened = open_store(location)
    yield opened
    assert opened is not None
    opened.close()


def test_a_queue_and_its_labels_outlive_the_process(store: Any, location: str, request: pytest.FixtureRequest) -> None:
    name = f"kept-{request.node.callspec.id}"
    make_queue(store, name, 3)
    with pytest.raises(ConfigError, match=f"a queue named '{name}' exists already"):
        make_queue(store, name, 1)
    first = store.claim_review(name, "Ana", 60, 1)
    store.save_label(HumanLabel(queue=name, item_id=first.item_id, reviewer="Ana", value=True, note="token=sk-abcdefghijklmnopqrstuvwx1234 pasted", answers=["yes", None]))
    store.close()

    reopened = open_store(location)
    assert isinstance(reopened, KeepsLabels)
    assert [queue.name for queue in reopened.review_queues() if queue.name == name] == [name]
    [kept] = reopened.labels(name)
    assert (kept.item_id, kept.reviewer, kept.value, kept.answers) == ("i0", "Ana", True, ["yes", None])
    assert "sk-abcdefghijklmnop" not in (kept.note or "") and "pasted" in (kept.note or "")
    # Ana goes on where she stopped: the next item, not the one she labelled.
    assert reopened.claim_review(name, "Ana", 60, 1).item_id == "i1"  # type: ignore[union-attr]
    reopened.settle(Settlement(queue=name, item_id="i0", value=False, settled_by="Chloe", note="the context says so"))
    assert [(found.item_id, found.value, found.settled_by) for found in reopened.settlements(name)] == [("i0", False, "Chloe")]
    reopened.delete_queue(name)
    assert reopened.get_queue(name) is None and reopened.labels(name) == []
    reopened.close()


def test_one_reviewer_at_a_time_holds_an_item_until_the_lease_runs_out(store: Any, request: pytest.FixtureRequest) -> None:
    name = f"leases-{request.node.callspec.id}"
    make_queue(store, name, 2, per_item=2)
    assert store.claim_review(name, "Ana", 0.5, 2).item_id == "i0"
    assert store.claim_review(name, "Ben", 0.5, 2).item_id == "i1"  # i0 is Ana's
    assert store.claim_review(name, "Chloe", 0.5, 2) is None  # both held
    assert store.hold_review(name, "i0", "Ben", 0.5) == "Ana"
    assert store.claim_review(name, "Ana", 0.5, 2).item_id == "i0"  # her own, again
    time.sleep(0.6)  # Ana walked away: her item goes to the next reviewer
    assert store.claim_review(name, "Chloe", 60, 2).item_id == "i0"
    store.save_label(HumanLabel(queue=name, item_id="i0", reviewer="Chloe", value=False))
    store.release_review(name, "Chloe")
    assert store.claim_review(name, "Chloe", 60, 2).item_id == "i1"  # Ben's ran out too; her own label of i0 done
    assert store.claim_review(name, "Dan", 60, 2, passed=["i0"]) is None  # i1 is Chloe's; he skipped i0


def _review(url: str, queue: str, reviewer: str, log: str) -> None:
    """A reviewer in a process of their own: take an item, hold it a moment, label it; log when."""
    from engine.store.postgres import PostgresStore

    with PostgresStore(url, max_connections=2) as store, open(log, "a", encoding="utf-8") as out:
        while True:
            item = store.claim_review(queue, reviewer, 30, 2)
            if item is None:
                return
            began = time.time()
            time.sleep(0.02)
            store.save_label(HumanLabel(queue=queue, item_id=item.item_id, reviewer=reviewer, value=True))
            out.write(json.dumps({"item": item.item_id, "by": reviewer, "from": began, "to": time.time()}) + "\n")
            out.flush()


@pytest.mark.slow
def test_two_reviewers_in_two_processes_never_label_one_item_at_once(postgres_url: str, tmp_path: Path) -> None:
    store = open_store(postgres_url)
    assert store is not None
    make_queue(store, "two-processes", 30, per_item=2)
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
