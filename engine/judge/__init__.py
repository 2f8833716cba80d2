"""The only layer that talks to a provider: judge configuration, the judge protocol, the
provider adapters and the middleware chain around them."""

from __future__ import annotations

from collections.abc import Sequence

from .capabilities import capabilities
from .client import OpenAIJudge
from .config import PROVIDERS, JudgeConfig, Provider, Sampling, StructuredMode, resolve_judge
from .middleware import Chain
from .middleware.tracing import JudgeTracing, tracing_available
from .protocol import (
    AsksJudge,
    CallNext,
    JudgeAnswer,
    JudgeMiddleware,
    JudgeRequest,
    NoJudge,
    TokenUsage,
)


def connect(config: JudgeConfig, middleware: Sequence[JudgeMiddleware] = ()) -> AsksJudge:
    """The judge a scorer calls for `config`: the adapter its provider speaks (OpenAI's API,
    Azure's, or Anthropic's), its calls passing through `middleware` (the first listed sees
    a request first). The provider SDK is imported on the first call."""
    adapter: AsksJudge
    if config.provider_preset().adapter == "anthropic":
        from .anthropic import AnthropicJudge

        adapter = AnthropicJudge(config)
    else:
        adapter = OpenAIJudge(config)
    # With OpenTelemetry installed, every call that reaches the provider is a span (a no-op
    # until the host configures a tracer); it sits innermost, so an answer served by a
    # middleware (a cache) is not traced as a model call.
    chain = [*middleware, JudgeTracing(config)] if tracing_available() else list(middleware)
    return Chain(adapter, chain) if chain else adapter


__all__ = [
    "AsksJudge",
    "CallNext",
    "Chain",
    "JudgeAnswer",
    "JudgeConfig",
    "JudgeMiddleware",
    "JudgeRequest",
    "NoJudge",
    "OpenAIJudge",
    "PROVIDERS",
    "Provider",
    "Sampling",
    "StructuredMode",
    "TokenUsage",
    "capabilities",
    "connect",
    "resolve_judge",
]
