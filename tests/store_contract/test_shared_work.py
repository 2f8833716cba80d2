"""A store that shares work (`SharesWork`): workers queue a run's items once, claim a few at
a time under a lease, renew it while they work, and finish what they saved; a worker that
dies leaves its items to the others. A store without it runs a batch in one process."""

from __future__ import annotations

import time

import pytest

from engine import RunInfo, Store
from engine.store import SharesWork, store_shares_work

from .conftest import Backend


def sharing(store: Store) -> SharesWork:
    if not isinstance(store, SharesWork):
        pytest.skip(f"{type(store).__name__} does not share work: a batch runs in the one process that starts it")
    return store


def test_whether_a_store_shares_work_is_asked_of_its_backend(backend: Backend, store: Store) -> None:
    assert store_shares_work(backend.location) == isinstance(store, SharesWork)


def test_items_are_queued_once_and_claimed_by_one_worker_each(store: Store) -> None:
    shared = sharing(store)
    store.begin_run(RunInfo(name="split"))
    shared.queue_items("split", [(n, f"i{n}", {"item": {"n": n, "text": "é"}}) for n in range(5)])
    shared.queue_items("split", [(0, "i0", {"item": "another copy"}), (5, "i5", {"item": {"n": 5}})])  # the first copy wins

    first = shared.claim("split", "worker-1", 2, lease_s=30)
    second = shared.claim("split", "worker-2", 10, lease_s=30)

    assert [(item.index, item.payload) for item in first] == [(0, {"item": {"n": 0, "text": "é"}}), (1, {"item": {"n": 1, "text": "é"}})]
    assert [item.index for item in second] == [2, 3, 4, 5]
    assert shared.claim("split", "worker-3", 10, lease_s=30) == [] and shared.unfinished("split") == 6


def test_finished_items_are_not_claimed_again_until_the_run_is_reopened(store: Store) -> None:
    shared = sharing(store)
    shared.queue_items("split", [(n, f"i{n}", n) for n in range(3)])
    claimed = shared.claim("split", "worker-1", 3, lease_s=0.5)
    shared.finish("split", "worker-1", [item.index for item in claimed[:2]])
    time.sleep(0.7)  # the lease of the third ran out

    assert shared.unfinished("split") == 1
    assert [item.index for item in shared.claim("split", "worker-2", 10, lease_s=30)] == [2]
    shared.finish("split", "worker-1", [2])  # finished by whoever holds it now: its records are saved
    assert shared.unfinished("split") == 0

    # A rerun after the data changed: a finished item queued again takes its new content.
    shared.queue_items("split", [(0, "i0", 0), (1, "i1", 1), (2, "i2", "changed")])
    assert shared.reopen("split") == 3 and shared.unfinished("split") == 3
    assert [(item.index, item.payload) for item in shared.claim("split", "worker-3", 10, lease_s=30)] == [(0, 0), (1, 1), (2, "changed")]


def test_a_renewed_lease_keeps_the_items_with_their_worker(store: Store) -> None:
    shared = sharing(store)
    shared.queue_items("split", [(0, "i0", 0), (1, "i1", 1)])
    shared.claim("split", "worker-1", 2, lease_s=0.6)
    shared.renew("split", "worker-1", [0], lease_s=30)
    time.sleep(0.8)

    assert [item.index for item in shared.claim("split", "worker-2", 10, lease_s=30)] == [1]  # 0 was renewed, 1 ran out
    shared.renew("split", "worker-1", [1], lease_s=30)  # too late: worker-2 holds it now
    assert shared.claim("split", "worker-3", 10, lease_s=30) == []
