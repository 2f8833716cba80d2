"""The only layer that talks to a provider: judge configuration, the judge protocol, the
provider adapters and the middleware chain around them."""

from __future__ import annotations

from collections.abc import Sequence

from .capabilities import capabilities
from .client import OpenAIJudge
from ..errors import ConfigError
from .config import NO_KEY, PROVIDERS, JudgeConfig, Provider, Sampling, StructuredMode, resolve_judge
from .middleware import Chain
from .middleware.breaker import CircuitBreaker
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
from .secrets import install_log_filter, remember_secret, scrub


def connect(config: JudgeConfig, middleware: Sequence[JudgeMiddleware] = ()) -> AsksJudge:
    """The judge a scorer calls for `config`: the adapter its provider speaks (OpenAI's API,
    Azure's, or Anthropic's), its calls passing through `middleware` (the first listed sees
    a request first), then the tracing (when OpenTelemetry is installed) and, innermost, the
    circuit breaker that makes a judge that cannot answer fail fast. The provider SDK is
    imported on the first call."""
    try:  # whatever the provider, its key is masked in every log record from now on
        _, key = config.endpoint()
        if key != NO_KEY:
            remember_secret(key)
    except ConfigError:
        pass  # no key: the caller reports that itself
    install_log_filter()
    adapter: AsksJudge
    if config.provider_preset().adapter == "anthropic":
        from .anthropic import AnthropicJudge

        adapter = AnthropicJudge(config)
    else:
        adapter = OpenAIJudge(config)
    # With OpenTelemetry installed, every call that reaches the provider is a span (a no-op
    # until the host configures a tracer); it sits inside the host's middleware, so an
    # answer served by one (a cache) is not traced as a model call.
    chain = [*middleware, JudgeTracing(config)] if tracing_available() else list(middleware)
    return Chain(adapter, [*chain, CircuitBreaker(f"{config.model} at {config.where()}")])


__all__ = [
    "AsksJudge",
    "CallNext",
    "Chain",
    "CircuitBreaker",
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
    "install_log_filter",
    "resolve_judge",
    "scrub",
]
