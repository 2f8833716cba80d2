"""The only layer that talks to a provider: judge configuration, the judge protocol, the
provider adapters and the middleware chain around them."""

from __future__ import annotations

from .client import OpenAIJudge
from .config import JudgeConfig, Sampling, StructuredMode, resolve_judge
from .middleware import Chain
from .protocol import AsksJudge, CallNext, JudgeAnswer, JudgeMiddleware, JudgeRequest, NoJudge, TokenUsage


def connect(config: JudgeConfig) -> AsksJudge:
    """The judge a scorer calls for `config`. The provider SDK is imported on the first call."""
    return OpenAIJudge(config)


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
