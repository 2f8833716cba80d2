"""The only layer that talks to a provider: judge configuration, the judge protocol, the
provider adapters and the middleware chain around them."""

from __future__ import annotations

from collections.abc import Sequence

from .client import OpenAIJudge
from .config import JudgeConfig, Sampling, StructuredMode, resolve_judge
from .middleware import Chain
from .middleware.cache import CacheStats, ResponseCache, default_cache_path
from .middleware.limiter import LimiterStats, RateLimit, throttling
from .protocol import (
    AsksJudge,
    CallNext,
    JudgeAnswer,
    JudgeMiddleware,
    JudgeRequest,
    NoJudge,
    TokenUsage,
)


def connect(config: JudgeConfig, middleware: Sequence[JudgeMiddleware] = (), *, cache: ResponseCache | None = None) -> AsksJudge:
    """The judge a scorer calls for `config`: the provider's client behind the process's rate
    limiter of the model, its calls passing through `middleware` (the first listed sees a
    request first), and `cache` in front of all, so a cached answer waits for no limit. The
    provider SDK is imported on the first call."""
    limit = RateLimit(config)
    judge: AsksJudge = Chain(OpenAIJudge(config, observe_responses=limit.observe), [*middleware, limit])
    return cache.wrap(judge) if cache is not None else judge


__all__ = [
    "AsksJudge",
    "CacheStats",
    "CallNext",
    "Chain",
    "JudgeAnswer",
    "JudgeConfig",
    "JudgeMiddleware",
    "JudgeRequest",
    "LimiterStats",
    "NoJudge",
    "OpenAIJudge",
    "RateLimit",
    "ResponseCache",
    "Sampling",
    "StructuredMode",
    "TokenUsage",
    "connect",
    "default_cache_path",
    "resolve_judge",
    "throttling",
]
