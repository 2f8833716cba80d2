"""A run killed with `kill -9` mid-run and resumed: every item either continues from what
was stored or starts over, never both, so the resume sends exactly the requests of the items
not stored (runs/batch/resume.py)."""

from __future__ import annotations

import json
import re
import signal
from collections import Counter
from pathlib import Path

import pytest
from helpers.scripted import script_hallucination
from helpers.stopped_runs import has_saved, stop_mid_run
from typer.testing import CliRunner

from engine.cli import app
from engine.store import SQLiteStore
from engine.testing import JudgeServer

runner = CliRunner()


@pytest.mark.slow
def test_a_resume_after_kill_9_asks_each_item_not_stored_once(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    judge.latency = 0.15
    data, store = tmp_path / "d.jsonl", tmp_path / "r.sqlite"
    data.write_text("".join(json.dumps({"id": f"i{n}", "output": f"answer {n}", "context": ["c"]}) + "\n" for n in range(60)), encoding="utf-8")
    arguments = ["eval", str(data), "--scorer", "hallucination", "--store", str(store), "--run", "killed", "--no-cache", "--concurrency", "8"]
    killed = stop_mid_run(arguments, tmp_path, signal.SIGKILL, when=has_saved(store, "killed", at_least=15))
    assert killed.returncode == -signal.SIGKILL
    with SQLiteStore(store) as results:
        stored = {record.item_id for record in results.query(run="killed", errors=False)}
    judge.reset()
    script_hallucination(judge)

    resumed = runner.invoke(app, arguments)

    assert resumed.exit_code == 0, resumed.output
    asked = Counter((request.schema_name, re.findall(r"answer \d+", request.prompt)[-1]) for request in judge.requests)
    left = [f"answer {n}" for n in range(60) if f"i{n}" not in stored]
    assert sorted(asked.elements()) == sorted([("Claims", output) for output in left] + [("HallucinationVerdicts", output) for output in left])
    assert len(judge.requests) == 2 * len(left)
