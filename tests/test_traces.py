"""Scoring the traces an app exports: a real app, instrumented by OpenInference and by
OpenTelemetry's own OpenAI instrumentation, exports over OTLP/HTTP to the receiver on
127.0.0.1; its spans become items by the catalog's `traces:` section and are scored by the
live scorer into the store, with their trace and span ids."""

from __future__ import annotations

import gzip
import json
import logging
import subprocess
import sys
import threading
import time
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.scripted import script_hallucination
from helpers.traces import ANSWER, FIXTURES, collector_for, stored, traces_catalog

from engine import ConfigError, load_scorers
from engine.runs.traces import TraceCollector
from engine.runs.traces.otlp import decode_request, read_file_exporter
from engine.runs.traces.receiver import TraceReceiver
from engine.testing import JudgeServer

HELPERS = Path(__file__).parent / "helpers"


def run_app(convention: str, endpoint: str, judge: JudgeServer, *extra: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, str(HELPERS / "instrumented_app.py"), convention, endpoint, judge.base_url, "Where is the Eiffel Tower?", *extra],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.split()


@pytest.mark.slow
@pytest.mark.parametrize("convention", ["openinference", "genai"])
def test_an_instrumented_app_exporting_to_the_receiver_gets_its_spans_scored(convention: str, judge: JudgeServer, tmp_path: Path) -> None:
    judge.on(None, ANSWER)
    script_hallucination(judge)
    receiver = TraceReceiver(collector_for(traces_catalog(tmp_path, convention), tmp_path), port=0).start()
    try:
        (trace_id,) = run_app(convention, receiver.endpoint, judge)
        deadline = time.monotonic() + 30
        while receiver.collector.stats.traces < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        assert receiver.stop(timeout=30)
    records = {record.scorer_id: record for record in stored(tmp_path)}
    assert set(records) == {"hallucination", "used-no-tools"}
    llm, agent = records["hallucination"], records["used-no-tools"]
    # The LLM span: its answer judged against the documents its sibling retrieval span returned.
    assert llm.output == ANSWER and llm.input == "Where is the Eiffel Tower?"
    assert llm.context == ["The Eiffel Tower is in Paris.", "It was finished in 1889."]
    assert llm.score == 0.0 and llm.error is None
    assert llm.metadata["trace_id"] == trace_id and len(llm.metadata["span_id"]) == 16
    # The whole run: the tool span is a tool call, so "used no tools" says 0.
    assert agent.score == 0.0 and agent.metadata["trace_id"] == trace_id and agent.metadata["span_kind"] == "agent"
    tree = agent.metadata["trace"]
    assert [node["name"] for node in tree] == ["agent"]
    assert {child["kind"] for child in tree[0]["children"]} == {"retrieval", "tool", "llm"}
    assert collector_spool_count(tmp_path) == 0  # every span scored has left the spool


def collector_spool_count(tmp_path: Path) -> int:
    from engine.runs.traces.spool import Spool

    spool = Spool(tmp_path / "spool.sqlite")
    try:
        return spool.count()
    finally:
        spool.close()


DOCUMENTS = ["The Eiffel Tower is in Paris.", "It was finished in 1889."]
LANDMARK = '{"tool": "lookup_landmark", "result": {"city": "Paris", "finished": 1889, "name": "Eiffel Tower"}}'


@pytest.mark.parametrize(
    ("convention", "llm_items", "contexts", "tools"),
    [
        ("openinference", [ANSWER], [DOCUMENTS], ["lookup_weather"]),
        ("genai", [ANSWER], [DOCUMENTS], ["lookup_weather"]),
        # The AI SDK: a call that asks for the tool, then one given its result (its context).
        ("vercel", [None, ANSWER], [None, [LANDMARK]], ["lookup_landmark"]),
    ],
)
def test_each_preset_maps_the_spans_of_its_convention(convention: str, llm_items: list[Any], contexts: list[Any], tools: list[str], tmp_path: Path) -> None:
    from engine.runs.traces import TraceReader, group_by_trace, read_file_exporter

    spec = load_scorers(traces_catalog(tmp_path, convention)).traces
    assert spec is not None
    (spans,) = group_by_trace(read_file_exporter(FIXTURES / f"{convention}.otlp.jsonl")).values()
    mapped = TraceReader(spec).items(spans)
    assert mapped.notes == []
    llm = [item.given for item in mapped.items if item.kind == "llm"]
    (agent,) = [item.given for item in mapped.items if item.kind == "agent"]
    # A text answer, or (None here) an LLM span that only asked for a tool: its tool call is its output.
    assert [given.output if isinstance(given.output, str) else None for given in llm] == llm_items
    assert [given.context for given in llm] == contexts
    assert [message["tool_calls"][0]["function"]["name"] for message in agent.output if message.get("tool_calls")] == tools
    assert agent.output[-1]["role"] == "assistant" and agent.output[-1]["content"]
    assert agent.input


def test_a_span_that_does_not_fit_gets_a_note_naming_it_and_the_attribute(tmp_path: Path) -> None:
    from engine.runs.traces import TraceReader, group_by_trace, read_file_exporter

    spec = load_scorers(traces_catalog(tmp_path, "openinference")).traces
    assert spec is not None
    (spans,) = group_by_trace(read_file_exporter(FIXTURES / "openinference.otlp.jsonl")).values()
    # The same LLM span, exported without its output messages.
    stripped = [span if span.name != "ChatCompletion" else replace(span, attributes={
        key: value for key, value in span.attributes.items() if not key.startswith("llm.output_messages")}) for span in spans]
    mapped = TraceReader(spec).items(stripped)
    assert [item.kind for item in mapped.items] == ["agent"]
    (note,) = mapped.notes
    assert "'ChatCompletion'" in str(note) and 'llm.output_messages' in str(note) and "no output" in str(note)


def test_a_traces_section_is_checked_at_its_line(tmp_path: Path) -> None:
    path = traces_catalog(tmp_path, "openinference", "")
    path.write_text(path.read_text().replace("used-no-tools", "used-no-tool"), encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_scorers(path)
    assert raised.value.line == 7 and "unknown scorer 'used-no-tool'" in str(raised.value) and "used-no-tools" in str(raised.value)
    path.write_text(traces_catalog(tmp_path, "openinference").read_text() + "    fields:\n      output: 'attributes.[['\n", encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_scorers(path)
    assert raised.value.line == 9 and "traces.agent.fields.output: not a JMESPath expression" in str(raised.value)


def post(endpoint: str, body: bytes, content_type: str, **headers: str) -> httpx.Response:
    return httpx.post(endpoint, content=body, headers={"content-type": content_type, **headers}, timeout=10)


def test_json_and_gzip_bodies_are_taken_and_a_bad_body_is_refused_in_one_line(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    receiver = TraceReceiver(collector_for(traces_catalog(tmp_path, "openinference"), tmp_path), port=0).start()
    line = (FIXTURES / "openinference.otlp.jsonl").read_bytes().splitlines()[0]
    try:
        answered = post(receiver.endpoint, gzip.compress(line), "application/json", **{"content-encoding": "gzip"})
        assert answered.status_code == 200 and answered.json() == {}
        refused = post(receiver.endpoint, b"\x00garbage", "application/x-protobuf")
        assert refused.status_code == 400 and "not an OTLP trace export" in refused.text
        assert receiver.collector.stats.spans == 4
    finally:
        assert receiver.stop(timeout=30)


def test_bound_elsewhere_it_asks_for_a_token(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    collector = collector_for(traces_catalog(tmp_path, "openinference"), tmp_path)
    with pytest.raises(ConfigError, match="give --token"):
        TraceReceiver(collector, host="0.0.0.0", port=0)
    receiver = TraceReceiver(collector, host="0.0.0.0", port=0, token="s3cret").start()
    try:
        line = (FIXTURES / "openinference.otlp.jsonl").read_bytes().splitlines()[0]
        endpoint = f"http://127.0.0.1:{receiver.port}/v1/traces"
        assert post(endpoint, line, "application/json").status_code == 401
        assert post(endpoint, line, "application/json", authorization="Bearer wrong").status_code == 401
        assert post(endpoint, line, "application/json", authorization="Bearer s3cret").status_code == 200
    finally:
        assert receiver.stop(timeout=30)


def test_what_was_accepted_is_scored_after_a_restart(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    catalog = traces_catalog(tmp_path, "openinference")
    line = (FIXTURES / "openinference.otlp.jsonl").read_bytes().splitlines()[0]
    first = collector_for(catalog, tmp_path)  # accepts, and stops before it scores anything
    first.accept(decode_request(line, "application/json"))
    first.spool.close()
    first.live.close(0)
    assert stored(tmp_path) == []
    second = collector_for(catalog, tmp_path)
    assert second.stats.spans == 4
    assert second.flush(timeout=30)
    second.close()
    assert sorted(record.scorer_id for record in stored(tmp_path)) == ["hallucination", "used-no-tools"]
    third = collector_for(catalog, tmp_path)  # nothing left over: nothing scored twice
    assert third.stats.spans == 0
    third.close()


def test_a_full_queue_sheds_whole_traces_by_trace_id_and_says_so(judge: JudgeServer, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    collector = collector_for(traces_catalog(tmp_path, "openinference"), tmp_path, max_pending=4)
    line = json.loads((FIXTURES / "openinference.otlp.jsonl").read_text().splitlines()[0])
    spans = decode_request(json.dumps(line).encode(), "application/json")
    try:
        assert collector.accept(spans) == 0  # the first trace fits
        shed = 0
        for index in range(40):  # the same trace's shape under other trace ids
            other = [replace(span, trace_id=f"{index:032x}") for span in spans]
            shed += collector.accept(other)
        assert shed % 4 == 0 and 0 < shed < 160  # whole traces, some kept by their sample point
        assert collector.stats.shed == shed
        assert "spans shed so far (traces sampled by trace id)" in caplog.text
        # The same trace ids are kept on a replay: the rule is the hash of the trace id.
        kept = set(collector.waiting())
        assert len(kept) == 1 + (160 - shed) // 4
    finally:
        collector.close(timeout=0)


def test_scores_are_sent_back_as_spans_of_the_scored_trace(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    received: list[Any] = []

    class Backend(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802
            received.extend(decode_request(self.rfile.read(int(self.headers["content-length"])), self.headers["content-type"]))
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

    backend = ThreadingHTTPServer(("127.0.0.1", 0), Backend)
    threading.Thread(target=backend.serve_forever, daemon=True).start()
    catalog = traces_catalog(tmp_path, "openinference", f"  export: http://127.0.0.1:{backend.server_address[1]}/v1/traces\n")
    collector = collector_for(catalog, tmp_path)
    line = (FIXTURES / "openinference.otlp.jsonl").read_bytes().splitlines()[0]
    spans = decode_request(line, "application/json")
    collector.accept(spans)
    assert collector.flush(timeout=30)
    collector.close()
    backend.shutdown()
    by_name = {span.name: span for span in received}
    llm_span = next(span for span in spans if span.name == "ChatCompletion")
    evaluation = by_name["evaluation hallucination"]
    assert evaluation.trace_id == llm_span.trace_id and evaluation.parent_id == llm_span.span_id
    assert evaluation.attributes["gen_ai.evaluation.name"] == "hallucination" and evaluation.attributes["gen_ai.evaluation.score.value"] == 0.0
    assert [event.name for event in evaluation.events] == ["gen_ai.evaluation.result"]


def score_fixture(collector: TraceCollector, convention: str = "openinference") -> None:
    collector.accept(list(read_file_exporter(FIXTURES / f"{convention}.otlp.jsonl")))
    assert collector.flush(timeout=30)
    collector.close()


def test_where_keeps_only_the_spans_of_the_service_named(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    elsewhere = collector_for(traces_catalog(tmp_path, "openinference", "  where:\n    service.name: checkout\n"), tmp_path)
    score_fixture(elsewhere)
    assert stored(tmp_path) == [] and elsewhere.stats.traces == 1 and elsewhere.stats.notes == 0
    (tmp_path / "here").mkdir()
    here = collector_for(traces_catalog(tmp_path / "here", "openinference", "  where:\n    service.name: demo-openinference\n"), tmp_path / "here")
    score_fixture(here)
    assert len(stored(tmp_path / "here")) == 2


def test_a_budget_stops_judge_calls_and_says_so_in_the_record(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    score_fixture(collector_for(traces_catalog(tmp_path, "openinference"), tmp_path, live={"max_cost": 1e-9}))
    records = {record.scorer_id: record for record in stored(tmp_path)}
    assert records["used-no-tools"].score == 0.0  # no judge: nothing to spend
    assert records["hallucination"].score is None and "budget of $1e-09" in (records["hallucination"].error or "")
    assert judge.requests_for("Claims") == []


def test_the_catalogs_monitors_watch_the_scores_of_traces(judge: JudgeServer, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    script_hallucination(judge)
    monitors = "monitors:\n  tools_used:\n    scorer: used-no-tools\n    statistic: mean\n    below: 0.5\n    window: 10\n    min_samples: 1\n    alert:\n      - log: warning\n"
    catalog = traces_catalog(tmp_path, "openinference")
    catalog.write_text(catalog.read_text() + monitors, encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="engine.monitors"):
        score_fixture(collector_for(catalog, tmp_path))
    assert any("tools_used" in record.getMessage() for record in caplog.records if record.name == "engine.monitors")


def test_the_exporter_is_told_what_was_shed_in_otlps_partial_success(judge: JudgeServer, tmp_path: Path) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

    from engine.runs.traces.otlp import request_from_json

    receiver = TraceReceiver(collector_for(traces_catalog(tmp_path, "openinference"), tmp_path, max_pending=4, settle=3600), port=0).start()
    template = json.loads((FIXTURES / "openinference.otlp.jsonl").read_text().splitlines()[0])
    try:
        shed = 0
        for index in range(20):
            request = json.loads(json.dumps(template).replace(template["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"], f"{index:032x}"))
            answered = post(receiver.endpoint, request_from_json(request).SerializeToString(), "application/x-protobuf")
            assert answered.status_code == 200 and answered.headers["content-type"] == "application/x-protobuf"
            response = ExportTraceServiceResponse()
            response.ParseFromString(answered.content)
            shed += response.partial_success.rejected_spans
            if response.partial_success.rejected_spans:
                assert "not scored: the scorer is behind" in response.partial_success.error_message
        assert shed > 0 and shed == receiver.collector.stats.shed
    finally:
        receiver.stop(timeout=0)


def test_an_llm_span_exported_without_its_messages_is_named_with_the_switch_that_adds_them(tmp_path: Path) -> None:
    """OpenTelemetry's OpenAI instrumentation as it is by default: the span has no content."""
    from engine.runs.traces import TraceReader, group_by_trace

    spec = load_scorers(traces_catalog(tmp_path, "genai")).traces
    assert spec is not None
    (spans,) = group_by_trace(read_file_exporter(FIXTURES / "genai-no-content.otlp.jsonl")).values()
    mapped = TraceReader(spec).items(spans)
    assert [item.kind for item in mapped.items] == ["agent"]  # the whole run still is an item
    (note,) = mapped.notes
    assert str(note).startswith("span 'chat gpt-4o-mini' (") and "an llm span with no output" in str(note)
    assert 'attributes."gen_ai.output.messages"' in str(note) and "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY" in str(note)


def test_collect_says_in_one_line_what_is_missing(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from engine.cli import app

    runner = CliRunner()
    plain = tmp_path / "plain.yaml"
    plain.write_text("scorers: {}\n", encoding="utf-8")
    refused = runner.invoke(app, ["collect", str(plain), "--port", "0", "--store", str(tmp_path / "s.sqlite")])
    assert refused.exit_code == 2 and "the catalog has no `traces:` section" in refused.stderr and "Traceback" not in refused.output
    exposed = runner.invoke(app, ["collect", str(traces_catalog(tmp_path, "openinference")), "--host", "0.0.0.0", "--port", "0", "--store", str(tmp_path / "s.sqlite")])
    assert exposed.exit_code == 2 and "give --token" in exposed.stderr and len(exposed.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "s.sqlite").exists() and not (tmp_path / "traces-spool.sqlite").exists()  # refused before anything was opened
