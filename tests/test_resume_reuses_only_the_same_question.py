"""Resuming a run reuses a stored result only when the item and the scorer are still the
same; a run refuses other data, other scorers and a second process; old stores upgrade."""

from __future__ import annotations

from engine.judge import JudgeSettings
import json
import os
import shutil
import socket
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from engine.testing import JudgeServer
from helpers.scripted import outputs_judged, script_hallucination
from typer.testing import CliRunner

from engine import ConfigError, SQLiteStore, create_hallucination_scorer, run_evals
from engine.cli import app
from engine.store.sqlite import MIGRATIONS
from engine.store import RunLease
from engine.store.sqlite import MIGRATIONS

FIXTURES = Path(__file__).parent / "fixtures"
runner = CliRunner()


def write(path: Path, items: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    return path


def dataset(ids: bool = True) -> list[dict[str, Any]]:
    return [{**({"id": f"i{n}"} if ids else {}), "output": f"answer {n}. WRONG", "context": ["facts"]} for n in range(5)]


@pytest.mark.parametrize("ids", [True, False], ids=["with ids", "without ids"])
def test_changing_one_item_rejudges_exactly_that_item_and_replaces_its_result(judge: JudgeServer, tmp_path: Path, ids: bool) -> None:
    script_hallucination(judge)
    store = tmp_path / "r.sqlite"
    items = dataset(ids)
    data = write(tmp_path / "data.jsonl", items)
    run_evals(data, [create_hallucination_scorer()], store=store, run="r", cache=False)
    judge.requests.clear()

    items[2]["output"] = "a changed answer"
    second = run_evals(write(data, items), [create_hallucination_scorer()], store=store, run="r", cache=False)

    assert outputs_judged(judge) == ["a changed answer"]
    assert second.counts.reused == 4 and second.counts.scored == 1
    assert second.scores == {"hallucination": pytest.approx((0.5 * 4 + 0.0) / 5)}
    with SQLiteStore(store) as saved:
        records = saved.query(run="r")
    assert len(records) == 5  # replaced, not a second row beside the stale one
    assert "a changed answer" in [record.output for record in records]


def test_a_changed_context_or_ground_truth_is_judged_again(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    store = tmp_path / "r.sqlite"
    items = dataset()
    run_evals(items, [create_hallucination_scorer()], store=store, run="r", cache=False)
    judge.requests.clear()
    items[0]["context"] = ["other facts"]
    items[1]["ground_truth"] = "now with a ground truth"

    run_evals(items, [create_hallucination_scorer()], store=store, run="r", cache=False)

    assert sorted(outputs_judged(judge)) == ["answer 0. WRONG", "answer 1. WRONG"]


def test_resuming_with_another_option_or_model_is_refused_and_replace_starts_over(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    store = tmp_path / "r.sqlite"
    data = write(tmp_path / "data.jsonl", dataset())
    run_evals(data, [create_hallucination_scorer()], store=store, run="r", cache=False)

    with pytest.raises(ConfigError, match=r"cannot resume run 'r': hallucination changed since .*start it over \(replace=\)$"):
        run_evals(data, [create_hallucination_scorer(options={"scale": 10})], store=store, run="r", cache=False)
    with pytest.raises(ConfigError, match="hallucination changed since"):
        run_evals(data, [create_hallucination_scorer(judge=JudgeSettings(mode="tools"))], store=store, run="r", cache=False)
    judge.requests.clear()

    replaced = run_evals(data, [create_hallucination_scorer(options={"scale": 10})], store=store, run="r", cache=False, replace=True)

    assert replaced.scores == {"hallucination": 5.0} and len(outputs_judged(judge)) == 5


def test_resuming_on_another_data_file_is_refused_in_one_line(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    store = tmp_path / "r.sqlite"
    first = write(tmp_path / "first.jsonl", dataset())
    other = write(tmp_path / "other.jsonl", dataset())
    assert runner.invoke(app, ["eval", str(first), "--scorer", "hallucination", "--store", str(store), "--run", "r", "--no-cache"]).exit_code == 0
    judge.requests.clear()

    refused = runner.invoke(app, ["eval", str(other), "--scorer", "hallucination", "--store", str(store), "--run", "r", "--no-cache"])

    assert refused.exit_code == 2
    (line,) = refused.stderr.strip().splitlines()
    assert "cannot resume run 'r': it was started on" in line and "first.jsonl" in line and "--replace" in line
    assert judge.requests == []


def test_a_second_process_resuming_the_same_run_is_refused(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    store = tmp_path / "r.sqlite"
    with SQLiteStore(store) as saved:  # another live process holds the run
        expires = datetime.now(timezone.utc) + timedelta(seconds=60)
        saved.lease_run(RunLease(run="r", owner="elsewhere", pid=os.getpid(), host=socket.gethostname(), expires_at=expires))

    with pytest.raises(ConfigError, match=r"run 'r' is being run by another process \(pid \d+"):
        run_evals(dataset(), [create_hallucination_scorer()], store=store, run="r", cache=False)
    assert judge.requests == []


def test_a_run_left_by_a_dead_process_is_taken_over(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    store = tmp_path / "r.sqlite"
    with SQLiteStore(store) as saved:
        expires = datetime.now(timezone.utc) + timedelta(seconds=60)
        saved.lease_run(RunLease(run="r", owner="crashed", pid=2**22 + 12345, host=socket.gethostname(), expires_at=expires))

    result = run_evals(dataset(), [create_hallucination_scorer()], store=store, run="r", cache=False)

    assert result.status == "complete"


def test_results_says_how_many_results_were_reused_and_rejudged(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    store = tmp_path / "r.sqlite"
    items = dataset()
    data = write(tmp_path / "data.jsonl", items)
    runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--store", str(store), "--run", "r", "--no-cache"])
    items[0]["output"] = "changed"
    runner.invoke(app, ["eval", str(write(data, items)), "--scorer", "hallucination", "--store", str(store), "--run", "r", "--no-cache"])

    shown = runner.invoke(app, ["results", "--store", str(store), "--run", "r"])

    assert shown.exit_code == 0, shown.output
    assert "last invocation (complete): 4 result(s) reused, 1 judged" in shown.stdout


def test_a_store_of_schema_1_is_upgraded_in_place_and_its_runs_resume(judge: JudgeServer, tmp_path: Path) -> None:
    store = tmp_path / "old.sqlite"
    shutil.copy(FIXTURES / "store_v1.sqlite", store)

    with SQLiteStore(store) as upgraded:
        old = upgraded.query(run="old")
        assert {record.item_id: record.score for record in old} == {"item-0": 0.5, "item-1": None}
        assert all(record.item_hash is None for record in old)
        assert [stats.errors for stats in upgraded.summary("old")] == [1]
    with sqlite3.connect(store) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == MIGRATIONS[-1].version  # the latest schema

    script_hallucination(judge)
    items = [{"id": "item-0", "input": "q", "output": "ok", "context": ["facts"]}, {"id": "item-1", "input": "q", "output": "ok", "context": ["facts"]}]
    result = run_evals(items, [create_hallucination_scorer()], store=store, run="old", cache=False)

    # Records without fingerprints cannot be trusted to answer the same question: judged again.
    assert result.counts.reused == 0 and result.status == "complete"
    with SQLiteStore(store) as upgraded:
        assert len(upgraded.query(run="old")) == 2


def test_results_of_items_gone_from_the_data_file_leave_the_run(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    store = tmp_path / "r.sqlite"
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": "a", "output": "ok", "context": ["c"]}) + "\n{broken\n", encoding="utf-8")
    assert run_evals(data, [create_hallucination_scorer()], store=store, run="r", cache=False).status == "incomplete"

    data.write_text(json.dumps({"id": "a", "output": "ok", "context": ["c"]}) + "\n" + json.dumps({"id": "b", "output": "WRONG", "context": ["c"]}) + "\n", encoding="utf-8")
    again = run_evals(data, [create_hallucination_scorer()], store=store, run="r", cache=False)

    assert again.status == "complete"
    with SQLiteStore(store) as saved:
        assert sorted(record.item_id for record in saved.query(run="r")) == ["a", "b"]
        assert [stats.errors for stats in saved.summary("r")] == [0]  # the fixed line's old error is gone


@pytest.mark.slow
def test_two_processes_resuming_one_run_the_second_is_refused(judge: JudgeServer, tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    script_hallucination(judge, delay=0.2)
    data = write(tmp_path / "data.jsonl", [{"id": f"i{n}", "output": f"answer {n}. WRONG", "context": ["facts"]} for n in range(30)])
    store = tmp_path / "r.sqlite"
    arguments = ["eval", str(data), "--scorer", "hallucination", "--store", str(store), "--run", "shared", "--concurrency", "1"]
    first = subprocess.Popen([str(Path(sys.executable).parent / "scorers"), *arguments], env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        saved = 0
        while saved < 1 and time.monotonic() < deadline:
            time.sleep(0.1)
            if store.exists():
                with SQLiteStore(store) as results:
                    saved = len(results.query(run="shared"))
        second = runner.invoke(app, arguments)
        assert second.exit_code == 2, second.output
        assert "run 'shared' is being run by another process (pid" in second.stderr
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=30)
