"""Runs and their results: what is saved reads back exactly, by every query, and replaces
what was saved under the same key."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest
from helpers.scripted import script_hallucination
from helpers.stored_records import record, sample_records

from engine import RunInfo, Store, create_hallucination_scorer, run_evals
from engine.errors import ConfigError
from engine.store import ReadsInBulk
from engine.testing import JudgeServer

from .conftest import Backend


def by_key(records: list) -> dict:  # type: ignore[type-arg]
    return {(saved.item_id, saved.scorer_id): saved for saved in records}


def test_every_record_reads_back_exactly_as_it_was_saved(store: Store) -> None:
    saved = sample_records()
    store.save_many(saved)

    assert by_key(store.query(run="nightly")) == by_key(saved)
    assert store.item_records("nightly", "q1") == [saved[0], saved[4]]
    if isinstance(store, ReadsInBulk):
        assert store.records_by_id(store.ordered_ids("nightly")) == [saved[4], saved[0], saved[1], saved[2], saved[3], saved[5]]


def test_a_batch_result_is_saved_with_everything_needed_to_audit_it(backend: Backend, judge: JudgeServer) -> None:
    script_hallucination(judge)
    scorer = create_hallucination_scorer()
    data = [{"id": "q1", "input": "Who?", "output": "ok. WRONG", "context": ["the facts"], "ground_truth": "x", "label": "hallucinated"}]
    run_evals(data, [scorer], store=backend.location, run="audit")

    with backend.open() as store:
        (saved,) = store.query(run="audit")
    assert (saved.run, saved.source, saved.item_id, saved.item_index) == ("audit", "batch", "q1", 1)
    assert saved.scorer_id == "hallucination" and saved.scorer_hash == scorer.fingerprint
    assert saved.model == "openai/gpt-4o-mini" and saved.direction == "lower_is_better"
    assert (saved.input, saved.output, saved.context, saved.ground_truth) == ("Who?", "ok. WRONG", ["the facts"], "x")
    assert saved.metadata == {"label": "hallucinated"}
    assert saved.score == 0.5 and saved.reason == "scripted reason" and saved.error is None
    assert saved.steps["preprocess"].result == {"claims": ["ok", "WRONG"]}
    assert "<output>\nok. WRONG\n</output>" in (saved.steps["preprocess"].prompt or "")
    assert "the facts" in (saved.steps["analyze"].prompt or "") and saved.steps["generate_reason"].prompt
    # Three judge calls at 50 prompt + 10 completion tokens each (the test server's usage).
    assert (saved.prompt_tokens, saved.completion_tokens, saved.total_tokens) == (150, 30, 180)
    assert saved.latency_ms is not None and saved.latency_ms > 0
    assert saved.started_at <= saved.finished_at


def test_worst_items_first_follow_each_scorers_direction(store: Store) -> None:
    for item, score in (("a", 0.1), ("b", 0.9), ("c", 0.5)):
        store.save(record("r", item, "hallucination", score, direction="lower_is_better"))
        store.save(record("r", item, "faithfulness", score, direction="higher_is_better"))
    store.save(record("r", "d", "faithfulness", None, error="judge down", error_stage="scorer"))

    assert [r.item_id for r in store.query(run="r", scorer="hallucination", worst_first=True)] == ["b", "c", "a"]
    assert [r.item_id for r in store.query(run="r", scorer="faithfulness", worst_first=True)] == ["a", "c", "b", "d"]  # failures last
    assert [r.item_id for r in store.query(run="r", scorer="faithfulness", worst_first=True, limit=2)] == ["a", "c"]


def test_queries_by_run_scorer_time_and_errors(store: Store) -> None:
    now = datetime.now(timezone.utc)
    store.save(record("old", "a", finished_at=now - timedelta(days=2)))
    store.save(record("new", "a", finished_at=now))
    store.save(record("new", "b", "faithfulness", finished_at=now))
    store.save(record("new", "c", score=None, error="boom", error_stage="scorer", finished_at=now))

    assert {r.run for r in store.query(since=now - timedelta(days=1))} == {"new"}
    assert [r.run for r in store.query(until=now - timedelta(days=1))] == ["old"]
    assert {r.item_id for r in store.query(run="new", scorer="hallucination")} == {"a", "c"}
    assert [r.item_id for r in store.query(run="new", errors=True)] == ["c"]
    assert len(store.query(run="new", errors=False)) == 2
    assert len(store.query(limit=1)) == 1
    summary = {s.scorer_id: s for s in store.summary("new")}
    assert (summary["hallucination"].count, summary["hallucination"].errors, summary["hallucination"].mean) == (1, 1, 0.5)


def test_saving_the_same_item_again_replaces_it(store: Store) -> None:
    first, *_ = sample_records()
    store.save(first.model_copy(update={"score": None, "error": "judge down", "error_stage": "scorer"}))
    store.save(first)
    assert store.query(run="nightly") == [first]


def test_ending_a_run_adds_each_count_to_the_stored_one(store: Store) -> None:
    """Every invocation (and every worker) of a run adds the judge calls it sent: none is lost
    to another's end, and a meta key merged beside them stays."""
    store.begin_run(RunInfo(name="nightly", meta={"data": "a.jsonl"}))
    store.end_run("nightly", "interrupted", added={"judge_calls_sent": 7})
    store.end_run("nightly", "complete", meta={"reused": 2}, added={"judge_calls_sent": 5})
    found = store.get_run("nightly")
    assert found is not None and found.meta == {"data": "a.jsonl", "reused": 2, "judge_calls_sent": 12}


def test_runs_list_their_summaries_keep_their_creation_time_and_can_be_forgotten(store: Store) -> None:
    first = store.begin_run(RunInfo(name="nightly", meta={"data": "a.jsonl"}))
    store.save(record("nightly", "a", score=0.2))
    store.save(record("nightly", "b", score=0.4, not_scorable=None))
    store.save(record("nightly", "c", score=None, not_scorable="the output is empty"))
    store.end_run("nightly", "interrupted", meta={"stopped": "budget"})
    again = store.begin_run(RunInfo(name="nightly", meta={"data": "a.jsonl"}))
    store.end_run("nightly", "complete", meta={"reused": 2})
    (summary,) = store.runs()

    assert again.created_at == first.created_at and again.status == "running"
    assert (summary.name, summary.status, summary.items) == ("nightly", "complete", 3)
    assert summary.meta == {"data": "a.jsonl", "reused": 2}
    (scorer,) = summary.scorers
    assert (scorer.count, scorer.not_scorable, scorer.errors) == (2, 1, 0) and scorer.mean is not None and abs(scorer.mean - 0.3) < 1e-9

    store.delete_run("nightly")
    assert store.get_run("nightly") is None and store.query(run="nightly") == [] and store.runs() == []


def test_items_gone_from_the_data_leave_the_run_and_the_rest_stay_whole(store: Store) -> None:
    saved = sample_records()
    store.save_many(saved)

    assert store.prune_run("nightly", keep={"q2", "q5"}) == 3  # items q1 (two scorers), q3, q4
    assert by_key(store.query(run="nightly")) == by_key([saved[1], saved[5]])


def test_many_threads_write_one_store(store: Store) -> None:
    def write(thread: int) -> None:
        for n in range(40):
            store.save(record("r", f"{thread}-{n}"))

    threads = [threading.Thread(target=write, args=(thread,)) for thread in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store.query(run="r")) == 320


def test_a_run_keeps_its_kind_and_what_it_was_started_with(store: Store) -> None:
    from engine.runs.identity import claim_run

    claim_run(store, "nightly", "batch", started_with={"data": "qa.jsonl", "scorers": {"hallucination": "s"}}, meta={"concurrency": 8})
    claim_run(store, "agent-v1", "live", source="live")
    store.end_run("nightly", "interrupted", meta={"stopped": "budget"})
    resumed = claim_run(store, "nightly", "batch", started_with={"data": "qa.jsonl", "scorers": {"hallucination": "s"}})

    nightly, live = store.get_run("nightly"), store.get_run("agent-v1")
    assert nightly is not None and live is not None and resumed.resumed
    assert (nightly.kind, live.kind, live.source) == ("batch", "live", "live")
    assert nightly.meta["started_with"] == {"data": "qa.jsonl", "scorers": {"hallucination": "s"}}
    assert (nightly.meta["concurrency"], nightly.meta["stopped"]) == (8, "budget")
    with pytest.raises(ConfigError, match="'agent-v1' is a live run"):
        claim_run(store, "agent-v1", "batch")
