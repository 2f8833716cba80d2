"""Tracing of judge calls: with OpenTelemetry installed (the `[otel]` extra) and a tracer
provider configured by the host, each judge call is a client span carrying the GenAI
semantic-convention attributes (operation, provider, requested model, sampling, token
usage, error type) and the scorer's step id. It is a child of the scorer run's span.

Prompts and answers are recorded only when the host opts in with the convention's variable
OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true. Until the host sets a provider no
span is made at all, so tracing costs next to nothing.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
from typing import Any

from ..config import JudgeConfig
from ..protocol import CallNext, JudgeAnswer, JudgeRequest

TRACER = "llm-scorers"
CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
# The convention's names of the providers that have one.
_SYSTEMS = {"openai": "openai", "anthropic": "anthropic", "azure": "azure.ai.openai", "gemini": "gcp.gemini", "groq": "groq",
            "deepseek": "deepseek", "mistral": "mistral_ai"}


def tracing_available() -> bool:
    """Whether the OpenTelemetry API is installed (without importing it)."""
    return importlib.util.find_spec("opentelemetry") is not None


def active_tracer() -> Any | None:
    """The library's tracer once the host has set a tracer provider; None until then: every
    span would be a no-op, and making one for each call still cost the context switches and
    allocations that showed in the engine's CPU per call."""
    from opentelemetry import trace

    if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return None
    return _tracer()


@functools.cache
def _tracer() -> Any:
    from opentelemetry import trace

    return trace.get_tracer(TRACER)


def capture_content() -> bool:
    return os.environ.get(CAPTURE_CONTENT, "").strip().lower() in ("1", "true", "yes")


class JudgeTracing:
    """One span per judge call of the judge configured by `config`."""

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        self.system = _SYSTEMS.get(config.provider, config.provider)

    async def __call__(self, request: JudgeRequest, call_next: CallNext) -> JudgeAnswer:
        tracer = active_tracer()
        if tracer is None:
            return await call_next(request)
        from opentelemetry.trace import SpanKind, Status, StatusCode

        model = self.config.model_name
        sampling = request.sampling
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": self.system,
            "gen_ai.provider.name": self.system,
            "gen_ai.request.model": model,
            "gen_ai.request.temperature": sampling.temperature,
            "scorers.step.id": request.step,
        }
        if sampling.max_tokens is not None:
            attributes["gen_ai.request.max_tokens"] = sampling.max_tokens
        if request.response_model is not None:
            attributes["gen_ai.output.type"] = "json"
            attributes["scorers.answer_schema"] = request.response_model.__name__
        with tracer.start_as_current_span(f"chat {model}", kind=SpanKind.CLIENT, attributes=attributes, record_exception=False) as span:
            if span.is_recording() and capture_content():
                span.set_attribute("gen_ai.input.messages", json.dumps(request.messages, ensure_ascii=False))
            try:
                answer = await call_next(request)
            except Exception as exc:
                span.set_attribute("error.type", type(exc).__name__)
                span.set_status(Status(StatusCode.ERROR, str(exc)))
                raise
            if answer.usage is not None:
                span.set_attribute("gen_ai.usage.input_tokens", answer.usage.prompt_tokens)
                span.set_attribute("gen_ai.usage.output_tokens", answer.usage.completion_tokens)
                if answer.usage.reasoning_tokens:
                    span.set_attribute("scorers.usage.reasoning_tokens", answer.usage.reasoning_tokens)
            if span.is_recording() and capture_content():
                span.set_attribute("gen_ai.output.messages", _as_text(answer.value))
            return answer


def _as_text(value: Any) -> str:
    if hasattr(value, "model_dump_json"):
        return str(value.model_dump_json())
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
