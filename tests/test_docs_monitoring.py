"""docs/monitoring.md is true: its files, Python and commands run as written, in order,
against the scripted judge, and its example alert has the shape alerts have."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
from helpers.preference import script_preference
from helpers.receiver import Receiver
from helpers.scripted import script_hallucination
from typer.testing import CliRunner

from engine.cli import app
from engine.runs.monitors import Alert
from engine.store import SQLiteStore
from engine.testing import JudgeServer

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


def blocks() -> list[tuple[str, str | None, str]]:
    """(language, file name or None, body) of every fenced block, in order."""
    text = (ROOT / "docs" / "monitoring.md").read_text(encoding="utf-8")
    return [(language, name or None, body) for language, name, body in re.findall(r"```(\w+)(?: (\S+))?\n(.*?)```", text, re.DOTALL)]


def test_every_example_of_the_monitoring_page_runs(judge: JudgeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script_hallucination(judge)
    script_preference(judge)
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    commands = 0
    with Receiver() as slack:
        monkeypatch.setenv("SLACK_WEBHOOK_URL", slack.url)
        for language, name, body in blocks():
            if name is not None:
                (tmp_path / name).write_text(body, encoding="utf-8")
            elif language == "python":
                exec(compile(body, "docs/monitoring.md", "exec"), namespace)  # noqa: S102 - the page's own examples
            elif language == "bash":
                for line in body.replace("\\\n", " ").splitlines():
                    result = runner.invoke(app, shlex.split(line)[1:], env={"COLUMNS": "200"})
                    assert result.exit_code == 0, f"{line}\n{result.output}"
                    commands += 1
            elif language == "json":
                assert set(json.loads(body)) <= set(Alert.model_fields)
    assert commands == 5
    with SQLiteStore(tmp_path / "scores.sqlite") as store:
        runs = {run.name: run for run in store.runs()}
        assert {"agent-v1", "agent-v2", "agent-v1-strict", "agent-v1-strict-py", "v1-vs-v2"} <= set(runs)
        assert runs["agent-v1-strict"].meta["rescored_from"]["run"] == "agent-v1" and runs["agent-v1-strict"].items == 3
        assert {record.score for record in store.query(run="v1-vs-v2")} == {0.5}  # the scripted judge prefers neither: ties
    assert slack.bodies == []  # three calm replies: nobody is paged
