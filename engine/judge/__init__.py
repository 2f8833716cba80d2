"""The only layer that talks to a provider: judge configuration, the judge protocol, the
provider adapters and the middleware chain around them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import ConfigError
from ..lazy import lazy_exports

if TYPE_CHECKING:  # read on first use (PEP 562): compiling a catalog needs the settings and the protocol, not the client
    from .capabilities import capabilities
    from .client import OpenAIJudge
    from .config import (
        PROVIDERS,
        JudgeConfig,
        Provider,
        Sampling,
        StructuredMode,
    )
    from .middleware import Chain
    from .middleware.breaker import CircuitBreaker
    from .middleware.cache import ResponseCache, default_cache_location
    from .middleware.cache_storage import CacheStats
    from .middleware.limiter import LimiterStats, RateLimit, throttling
    from .settings import AGGREGATIONS, Aggregation, JudgeSettings, resolve_judge
    from .protocol import (
        AsksJudge,
        FieldProbabilities,
        CallNext,
        JudgeAnswer,
        JudgeMiddleware,
        JudgeRequest,
        NoJudge,
        TokenUsage,
    )

_LAZY_EXPORTS: dict[str, str] = {
    "capabilities": ".capabilities",
    "OpenAIJudge": ".client",
    **dict.fromkeys(["PROVIDERS", "JudgeConfig", "Provider", "Sampling", "StructuredMode"], ".config"),
    "Chain": ".middleware",
    "CircuitBreaker": ".middleware.breaker",
    "ResponseCache": ".middleware.cache",
    "default_cache_location": ".middleware.cache",
    "CacheStats": ".middleware.cache_storage",
    **dict.fromkeys(["LimiterStats", "RateLimit", "throttling"], ".middleware.limiter"),
    **dict.fromkeys(["AGGREGATIONS", "Aggregation", "JudgeSettings", "resolve_judge"], ".settings"),
    **dict.fromkeys(["AsksJudge", "FieldProbabilities", "CallNext", "JudgeAnswer", "JudgeMiddleware", "JudgeRequest", "NoJudge", "TokenUsage"], ".protocol"),
}
__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY_EXPORTS)


def connect(config: JudgeConfig, middleware: Sequence[JudgeMiddleware] = (), *, cache: ResponseCache | None = None) -> AsksJudge:
    """The judge a scorer calls for `config`: the adapter its provider speaks (OpenAI's API,
    Azure's, or Anthropic's), behind the process's rate limiter of the model, its calls
    passing through the sharing of identical requests in flight, then `middleware` (the first
    listed sees a request first), then the tracing
    (when OpenTelemetry is installed) and, innermost, the circuit breaker that makes a judge
    that cannot answer fail fast; `cache` stands in front of all, so a cached answer waits
    for no limit. The provider SDK is imported on the first call."""
    from .client import OpenAIJudge
    from .config import NO_KEY
    from .middleware import Chain
    from .middleware.breaker import CircuitBreaker
    from .middleware.limiter import RateLimit
    from .middleware.shared import SharedRequests
    from .middleware.tracing import JudgeTracing, tracing_available
    from ..scrub import install_log_filter, remember_secret

    try:  # whatever the provider, its key is masked in every log record from now on
        _, key = config.endpoint()
        if key != NO_KEY:
            remember_secret(key)
    except ConfigError:
        pass  # no key: the caller reports that itself
    install_log_filter()
    limit = RateLimit(config)
    adapter: AsksJudge
    if config.provider_preset().adapter == "anthropic":
        from .anthropic import AnthropicJudge

        adapter = AnthropicJudge(config, observe_responses=limit.observe)
    else:
        adapter = OpenAIJudge(config, observe_responses=limit.observe)
    # With OpenTelemetry installed, every call that reaches the provider is a span (a no-op
    # until the host configures a tracer); it sits inside the host's middleware and the
    # limiter, so an answer served by a middleware (a cache) is not traced as a model call,
    # and the time a call waits for the limiter is not counted as the model's.
    # Identical requests in flight at once (several scorers of one item asking the same
    # question) are sent once, before anything else is spent on them.
    chain = [SharedRequests(config.identity()), *middleware, limit, *([JudgeTracing(config)] if tracing_available() else [])]
    judge: AsksJudge = Chain(adapter, [*chain, CircuitBreaker(f"{config.model} at {config.where()}")])
    return cache.wrap(judge) if cache is not None else judge


__all__ = [
    "AGGREGATIONS",
    "Aggregation",
    "AsksJudge",
    "CacheStats",
    "CallNext",
    "Chain",
    "CircuitBreaker",
    "FieldProbabilities",
    "JudgeAnswer",
    "JudgeConfig",
    "JudgeMiddleware",
    "JudgeRequest",
    "JudgeSettings",
    "LimiterStats",
    "NoJudge",
    "OpenAIJudge",
    "RateLimit",
    "ResponseCache",
    "PROVIDERS",
    "Provider",
    "Sampling",
    "StructuredMode",
    "TokenUsage",
    "capabilities",
    "connect",
    "default_cache_location",
    "resolve_judge",
    "throttling",
]
