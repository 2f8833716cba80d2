"""Stores written by an earlier release open, upgraded in place, with every record kept;
one written by a newer release is refused rather than misread."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from helpers.stored_records import usage_figures

from engine.errors import ConfigError
from engine.store import BatchJob, SQLiteStore
from engine.db.migrations import Migration, check_sequence, pending
from engine.store.sqlite_schema import MIGRATIONS

FIXTURES = Path(__file__).parent / "fixtures"


def test_a_store_file_of_schema_1_opens_with_its_runs_and_records(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    shutil.copy(FIXTURES / "store-schema-1.sqlite", path)  # written by the release before migrations

    with SQLiteStore(path) as store:
        (run,) = store.runs()
        records = {record.item_id: record for record in store.query(run="nightly")}
        store.save_batch_job(BatchJob(run="nightly", batch_id="batch_1", model="openai/m", status="in_progress", requests=2))
        jobs = store.batch_jobs("nightly")

    assert (run.name, run.status, run.items, run.meta) == ("nightly", "complete", 3, {"data": "qa.jsonl"})
    assert records["q1"].score == 0.7 and records["q1"].context == ["facts"] and records["q1"].total_tokens == 60
    assert records["q2"].error == "judge down" and records["q2"].judges is None
    assert [job.batch_id for job in jobs] == ["batch_1"]
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == MIGRATIONS[-1].version


def test_a_store_file_of_schema_2_keeps_its_jury_verdicts(tmp_path: Path) -> None:
    path = tmp_path / "juries.sqlite"
    shutil.copy(FIXTURES / "store-schema-2.sqlite", path)  # written by the release that added juries

    with SQLiteStore(path) as store:
        (record,) = store.query(run="jury")
        store.save_batch_job(BatchJob(run="jury", batch_id="batch_2", model="openai/a", status="completed", requests=1))
        (job,) = store.batch_jobs("jury")

    assert record.score == 0.25 and record.disagreement is True
    assert [(verdict.model, verdict.score) for verdict in record.judges or []] == [("openai/a", 0.0), ("openai/b", 0.5)]
    assert job.batch_id == "batch_2"


def test_a_store_of_a_newer_release_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    SQLiteStore(path).close()
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA user_version=99")
    with pytest.raises(ConfigError, match=r"new\.sqlite was written by a newer version of llm-scorers \(store schema 99"):
        SQLiteStore(path)


def test_migrations_are_numbered_without_gaps_and_only_the_missing_ones_run() -> None:
    steps = [Migration(1, "a", ()), Migration(2, "b", ()), Migration(3, "c", ())]
    check_sequence(steps)
    assert [m.version for m in pending(steps, 1, "db")] == [2, 3]
    assert pending(steps, 3, "db") == []
    with pytest.raises(ValueError, match="without gaps"):
        check_sequence([Migration(1, "a", ()), Migration(3, "c", ())])


# What the release before store schema 8 reported for the runs of store-schema-7.sqlite
# (written by that release: plain, cached and Batch API steps, failures, a jury whose judges
# keep their steps, one stored before they did, a scorer that asks no judge, a second run).
USAGE_BEFORE_SCHEMA_8 = {
    "mixed": {
        ("hallucination", "openai/gpt-4o-mini", False): (2, 2, 700, 100, 100, 20),
        ("hallucination", "openai/gpt-4o-mini", True): (2, 0, 720, 102, 50, 0),
        ("faithfulness", "anthropic/claude-3-5-haiku", False): (1, 1, 150, 15, 30, 0),
        ("faithfulness", "openai/gpt-4o", False): (2, 0, 200, 20, 0, 5),
        ("faithfulness", "jury", False): (1, 0, 500, 50, 0, 0),
    },
    "other": {("hallucination", "openai/gpt-4o-mini", False): (1, 0, 7, 1, 0, 0)},
}


def test_a_store_of_schema_7_reports_the_same_calls_and_tokens_once_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "usage.sqlite"
    shutil.copy(FIXTURES / "store-schema-7.sqlite", path)

    with SQLiteStore(path) as store:
        upgraded = {run: usage_figures(store, run) for run in USAGE_BEFORE_SCHEMA_8}
        records = store.query()
    # The same records saved by this release count the same (the upgrade and the save agree).
    with SQLiteStore(tmp_path / "fresh.sqlite") as fresh:
        fresh.save_many(records)
        saved = {run: usage_figures(fresh, run) for run in USAGE_BEFORE_SCHEMA_8}

    assert upgraded == saved == USAGE_BEFORE_SCHEMA_8
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == MIGRATIONS[-1].version


def test_a_process_of_the_previous_release_cannot_write_results_this_one_would_read_empty(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    SQLiteStore(path).close()  # upgraded by this release while an older one still has the file open
    insert = (
        "INSERT INTO results (run, source, item_id, scorer_id, direction, metadata, steps, started_at, finished_at) "
        "VALUES ('r', 'batch', 'a', 'hallucination', 'lower_is_better', '{}', '{}', 0, 0)"
    )

    with sqlite3.connect(path) as old, pytest.raises(sqlite3.IntegrityError, match="upgraded by a newer release of llm-scorers"):
        old.execute(insert)  # as that release saved a result
    with SQLiteStore(path) as store:
        assert store.query() == []


def test_an_upgraded_store_file_gives_the_space_its_results_no_longer_take_back_to_the_disk(tmp_path: Path) -> None:
    from engine.db.sqlite import SQLiteDatabase
    from engine.formatting import to_json

    path = tmp_path / "old.sqlite"
    # As the release before results were kept as pieces (the migration that shrinks a file) left it.
    contents = next(migration.version for migration in MIGRATIONS if migration.shrinks)
    database = SQLiteDatabase(path, MIGRATIONS[: contents - 1])
    rules = "\n\n".join(f"Rule {n}: judge each claim against the context only, never against what you know yourself." for n in range(12))
    with database.transaction() as db:
        for n in range(300):
            steps = {"claims": {"id": "claims", "kind": "llm", "prompt": f"{rules}\n\n<output>\nAnswer number {n} is {n * 7}.\n</output>", "result": {"claims": [f"claim {n}"]}}}
            db.execute(
                "INSERT INTO results (run, source, item_id, scorer_id, direction, metadata, steps, started_at, finished_at) "
                "VALUES ('r', 'batch', ?, 'hallucination', 'lower_is_better', '{}', ?, 0, 0)",
                (f"i{n}", to_json(steps)),
            )
    database.close()
    before = path.stat().st_size

    with SQLiteStore(path) as store:
        records = {record.item_id: record for record in store.query(run="r")}

    assert path.stat().st_size < before / 2  # not left at its old size, with its freed pages inside
    assert len(records) == 300 and records["i7"].steps["claims"].prompt == f"{rules}\n\n<output>\nAnswer number 7 is 49.\n</output>"
