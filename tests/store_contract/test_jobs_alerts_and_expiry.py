"""What a store keeps beside the results: a run's provider Batch API jobs (`KeepsBatchJobs`),
monitors' alerts and the retention of live replies' content (`KeepsAlerts`)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from helpers.stored_records import START, live_record, sample_records

from engine import Store
from engine.store import CONTENT_FIELDS, AlertRecord, BatchJob, KeepsAlerts, KeepsBatchJobs


def test_a_runs_batch_jobs_are_kept_with_their_latest_state(store: Store) -> None:
    if not isinstance(store, KeepsBatchJobs):
        pytest.skip(f"{type(store).__name__} keeps no Batch API jobs")
    store.save_batch_job(BatchJob(run="r", batch_id="batch_2", model="openai/m", status="validating", requests=3, created_at=START + timedelta(seconds=1)))
    store.save_batch_job(BatchJob(run="r", batch_id="batch_1", model="openai/m", status="validating", requests=2, created_at=START))
    store.save_batch_job(BatchJob(run="r", batch_id="batch_1", model="openai/m", status="completed", requests=2, created_at=START))
    store.save_batch_job(BatchJob(run="other", batch_id="batch_3", model="openai/m", status="failed", requests=1))

    jobs = store.batch_jobs("r")
    assert [(job.batch_id, job.status, job.requests, job.created_at) for job in jobs] == [
        ("batch_1", "completed", 2, START),
        ("batch_2", "validating", 3, START + timedelta(seconds=1)),
    ]
    assert jobs[0].updated_at > START and store.batch_jobs("none") == []


def test_alerts_are_listed_newest_first_per_monitor(store: Store) -> None:
    if not isinstance(store, KeepsAlerts):
        pytest.skip(f"{type(store).__name__} keeps no alerts")
    for n, (monitor, kind) in enumerate((("m", "alert"), ("other", "alert"), ("m", "recovery"))):
        payload = {"window": 50, "worst": ["i1", "é"]} if kind == "alert" else {}
        store.save_alert(AlertRecord(monitor=monitor, scorer_id="hallucination", kind=kind, value=0.9 - n / 10, message=f"{kind} {monitor}", payload=payload, fired_at=START + timedelta(minutes=n)))  # type: ignore[arg-type]

    assert [(a.kind, a.value, a.payload, a.fired_at) for a in store.alerts("m")] == [
        ("recovery", 0.7, {}, START + timedelta(minutes=2)),
        ("alert", 0.9, {"window": 50, "worst": ["i1", "é"]}, START),
    ]
    assert [a.monitor for a in store.alerts()] == ["m", "other", "m"] and [a.monitor for a in store.alerts(limit=1)] == ["m"]


def test_a_live_replys_content_expires_and_its_scores_and_steps_stay(store: Store) -> None:
    if not isinstance(store, KeepsAlerts):
        pytest.skip(f"{type(store).__name__} limits no content")
    now = datetime.now(timezone.utc)
    old, recent = live_record("live", "old", now - timedelta(days=2)), live_record("live", "recent", now)
    elsewhere = live_record("other", "old", now - timedelta(days=2))
    store.save_many([old, recent, elsewhere, *sample_records("live")])  # batch records of the same run: not live content

    assert store.expire_content("live", now - timedelta(days=1)) == 1
    assert store.expire_content("live", now - timedelta(days=1)) == 0  # nothing left to clear
    records = {r.item_id: r for r in store.query(run="live")}
    cleared = records["old"]
    assert all(getattr(cleared, field) in (None, {}) for field in CONTENT_FIELDS) and cleared.metadata == {}
    assert cleared.content_note == {field: "expired" for field in CONTENT_FIELDS}
    assert (cleared.score, cleared.steps) == (old.score, old.steps)
    assert records["recent"] == recent and records["q1"] == sample_records("live")[0]
    assert store.query(run="other") == [elsewhere]


def test_an_alerts_deliveries_are_kept_until_a_receiver_takes_them(store: Store) -> None:
    if not isinstance(store, KeepsAlerts):
        pytest.skip(f"{type(store).__name__} keeps no alerts")
    alert = AlertRecord(monitor="m", scorer_id="hallucination", kind="alert", value=0.9, message="ALERT m", episode="m-1", fired_at=START)
    saved = store.save_alert(alert, deliveries=[("hook-a", "https://a.example"), ("hook-b", "SCORERS_HOOK")])
    store.save_alert(AlertRecord(monitor="other", scorer_id="hallucination", kind="alert", message="ALERT other", fired_at=START + timedelta(minutes=1)), [("hook-a", "https://a.example")])
    first, second = store.deliveries(monitor="m")

    taken = first.model_copy(update={"state": "delivered", "attempts": 1, "delivered_at": START + timedelta(seconds=5)})
    store.record_delivery(taken)
    store.record_delivery(second.model_copy(update={"attempts": 3, "last_error": "HTTP 503", "next_attempt_at": START + timedelta(hours=1)}))

    assert saved.id is not None and saved.episode == "m-1" and store.alerts("m")[0] == saved
    assert [(d.target, d.where, d.state) for d in (first, second)] == [("hook-a", "https://a.example", "pending"), ("hook-b", "SCORERS_HOOK", "pending")]
    assert [(d.target, d.attempts, d.last_error) for d in store.deliveries(monitor="m")] == [("hook-b", 3, "HTTP 503")]
    assert [d.alert.monitor for d in store.deliveries(due_by=START + timedelta(minutes=30))] == ["other"]  # hook-b waits an hour
    everything = {(d.alert.monitor, d.target): d for d in store.deliveries(pending_only=False)}
    assert everything[("m", "hook-a")] == taken and everything[("m", "hook-a")].alert.episode == "m-1"
