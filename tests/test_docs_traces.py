"""docs/traces.md is true: its catalog, receiver, app and commands run as written, in order:
`scorers collect` as its own process, the page's app (the real OpenAI SDK, instrumented by
OpenInference, calling the scripted server) exporting to it over OTLP/HTTP, then the results,
the report and a batch run of a Collector file."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.scripted import script_hallucination
from typer.testing import CliRunner

from engine import load_scorers
from engine.cli import app
from engine.store import SQLiteStore
from engine.testing import JudgeServer

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
FIXTURES = Path(__file__).parent / "fixtures" / "traces"
runner = CliRunner()
ANSWER = "The Eiffel Tower is in Paris."


def blocks() -> list[tuple[str, str | None, str]]:
    text = (ROOT / "docs" / "traces.md").read_text(encoding="utf-8")
    return [(language, name or None, body) for language, name, body in re.findall(r"```(\w+)(?: (\S+))?\n(.*?)```", text, re.DOTALL)]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_scores(store: Path, count: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if store.exists():
            with SQLiteStore(store) as opened:
                if len(opened.query(run="traces")) >= count:
                    return
        time.sleep(0.2)
    raise AssertionError(f"fewer than {count} scores in {store} after {timeout}s")


def test_every_example_of_the_traces_page_runs(judge: JudgeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script_hallucination(judge)
    judge.on(None, ANSWER)  # the app's own question
    judge.on("TaskCompletion", {"verdict": "yes", "unmet": [], "reason": "answered"})
    shutil.copy(FIXTURES / "openinference.otlp.jsonl", tmp_path / "traces.jsonl")  # what the Collector's file exporter wrote
    monkeypatch.chdir(tmp_path)
    port = str(free_port())  # the page's 4318 may be taken on a shared machine
    collector: subprocess.Popen[str] | None = None
    ran: list[str] = []
    try:
        for language, name, body in blocks():
            if name is not None:
                (tmp_path / name).write_text(body, encoding="utf-8")
            elif language == "yaml":  # a fragment of a catalog: it loads as one
                (tmp_path / "fragment.yaml").write_text("scorers: {}\n" + body, encoding="utf-8")
                assert load_scorers(tmp_path / "fragment.yaml").traces is not None
            elif language == "bash":
                for line in body.strip().splitlines():
                    words = shlex.split(line.replace("4318", port))
                    ran.append(words[0] if words[0] != "scorers" else " ".join(words[:2]))
                    if words[0] == "pip":
                        continue  # the environment these tests run in
                    if words[:2] == ["scorers", "collect"]:
                        collector = subprocess.Popen([str(BIN / "scorers"), *words[1:]], cwd=tmp_path, env=dict(os.environ), stderr=subprocess.PIPE, text=True)
                        assert collector.stderr is not None
                        announced = collector.stderr.readline()
                        assert f"Receiving traces at http://127.0.0.1:{port}/v1/traces" in announced, announced
                    elif words[0].startswith("OTEL_"):
                        variable, _, endpoint = words[0].partition("=")
                        done = subprocess.run([sys.executable, *words[2:]], cwd=tmp_path, env={**os.environ, variable: endpoint},
                                              capture_output=True, text=True, timeout=120)
                        assert done.returncode == 0, done.stderr[-3000:]
                        wait_for_scores(tmp_path / ".scorers" / "results.sqlite", 3)
                        assert collector is not None
                        collector.send_signal(signal.SIGINT)
                        _, said = collector.communicate(timeout=60)
                        assert collector.returncode == 0, said
                        assert "Stopped: 3 spans, 1 traces, 2 items scored, 0 spans that did not fit, 0 spans shed" in said
                    else:
                        result = runner.invoke(app, words[1:], env={"COLUMNS": "200"})
                        assert result.exit_code == 0, f"{line}\n{result.output}"
                        if words[:2] == ["scorers", "results"]:
                            for scorer in ("hallucination", "task-completion", "step-efficiency"):
                                assert scorer in result.stdout
    finally:
        if collector is not None and collector.poll() is None:
            collector.kill()
            collector.wait()
    assert ran == ["pip", "scorers check", "scorers collect", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:" + port + "/v1/traces",
                   "scorers results", "scorers report", "scorers queue", "scorers eval"]
    page = (tmp_path / "traces.html").read_text(encoding="utf-8")
    assert 'class="trace"' in page and "The Eiffel Tower is a landmark in Paris, France." in page
    with SQLiteStore(tmp_path / ".scorers" / "results.sqlite") as store:
        records = store.query(run="traces")
        assert {record.scorer_id: record.score for record in records} == {"hallucination": 0.0, "task-completion": 1.0, "step-efficiency": 1.0}
        assert all(len(record.metadata["trace_id"]) == 32 for record in records)
        assert [record.scorer_id for record in store.query(run="from-file")] == ["hallucination"]
