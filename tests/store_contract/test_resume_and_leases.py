"""Resuming a run: saved results are found by item with the fingerprints that decide whether
they still hold, and one process at a time holds a run's lease."""

from __future__ import annotations

import json
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path

from helpers.scripted import outputs_judged, script_hallucination
from helpers.stored_records import sample_records

from engine import Store, create_hallucination_scorer, run_evals
from engine.store import RunLease
from engine.testing import JudgeServer

from .conftest import Backend


def test_an_items_results_are_found_with_the_fingerprints_that_made_them(store: Store) -> None:
    saved = sample_records()
    store.save_many(saved)

    found = store.item_records("nightly", "q1")
    assert [(r.scorer_id, r.item_hash, r.scorer_hash) for r in found] == [("hallucination", "a" * 64, "s" * 64), ("faithfulness", "a" * 64, "s" * 64)]
    assert store.item_records("nightly", "nope") == [] and store.item_records("other", "q1") == []
    # Successful records only: the failed q3 does not vouch for its scorer's version.
    assert store.scorer_versions("nightly") == {"hallucination": {("s" * 64, "openai/gpt-4o-mini")}, "faithfulness": {("s" * 64, "jury"), ("s" * 64, "openai/gpt-4o-mini")}}


def test_a_run_resumed_reuses_what_still_holds_and_judges_only_the_rest(backend: Backend, judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    items = [{"id": f"i{n}", "input": f"q{n}", "output": f"ok {n}. WRONG", "context": ["facts"]} for n in range(4)]
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    run_evals(data, [create_hallucination_scorer()], store=backend.location, run="nightly", cache=False)
    before = len(outputs_judged(judge))

    items[2]["output"] = "changed. WRONG"
    data.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    again = run_evals(data, [create_hallucination_scorer()], store=backend.location, run="nightly", cache=False)

    assert (again.counts.reused, again.counts.scored, again.status) == (3, 1, "complete")
    assert outputs_judged(judge)[before:] == ["changed. WRONG"]
    with backend.open() as store:
        assert {r.item_id: r.output for r in store.query(run="nightly")}["i2"] == "changed. WRONG"


def test_one_owner_at_a_time_holds_a_runs_lease(store: Store) -> None:
    soon = datetime.now(timezone.utc) + timedelta(minutes=5)
    mine = RunLease(run="r", owner="me", pid=1, host="here", expires_at=soon)
    theirs = RunLease(run="r", owner="them", pid=2, host="there", expires_at=soon)

    assert store.lease_run(mine) is None
    held = store.lease_run(theirs)
    assert held is not None and (held.owner, held.pid, held.host) == ("me", 1, "here") and abs((held.expires_at - soon).total_seconds()) < 0.01
    assert store.lease_run(mine.model_copy(update={"expires_at": soon + timedelta(minutes=1)})) is None  # renewed by its owner
    store.release_run("r", "them")  # not theirs to release
    assert store.lease_run(theirs) is not None
    store.release_run("r", "me")
    assert store.lease_run(theirs) is None


def test_a_lease_that_ran_out_goes_to_the_next_owner(store: Store) -> None:
    past = datetime.now(timezone.utc) - timedelta(seconds=1)
    assert store.lease_run(RunLease(run="r", owner="crashed", pid=1, host="h", expires_at=past)) is None
    assert store.lease_run(RunLease(run="r", owner="me", pid=2, host="h", expires_at=past + timedelta(minutes=5))) is None
    assert store.lease_run(RunLease(run="other", owner="them", pid=3, host="h", expires_at=past + timedelta(minutes=5))) is None


def test_of_processes_taking_a_free_lease_at_once_one_gets_it(backend: Backend) -> None:
    """Eight processes (each its own connection) reach for a run's free lease at the same
    moment, twenty times: on PostgreSQL as many as 6 of the 8 each took it, so two `eval`s,
    `pairwise`es or `align`s started together both ran."""
    stores = [backend.open() for _ in range(8)]
    soon = datetime.now(timezone.utc) + timedelta(minutes=5)

    def reach(run: str, number: int, together: threading.Barrier, holders: list[str]) -> None:
        together.wait()
        if stores[number].lease_run(RunLease(run=run, owner=f"process-{number}", pid=number, host="h", expires_at=soon)) is None:
            holders.append(f"process-{number}")

    try:
        for attempt in range(20):
            together, holders = threading.Barrier(len(stores)), list[str]()
            threads = [threading.Thread(target=reach, args=(f"r{attempt}", number, together, holders)) for number in range(len(stores))]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert len(holders) == 1, f"attempt {attempt}: {holders} each took the lease"
    finally:
        for store in stores:
            store.close()
