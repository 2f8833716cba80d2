"""The span of a scorer run (its judge calls are its children), when OpenTelemetry is
installed; nothing at all otherwise. The import is made on the first run, never at load.

Attributes: the scorer's id and definition hash, the run id, the judge, and at the end the
score (the reason only when the host opts in to content capture, as for judge calls).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from ..judge.middleware.tracing import active_tracer, capture_content, tracing_available

_ENABLED = tracing_available()


@contextmanager
def scorer_span(scorer_id: str, scorer_hash: str, run_id: str, model: str) -> Iterator[Any]:
    """A span around one scorer run; yields it (None without OpenTelemetry, or before the
    host has set a tracer provider)."""
    tracer = active_tracer() if _ENABLED else None
    if tracer is None:
        yield None
        return
    from opentelemetry.trace import Status, StatusCode

    attributes = {"scorers.scorer.id": scorer_id, "scorers.scorer.hash": scorer_hash, "scorers.run.id": run_id, "gen_ai.request.model": model}
    with tracer.start_as_current_span(f"score {scorer_id}", attributes=attributes, record_exception=False) as span:
        try:
            yield span
        except Exception as exc:
            span.set_attribute("error.type", type(exc).__name__)
            span.set_status(Status(StatusCode.ERROR, str(exc)))
            raise


def record_score(span: Any, score: float, reason: str | None) -> None:
    if span is None:
        return
    span.set_attribute("scorers.score", score)
    if reason is not None and span.is_recording() and capture_content():
        span.set_attribute("scorers.reason", reason)


def current_trace() -> Any:
    """The caller's trace context (to continue it on another thread), or None."""
    if not _ENABLED:
        return None
    from opentelemetry import context

    return context.get_current()


def within(trace_context: Any) -> Any:
    """A context manager that makes `trace_context` current (from `current_trace`)."""
    if trace_context is None:
        return nullcontext()
    from opentelemetry import context

    @contextmanager
    def attached() -> Iterator[None]:
        token = context.attach(trace_context)
        try:
            yield
        finally:
            context.detach(token)

    return attached()
