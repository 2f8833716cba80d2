"""An app in another language: a Node app traced with the OpenTelemetry JS SDK, its OpenAI SDK
calls instrumented by OpenInference's JS instrumentation, exporting over OTLP/HTTP (protobuf)
to the receiver, which scores its spans as it scores a Python app's. The test installs the
app's npm packages itself (tests/helpers/node_app/package.json); it is skipped only where
`node` and `npm` are not installed."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
from helpers.scripted import script_hallucination
from helpers.traces import ANSWER, collector_for, stored, traces_catalog

from engine.runs.traces.receiver import TraceReceiver
from engine.testing import JudgeServer

APP = Path(__file__).parent / "helpers" / "node_app"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None, reason="node and npm are not installed"),
]


@pytest.fixture(scope="module")
def node_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The app with its npm packages installed (once per test run)."""
    folder = tmp_path_factory.mktemp("node_app")
    for name in ("package.json", "app.js"):
        shutil.copy(APP / name, folder / name)
    installed = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"], cwd=folder, capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stderr[-3000:]
    return folder


def test_a_node_app_exporting_with_the_opentelemetry_js_sdk_gets_its_spans_scored(node_app: Path, judge: JudgeServer, tmp_path: Path) -> None:
    judge.on(None, ANSWER)
    script_hallucination(judge)
    receiver = TraceReceiver(collector_for(traces_catalog(tmp_path, "openinference"), tmp_path), port=0).start()
    try:
        done = subprocess.run(["node", "app.js", receiver.endpoint, judge.base_url, "Where is the Eiffel Tower?"], cwd=node_app,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-3000:]
        trace_id = done.stdout.split()[0]
        deadline = time.monotonic() + 30
        while receiver.collector.stats.traces < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        assert receiver.stop(timeout=30)
    records = {record.scorer_id: record for record in stored(tmp_path)}
    assert set(records) == {"hallucination", "used-no-tools"}
    llm = records["hallucination"]
    assert llm.output == ANSWER and llm.input == "Where is the Eiffel Tower?" and llm.metadata["trace_id"] == trace_id
    assert llm.context == ["The Eiffel Tower is in Paris.", "It was finished in 1889."] and llm.score == 0.0
    assert records["used-no-tools"].score == 0.0  # the tool span is the run's tool call
    assert records["used-no-tools"].metadata["service.name"] == "demo-node"
