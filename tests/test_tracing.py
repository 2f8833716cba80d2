"""Tracing: each scorer run is a span with one child span per judge call, carrying the
GenAI semantic-convention attributes; content only on opt-in; live scoring continues the
agent's trace."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from engine import JudgeServerError, LiveScorer, create_hallucination_scorer
from helpers.scripted import verdicts_on_claims
from engine.testing import JudgeServer, Reply

FAST_RETRY = {"retry-after-ms": "10"}  # the SDKs wait this long before a retry
CONTEXT = ["Paris is the capital of France."]
_exporter = InMemorySpanExporter()


@pytest.fixture(scope="module", autouse=True)
def _tracer_provider() -> None:
    """The host's tracer provider (OpenTelemetry lets a process set it once)."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_exporter))
        trace.set_tracer_provider(provider)


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    _exporter.clear()
    yield _exporter
    _exporter.clear()


def script(judge: JudgeServer) -> None:
    judge.on("Claims", {"claims": ["Paris is the capital of France."]})
    judge.on("HallucinationVerdicts", verdicts_on_claims("no", "stated"))
    judge.on("Reason", {"reason": "All claims are supported."})


def by_name(exporter: InMemorySpanExporter) -> dict[str, list[ReadableSpan]]:
    found: dict[str, list[ReadableSpan]] = {}
    for span in exporter.get_finished_spans():
        found.setdefault(span.name, []).append(span)
    return found


def test_a_scorer_run_is_a_span_with_a_child_per_judge_call(judge: JudgeServer, spans: InMemorySpanExporter) -> None:
    script(judge)
    result = create_hallucination_scorer(options={"context": CONTEXT}).run(output="Paris.", run_id="run-7")
    named = by_name(spans)
    (run,) = named["score hallucination"]
    calls = named["chat gpt-4o-mini"]
    assert len(calls) == 3
    assert run.attributes is not None and run.attributes["scorers.run.id"] == "run-7"
    assert run.attributes["scorers.score"] == result.score == 0
    assert run.attributes["gen_ai.request.model"] == "openai/gpt-4o-mini"
    for call in calls:
        assert call.parent is not None and call.parent.span_id == run.context.span_id
        assert call.kind == trace.SpanKind.CLIENT
        attributes = call.attributes or {}
        assert attributes["gen_ai.operation.name"] == "chat"
        assert attributes["gen_ai.system"] == "openai"
        assert attributes["gen_ai.request.model"] == "gpt-4o-mini"
        assert attributes["gen_ai.usage.input_tokens"] == 50 and attributes["gen_ai.usage.output_tokens"] == 10
    assert {(call.attributes or {})["scorers.step.id"] for call in calls} == {"preprocess", "analyze", "generate_reason"}
    # No prompts, outputs or reasons unless the host opts in.
    recorded = [key for span in spans.get_finished_spans() for key in (span.attributes or {})]
    assert not any(key in ("gen_ai.input.messages", "gen_ai.output.messages", "scorers.reason") for key in recorded)


def test_content_is_recorded_only_on_opt_in(judge: JudgeServer, spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    script(judge)
    create_hallucination_scorer(options={"context": CONTEXT}).run(output="Paris is lovely.")
    named = by_name(spans)
    assert "Paris is lovely." in str((named["chat gpt-4o-mini"][0].attributes or {})["gen_ai.input.messages"])
    assert (named["score hallucination"][0].attributes or {})["scorers.reason"] == "All claims are supported."


def test_a_failed_judge_call_marks_its_spans(judge: JudgeServer, spans: InMemorySpanExporter) -> None:
    script(judge)
    judge.on("Claims", Reply.fail(500, "down", headers=FAST_RETRY))
    with pytest.raises(JudgeServerError):
        create_hallucination_scorer(options={"context": CONTEXT}).run(output="x")
    named = by_name(spans)
    call = named["chat gpt-4o-mini"][0]
    assert call.status.status_code == trace.StatusCode.ERROR
    assert (call.attributes or {})["error.type"] == "JudgeServerError"
    assert named["score hallucination"][0].status.status_code == trace.StatusCode.ERROR


def test_live_scoring_continues_the_agents_trace(judge: JudgeServer, spans: InMemorySpanExporter) -> None:
    script(judge)
    tracer = trace.get_tracer("host-agent")
    live = LiveScorer([create_hallucination_scorer(options={"context": CONTEXT})], flush_at_exit=0)

    @live
    def agent(question: str) -> str:
        return "Paris is the capital."

    with tracer.start_as_current_span("agent turn") as turn:
        agent("What is the capital of France?")
    assert live.flush(timeout=20)
    live.close()
    (run,) = by_name(spans)["score hallucination"]
    assert run.context.trace_id == turn.get_span_context().trace_id
    assert run.parent is not None and run.parent.span_id == turn.get_span_context().span_id


HOST_SETS_ITS_PROVIDER_LATE = """
import os
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from engine import create_hallucination_scorer
from engine.testing import JudgeServer

judge = JudgeServer().start()
judge.on("Claims", {"claims": ["Paris is the capital of France."]})
judge.on("HallucinationVerdicts", {"verdicts": [{"statement": "Paris is the capital of France.", "verdict": "no", "reason": "stated"}]})
judge.on("Reason", {"reason": "All claims are supported."})
os.environ.update(OPENAI_BASE_URL=judge.base_url, OPENAI_API_KEY="test")
scorer = create_hallucination_scorer(options={"context": ["Paris is the capital of France."]})
assert scorer.run(output="Paris.").score == 0  # no provider yet: no span, no error
exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
scorer.run(output="Paris.")
print(sorted(span.name for span in exporter.get_finished_spans()))
judge.stop()
"""


def test_a_scorer_made_before_the_host_sets_its_provider_is_traced_once_it_is_set() -> None:
    # A process sets its provider once, so this runs in a process of its own.
    finished = subprocess.run([sys.executable, "-c", HOST_SETS_ITS_PROVIDER_LATE], capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.strip() == str(sorted(["score hallucination", *["chat gpt-4o-mini"] * 3]))
