"""Monitors, re-scoring and pairwise runs over the PostgreSQL store, against a real server:
one database that a fleet of live hosts writes and one watcher reads."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from helpers.monitoring import drifted_fleet, rising_monitor_file
from helpers.receiver import Receiver
from helpers.strictness import script_strictness, strict_variant
from typer.testing import CliRunner

from engine import LiveScorer, create_hallucination_scorer, load_scorers
from engine.cli import app
from engine.runs.stored.rescoring import rescore, score_changes
from engine.store import AlertRecord, KeepsAlerts, open_store
from engine.testing import JudgeServer

runner = CliRunner()


def test_alerts_and_content_limits_are_kept_in_postgresql(judge: JudgeServer, postgres_url: str) -> None:
    script_strictness(judge)
    live = LiveScorer(create_hallucination_scorer(options={"context": ["facts"]}), store=postgres_url, store_content={"max_chars": 20})
    live.submit("ok", input="q", run_id="short", metadata={"password": "hunter2hunter2"})
    live.submit("ok. " + "y" * 40, input="q", run_id="long")
    assert live.close(timeout=30)
    store = open_store(postgres_url)
    assert store is not None and isinstance(store, KeepsAlerts)
    try:
        records = {record.item_id: record for record in store.query(run="live")}
        assert records["short"].metadata == {"password": "***"} and records["short"].content_note is None
        assert records["long"].output == "ok. " + "y" * 16 and records["long"].content_note == {"output": "truncated"}
        store.save_alert(AlertRecord(monitor="m", scorer_id="hallucination", kind="alert", value=0.9, message="ALERT m", payload={"a": 1}))
        store.save_alert(AlertRecord(monitor="m", scorer_id="hallucination", kind="recovery", value=0.1, message="RECOVERED m"))
        assert [(alert.kind, alert.payload) for alert in store.alerts("m")] == [("recovery", {}), ("alert", {"a": 1})]
        assert store.expire_content("live", datetime.now(timezone.utc) + timedelta(seconds=1)) == 2
        assert all(record.output is None and record.score is not None for record in store.query(run="live"))
    finally:
        store.close()


def test_one_watcher_alerts_once_over_a_fleet_writing_to_postgresql(judge: JudgeServer, postgres_url: str, tmp_path: Path) -> None:
    drifted_fleet(judge, postgres_url, hosts=2, replies_each=5)
    with Receiver() as receiver:
        path = rising_monitor_file(tmp_path / "monitors.yaml", receiver.url, statistic="p50", min_samples=10)
        for _ in range(2):
            result = runner.invoke(app, ["monitor", "--monitors", str(path), "--store", postgres_url, "--send", "--json"])
            assert result.exit_code == 0, result.output
        (state,) = json.loads(result.stdout)["monitors"]
        assert state["state"] == "alerting" and state["window"]["samples"] == 10
        assert [body["kind"] for body in receiver.bodies] == ["alert"]


def test_rescore_and_compare_in_postgresql(judge: JudgeServer, postgres_url: str, tmp_path: Path) -> None:
    script_strictness(judge)
    live = LiveScorer(create_hallucination_scorer(options={"context": ["facts"]}), store=postgres_url)
    for run_id, reply in {"a": "ok", "b": "ok. maybe"}.items():
        live.submit(reply, input=f"q {run_id}", run_id=run_id)
    assert live.close(timeout=30)
    variant = load_scorers(strict_variant(tmp_path)).create("hallucination", options={"context": ["facts"]})
    store = open_store(postgres_url)
    assert store is not None
    try:
        outcome = rescore(store, "live", variant, new_run="strict")
        (changes,) = score_changes(store, "live", "strict")
    finally:
        store.close()
    assert outcome.items == 2 and [(item.item_id, item.after) for item in changes.changed] == [("b", 0.5)]
