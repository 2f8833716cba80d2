"""Review queues, on every backend alike: kept across restarts, one reviewer at a time on an
item (a lease that runs out when they leave), labels and notes scrubbed, settlements; and a
store of the schema before them opens with them."""

from __future__ import annotations

import time
from typing import Any

import pytest

from engine.errors import ConfigError
from engine.store import HumanLabel, KeepsLabels, ResultRecord, ReviewItem, ReviewQueue, Settlement, Store

from .conftest import Backend


def make_queue(store: Store, name: str, items: int, per_item: int = 1) -> None:
    assert isinstance(store, KeepsLabels)
    queue = ReviewQueue(name=name, scorer_id="hallucination", source="run production", run="production", threshold=0.5,
                        spec={"scorer": "hallucination", "labels_per_item": per_item})
    store.create_queue(queue, [ReviewItem(queue=name, item_id=f"i{n}", position=n, fields={"input": f"q{n}", "output": f"a{n}"}) for n in range(items)])


def test_a_queue_and_its_labels_outlive_the_process(backend: Backend) -> None:
    name = "kept"
    store = backend.open()
    make_queue(store, name, 3)
    with pytest.raises(ConfigError, match=f"a queue named '{name}' exists already"):
        make_queue(store, name, 1)
    first = store.claim_review(name, "Ana", 60, 1)
    store.save_label(HumanLabel(queue=name, item_id=first.item_id, reviewer="Ana", value=True, note="token=sk-abcdefghijklmnopqrstuvwx1234 pasted", answers=["yes", None]))
    store.close()

    reopened = backend.open()
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


def test_one_reviewer_at_a_time_holds_an_item_until_the_lease_runs_out(store: Any) -> None:
    name = "leases"
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




def test_a_store_of_the_schema_before_queues_opens_with_them(backend: Backend) -> None:
    from engine.store.labels import LABEL_MIGRATION_TITLE

    before = next(migration.version for migration in backend.migrations if migration.description == LABEL_MIGRATION_TITLE) - 1
    backend.database(backend.migrations[:before]).close()
    with backend.open() as store:
        store.save(ResultRecord(run="nightly", source="batch", item_id="q1", scorer_id="hallucination", score=0.5))
        make_queue(store, "after-upgrade", 1)
        assert isinstance(store, KeepsLabels)
        assert [item.item_id for item in store.review_items("after-upgrade")] == ["i0"]
        assert store.item_records("nightly", "q1")[0].score == 0.5
