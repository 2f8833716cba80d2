"""The only layer that talks to a provider: judge configuration, the judge protocol, the
provider adapters and the middleware chain around them."""

from __future__ import annotations

from collections.abc import Sequence

from .client import OpenAIJudge
from .config import JudgeConfig, Sampling, StructuredMode, resolve_judge
from .middleware import Chain
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
    """The judge a scorer calls for `config`, its calls passing through `middleware` (the
    first listed sees a request first). The provider SDK is imported on the first call."""
    judge = OpenAIJudge(config)
    return Chain(judge, middleware) if middleware else judge


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
    "Sampling",
    "StructuredMode",
    "TokenUsage",
    "connect",
    "resolve_judge",
]
