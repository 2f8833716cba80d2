"""The results store: what is persisted, the queries, and concurrent writers."""

from __future__ import annotations

import multiprocessing
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path

from scripted import script_hallucination

from engine import (
    ResultRecord,
    RunInfo,
    SQLiteStore,
    Store,
    create_hallucination_scorer,
    run_evals,
)
from engine.testing import JudgeServer


def record(run: str, item: str, scorer: str = "hallucination", score: float | None = 0.5, **fields: object) -> ResultRecord:
    return ResultRecord(run=run, source="batch", item_id=item, scorer_id=scorer, score=score, **fields)  # type: ignore[arg-type]


def test_a_batch_result_is_persisted_with_everything_needed_to_audit_it(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    scorer = create_hallucination_scorer()
    data = [{"id": "q1", "input": "Who?", "output": "ok. WRONG", "context": ["the facts"], "ground_truth": "x", "label": "hallucinated"}]
    run_evals(data, [scorer], store=tmp_path / "r.sqlite", run="audit")

    with SQLiteStore(tmp_path / "r.sqlite") as store:
        (saved,) = store.query(run="audit")
    assert (saved.run, saved.source, saved.item_id, saved.item_index) == ("audit", "batch", "q1", 1)
    assert saved.scorer_id == "hallucination" and saved.scorer_hash == scorer.fingerprint
    assert saved.model == "openai/gpt-4o-mini" and saved.direction == "lower_is_better"
    assert (saved.input, saved.output, saved.context, saved.ground_truth) == ("Who?", "ok. WRONG", ["the facts"], "x")
    assert saved.metadata == {"label": "hallucinated"}
    assert saved.score == 0.5 and saved.reason == "scripted reason" and saved.error is None
    assert saved.steps["preprocess"].result == {"claims": ["ok", "WRONG"]}
    assert "<output>\nok. WRONG\n</output>" in saved.steps["preprocess"].prompt
    assert "the facts" in saved.steps["analyze"].prompt and saved.steps["generate_reason"].prompt
    # Three judge calls at 50 prompt + 10 completion tokens each (the test server's usage).
    assert (saved.prompt_tokens, saved.completion_tokens, saved.total_tokens) == (150, 30, 180)
    assert saved.latency_ms is not None and saved.latency_ms > 0
    assert saved.started_at <= saved.finished_at


def test_worst_items_first_follow_each_scorers_direction(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "r.sqlite") as store:
        for item, score in (("a", 0.1), ("b", 0.9), ("c", 0.5)):
            store.save(record("r", item, "hallucination", score, direction="lower_is_better"))
            store.save(record("r", item, "faithfulness", score, direction="higher_is_better"))
        store.save(record("r", "d", "faithfulness", None, error="judge down", error_stage="scorer"))

        worst_hallucination = store.query(run="r", scorer="hallucination", worst_first=True)
        worst_faithfulness = store.query(run="r", scorer="faithfulness", worst_first=True)

    assert [r.item_id for r in worst_hallucination] == ["b", "c", "a"]
    assert [r.item_id for r in worst_faithfulness] == ["a", "c", "b", "d"]  # failures last


def test_queries_by_run_scorer_time_and_errors(tmp_path: Path) -> None:
    now = datetime.now(timezone.utc)
    with SQLiteStore(tmp_path / "r.sqlite") as store:
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


def test_saving_the_same_item_again_replaces_it(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "r.sqlite") as store:
        store.save(record("r", "a", score=None, error="judge down", error_stage="scorer"))
        store.save(record("r", "a", score=0.25))
        (saved,) = store.query(run="r")
    assert saved.score == 0.25 and saved.error is None


def test_runs_list_their_summaries_and_keep_their_creation_time(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "r.sqlite") as store:
        first = store.begin_run(RunInfo(name="nightly", meta={"data": "a.jsonl"}))
        store.save(record("nightly", "a", score=0.2))
        store.save(record("nightly", "b", score=0.4))
        store.end_run("nightly", "interrupted")
        again = store.begin_run(RunInfo(name="nightly", meta={"data": "a.jsonl"}))
        (summary,) = store.runs()
    assert again.created_at == first.created_at and again.status == "running"
    assert summary.name == "nightly" and summary.items == 2 and summary.meta == {"data": "a.jsonl"}
    assert summary.scorers[0].mean is not None and abs(summary.scorers[0].mean - 0.3) < 1e-9
    assert isinstance(store, Store)  # SQLite is one implementation of the interface


def test_many_threads_write_one_store(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "r.sqlite") as store:

        def write(thread: int) -> None:
            for n in range(40):
                store.save(record("r", f"{thread}-{n}"))

        threads = [threading.Thread(target=write, args=(thread,)) for thread in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(store.query(run="r")) == 320


def _write_from_process(path: str, process: int) -> None:
    with SQLiteStore(path) as store:
        for n in range(40):
            store.save(record(f"p{process}", f"item-{n}"))


def test_several_processes_write_one_store(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite")
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_write_from_process, args=(path, process)) for process in range(3)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=60)
    assert [process.exitcode for process in processes] == [0, 0, 0]
    with SQLiteStore(path) as store:
        assert len(store.query()) == 120
        journal = store.database.connection.execute("PRAGMA journal_mode").fetchone()[0]
    assert journal == "wal"


def test_human_labels_are_kept_and_a_store_from_before_them_still_opens(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "old.sqlite"
    with SQLiteStore(path) as store:
        store.save(record("r", "a", score=0.5))
    with sqlite3.connect(path) as old:  # as written before labels were stored (schema 4)
        old.execute("DROP INDEX results_outcomes")  # schema 6's, which reads the labels
        old.execute("ALTER TABLE results DROP COLUMN expected")
        old.execute("ALTER TABLE results DROP COLUMN content_note")  # and what later schemas added
        old.execute("DROP TABLE monitor_alerts")
        old.execute("DROP TABLE alert_deliveries")
        old.execute("DROP TRIGGER result_usage_goes_with_its_result")
        old.execute("DROP TABLE result_usage")
        old.execute("DROP INDEX results_failures")
        old.execute("DROP INDEX results_item_positions")
        old.execute("PRAGMA user_version=4")
    with SQLiteStore(path) as store:
        store.save(record("r", "b", score=1.0, expected=True))
        store.save(record("r", "c", score=0.0, expected=0.25))
        labels = {saved.item_id: saved.expected for saved in store.query(run="r")}
    assert labels == {"a": None, "b": True, "c": 0.25}
