"""A store written by any earlier release opens upgraded in place, every row reading back as
that release saved it. For each earlier schema version the database is built with that
version's migrations and filled as that release wrote its rows (the columns it had, JSON and
timestamps as it kept them, usage rows from version 8), then opened by this release."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from helpers.stored_records import START, live_record, sample_records, usage_figures

from engine import RunInfo
from engine.db import Database
from engine.store import KeepsAlerts, KeepsBatchJobs, ReadsInBulk, ResultRecord, RunLease, SharesWork, store_shares_work
from engine.store.sql import usage_of

from .conftest import Backend

#: The results' columns of schema 1, and those each later version added.
FIRST_COLUMNS = (
    "run", "source", "item_id", "item_index", "scorer_id", "scorer_hash", "model", "direction", "score", "reason", "error", "error_stage",
    "input", "output", "context", "ground_truth", "metadata", "steps", "prompt_tokens", "completion_tokens", "total_tokens", "latency_ms",
    "started_at", "finished_at",
)
ADDED = {2: ("judges", "disagreement"), 4: ("item_hash", "not_scorable"), 5: ("expected",), 7: ("content_note",)}
JSON_COLUMNS = {"input", "output", "context", "ground_truth", "metadata", "steps", "judges", "expected", "content_note"}
#: The first version of each table beside the results.
USAGE_ROWS, BATCH_JOBS, LEASES, ALERTS, OUTBOX = 8, 3, 4, 7, 9
#: The version from which results are kept as pieces: this test writes rows as the releases before it did.
CONTENTS = 10


def columns_at(version: int) -> tuple[str, ...]:
    return FIRST_COLUMNS + tuple(column for added, columns in ADDED.items() if added <= version for column in columns)


def as_kept(record: ResultRecord, version: int) -> ResultRecord:
    """The record as a release of `version` kept it: without what its schema had no column for."""
    missing = {column for added, columns in ADDED.items() if added > version for column in columns}
    return record.model_copy(update=dict.fromkeys(missing))


def write_as_release(backend: Backend, database: Database, version: int, records: list[ResultRecord]) -> None:
    mark, columns = database.placeholder, columns_at(version)
    with database.transaction() as db:
        db.execute(
            f"INSERT INTO runs (name, source, status, created_at, updated_at, meta) VALUES ({', '.join(mark for _ in range(6))})",
            ("nightly", "batch", "complete", backend.moment(START), backend.moment(START), backend.json({"data": "qa.jsonl", "scorers": {"hallucination": "s"}})),
        )
        for record in records:
            values = record.model_dump()
            row = [backend.json(values[c]) if c in JSON_COLUMNS else backend.moment(values[c]) if c.endswith("_at") else values[c] for c in columns]
            db.execute(f"INSERT INTO results ({', '.join(columns)}) VALUES ({', '.join(mark for _ in columns)})", row)
            if version >= USAGE_ROWS:
                key = f"run = {mark} AND item_id = {mark} AND scorer_id = {mark}"
                for usage in usage_of(record):
                    db.execute(
                        f"INSERT INTO result_usage (result_id, {', '.join(usage._fields)}) "
                        f"SELECT id, {', '.join(mark for _ in usage)} FROM results WHERE {key}",
                        (*usage, record.run, record.item_id, record.scorer_id),
                    )
        if version >= BATCH_JOBS:
            db.execute(
                f"INSERT INTO batch_jobs (run, batch_id, model, status, requests, created_at, updated_at) VALUES ({', '.join(mark for _ in range(7))})",
                ("nightly", "batch_1", "openai/m", "in_progress", 2, backend.moment(START), backend.moment(START)),
            )
        if version >= LEASES:
            db.execute(
                f"INSERT INTO run_leases (run, owner, pid, host, expires_at) VALUES ({', '.join(mark for _ in range(5))})",
                ("nightly", "old-worker", 7, "box", backend.moment(datetime.now(timezone.utc) + timedelta(hours=1))),
            )
        if ALERTS <= version < OUTBOX:
            db.execute(
                f"INSERT INTO monitor_alerts (monitor, scorer_id, kind, value, message, payload, fired_at) VALUES ({', '.join(mark for _ in range(7))})",
                ("m", "hallucination", "alert", 0.9, "ALERT m", backend.json({"window": 50}), backend.moment(START)),
            )
        if version >= OUTBOX:  # the alert with its episode, and its delivery to a webhook still to be made
            db.execute(
                f"INSERT INTO monitor_alerts (monitor, scorer_id, kind, value, message, payload, fired_at, episode) VALUES ({', '.join(mark for _ in range(8))})",
                ("m", "hallucination", "alert", 0.9, "ALERT m", backend.json({"window": 50}), backend.moment(START), "m-1"),
            )
            db.execute(
                f"INSERT INTO alert_deliveries (alert_id, target, target_name, state, attempts, next_attempt_at) "
                f"SELECT id, {mark}, {mark}, 'pending', 2, {mark} FROM monitor_alerts WHERE episode = 'm-1'",
                ("digest-of-the-hook", "https://hooks.example", backend.moment(START)),
            )


def expected_usage(records: list[ResultRecord]) -> dict[tuple[str, str | None, bool], tuple[int, ...]]:
    figures: dict[tuple[str, str | None, bool], list[int]] = {}
    for record in records:
        for usage in usage_of(record):
            sums = figures.setdefault((record.scorer_id, usage.model, usage.batch), [0] * 6)
            for n, figure in enumerate((usage.judge_calls, usage.cached_calls, usage.prompt_tokens, usage.completion_tokens, usage.cached_prompt_tokens, usage.reasoning_tokens)):
                sums[n] += figure
    return {key: tuple(sums) for key, sums in figures.items()}


def earlier_versions() -> list[int]:
    from engine.store.sqlite_schema import MIGRATIONS

    # Versions after CONTENTS add tables beside the results (review queues: test_labels.py).
    return [migration.version for migration in MIGRATIONS if migration.version < CONTENTS]


@pytest.mark.parametrize("version", earlier_versions())
def test_a_store_of_an_earlier_schema_opens_with_every_row_as_it_was_saved(backend: Backend, version: int) -> None:
    written = [*sample_records(), live_record("nightly", "live-1", START - timedelta(days=3), content_note={"input": "truncated"})]
    database = backend.database(backend.migrations[:version])
    try:
        write_as_release(backend, database, version, written)
    finally:
        database.close()
    kept = [as_kept(record, version) for record in written]

    with backend.open() as store:
        assert {(r.item_id, r.scorer_id): r for r in store.query(run="nightly")} == {(r.item_id, r.scorer_id): r for r in kept}
        (run,) = store.runs()
        assert (run.name, run.status, run.items, run.meta, run.kind) == ("nightly", "complete", 6, {"data": "qa.jsonl", "scorers": {"hallucination": "s"}}, "batch")
        assert usage_figures(store, "nightly") == expected_usage(kept)
        assert store.item_records("nightly", "q1") == [kept[0], kept[4]]  # what a resume reads, fingerprints and all
        if isinstance(store, ReadsInBulk):
            assert store.score_values("nightly", "hallucination") == [0.0, 0.5, 0.5]
            labels = [(row.item_id, row.expected) for row in store.labelled_scores("nightly", "hallucination")]
            assert labels == ([("q1", True), ("q2", False)] if version >= 5 else [])
            assert store.records_by_id(store.ordered_ids("nightly"))[0] == kept[4]
        if isinstance(store, KeepsBatchJobs):
            assert [(job.batch_id, job.status) for job in store.batch_jobs("nightly")] == ([("batch_1", "in_progress")] if version >= BATCH_JOBS else [])
        if version >= LEASES:
            held = store.lease_run(RunLease(run="nightly", owner="me", pid=1, host="here", expires_at=datetime.now(timezone.utc) + timedelta(minutes=1)))
            assert held is not None and held.owner == "old-worker"
        if isinstance(store, KeepsAlerts):
            assert [(alert.message, alert.payload) for alert in store.alerts()] == ([("ALERT m", {"window": 50})] if version >= ALERTS else [])
            pending = [(d.alert.episode, d.where, d.attempts, d.next_attempt_at) for d in store.deliveries()]
            assert pending == ([("m-1", "https://hooks.example", 2, START)] if version >= OUTBOX else [])
            assert store.expire_content("nightly", START) == 1  # the live reply's content, stored before expiry existed or not
            assert store.item_records("nightly", "live-1")[0].output is None

        # Written to as any store: a record saved again replaces the old one, a new run starts.
        changed = kept[1].model_copy(update={"score": 1.0, "reason": "judged again"})
        store.save(changed)
        store.begin_run(RunInfo(name="after"))
        store.save_many(sample_records("after"))
        assert store.item_records("nightly", "q2") == [changed]
        assert {(r.item_id, r.scorer_id): r for r in store.query(run="after")} == {(r.item_id, r.scorer_id): r for r in sample_records("after")}
        store.delete_run("nightly")
        assert store.query(run="after") and store.query(run="nightly") == []


@pytest.mark.parametrize("version", [1, 8])
def test_a_shared_runs_queue_survives_the_upgrade(backend: Backend, version: int) -> None:
    if not store_shares_work(backend.location):
        pytest.skip(f"the {backend.name} store does not share work")
    database = backend.database(backend.migrations[:version])
    try:
        with database.transaction() as db:
            mark = database.placeholder
            for index in range(3):
                db.execute(f"INSERT INTO work_items (run, item_index, item_id, payload) VALUES ({mark}, {mark}, {mark}, {mark})", ("split", index, f"i{index}", backend.json({"item": index})))
    finally:
        database.close()

    with backend.open() as store:
        assert isinstance(store, SharesWork)
        assert [(item.index, item.payload) for item in store.claim("split", "w", 10, lease_s=30)] == [(n, {"item": n}) for n in range(3)]

