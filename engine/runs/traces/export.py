"""Scores sent back to the app's tracing backend as spans of the scored trace: one span per
score, a child of the scored span (its trace and span ids), with the GenAI conventions'
evaluation attributes and a `gen_ai.evaluation.result` event, exported by the OpenTelemetry
SDK's OTLP/HTTP exporter."""

from __future__ import annotations

from typing import Any

from ...store import ResultRecord


class ScoreExporter:
    """Exports each scored record as a span to `endpoint` (an OTLP/HTTP traces URL)."""

    def __init__(self, endpoint: str, headers: dict[str, str] | None = None) -> None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        self.provider = TracerProvider(resource=Resource.create({"service.name": "llm-scorers"}))
        self.provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint, headers=headers)))
        self.tracer = self.provider.get_tracer("llm-scorers")

    def export(self, record: ResultRecord, passed: bool | None = None) -> None:
        from opentelemetry import trace
        from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

        trace_id, span_id = record.metadata.get("trace_id"), record.metadata.get("span_id")
        if not isinstance(trace_id, str) or not isinstance(span_id, str):
            return
        scored = SpanContext(int(trace_id, 16), int(span_id, 16), is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED))
        attributes: dict[str, Any] = {"gen_ai.operation.name": "evaluation", "gen_ai.evaluation.name": record.scorer_id}
        if record.score is not None:
            attributes["gen_ai.evaluation.score.value"] = record.score
        if passed is not None:
            attributes["gen_ai.evaluation.score.label"] = "pass" if passed else "fail"
        explanation = record.reason or record.error or record.not_scorable
        if explanation:
            attributes["gen_ai.evaluation.explanation"] = explanation
        span = self.tracer.start_span(f"evaluation {record.scorer_id}", context=trace.set_span_in_context(NonRecordingSpan(scored)), attributes=attributes)
        span.add_event("gen_ai.evaluation.result", attributes=attributes)
        if record.error is not None:
            span.set_status(trace.Status(trace.StatusCode.ERROR, record.error))
        span.end()

    def close(self) -> None:
        self.provider.force_flush()
        self.provider.shutdown()
