"""The only layer that talks to a provider: judge configuration, the judge protocol, the
provider adapters and the middleware chain around them."""

from __future__ import annotations

from .client import OpenAIJudge
from .config import JudgeConfig, Sampling, StructuredMode, resolve_judge
from .middleware import Chain
from .middleware.breaker import CircuitBreaker
from .protocol import AsksJudge, CallNext, JudgeAnswer, JudgeMiddleware, JudgeRequest, TokenUsage
from .secrets import install_log_filter, scrub


def connect(config: JudgeConfig) -> AsksJudge:
    """The judge a scorer calls for `config`, behind its middleware. The provider SDK is
    imported on the first call."""
    judge = OpenAIJudge(config)
    return Chain(judge, [CircuitBreaker(f"{config.model} at {config.address()}")])


__all__ = [
    "AsksJudge",
    "CallNext",
    "Chain",
    "CircuitBreaker",
    "JudgeAnswer",
    "JudgeConfig",
    "JudgeMiddleware",
    "JudgeRequest",
    "OpenAIJudge",
    "Sampling",
    "StructuredMode",
    "TokenUsage",
    "connect",
    "install_log_filter",
    "resolve_judge",
    "scrub",
]
