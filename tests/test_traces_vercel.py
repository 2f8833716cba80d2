"""The Vercel AI SDK's own telemetry: a Node app calls a model with `generateText` and one tool,
`experimental_telemetry` on, traced by the OpenTelemetry JS SDK and exported over OTLP/HTTP
(protobuf) to the receiver; the `vercel` preset makes its `ai.*` spans items, scored and stored
as a Python app's are. The test installs the app's npm packages itself
(tests/helpers/vercel_app/package.json); it is skipped only where `node` and `npm` are not
installed."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from helpers.record_trace_fixtures import VERCEL_APP, install_node_app, script_landmark_lookup
from helpers.scripted import script_hallucination
from helpers.traces import ANSWER, collector_for, stored, traces_catalog

from engine.runs.traces.receiver import TraceReceiver
from engine.testing import JudgeServer

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None, reason="node and npm are not installed"),
]


@pytest.fixture(scope="module")
def vercel_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The app with its npm packages installed (once per test run)."""
    return install_node_app(VERCEL_APP, tmp_path_factory.mktemp("vercel_app"))


def test_a_vercel_ai_sdk_app_gets_its_model_calls_and_its_tool_call_scored(vercel_app: Path, judge: JudgeServer, tmp_path: Path) -> None:
    script_landmark_lookup(judge)
    script_hallucination(judge)
    receiver = TraceReceiver(collector_for(traces_catalog(tmp_path, "vercel"), tmp_path), port=0).start()
    try:
        done = subprocess.run(["node", "app.js", receiver.endpoint, judge.base_url, "Where is the Eiffel Tower?"], cwd=vercel_app,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-3000:]
        assert json.loads(done.stdout) == ANSWER  # the app got the model's answer after its tool call
        deadline = time.monotonic() + 30
        while receiver.collector.stats.traces < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        assert receiver.stop(timeout=30)
    records = stored(tmp_path)
    assert sorted(record.scorer_id for record in records) == ["hallucination", "hallucination", "used-no-tools"]
    asked, answered = sorted((record for record in records if record.scorer_id == "hallucination"), key=lambda record: isinstance(record.output, str))
    # The first model call only asked for the tool: its tool call is its output, and with no
    # tool result yet there is nothing to check its claims against.
    assert asked.input == "Where is the Eiffel Tower?" and asked.metadata["span_name"] == "ai.generateText.doGenerate"
    assert [call["function"] for call in asked.output[0]["tool_calls"]] == [{"name": "lookup_landmark", "arguments": '{"name": "Eiffel Tower"}'}]
    assert asked.score is None and asked.not_scorable is not None and "needs a context" in asked.not_scorable
    # The second was given the tool's result: that is what its answer is checked against.
    assert answered.input == "Where is the Eiffel Tower?" and answered.output == ANSWER and answered.score == 0.0
    assert answered.context == ['{"tool": "lookup_landmark", "result": {"city": "Paris", "finished": 1889, "name": "Eiffel Tower"}}']
    (run,) = [record for record in records if record.scorer_id == "used-no-tools"]
    assert run.metadata["span_name"] == "ai.generateText" and run.metadata["service.name"] == "demo-vercel"
    assert run.input == "Where is the Eiffel Tower?" and run.output[-1] == {"role": "assistant", "content": ANSWER}
    assert run.score == 0.0  # the ai.toolCall span is the run's tool call
    assert len({record.metadata["trace_id"] for record in records}) == 1
